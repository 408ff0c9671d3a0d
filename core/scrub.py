"""The one scrubber: secrets leave text as labelled placeholders before it is stored or sent to a model.

Every write path runs its free text through here: the turn record at intake, the prefetch's trigger,
diary notes, events, and every string a transcript adapter lifts out. Each pattern has a label, so a
reader sees what was there (``[REDACTED:openai-key]``) without seeing it. Patterns run in order: the
specific provider keys before the generic assignment rule, so a key keeps its provider's label.

``scrub`` also replaces e-mail addresses and the user's home path (``personal``): a transcript's are
a bystander's. A live turn's (``scrub_secrets``) keep them: an address there is the work's own
(whom to write to), and the runtime names its own paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

HOME_PLACEHOLDER = "~"


def placeholder(label: str) -> str:
    return f"[REDACTED:{label}]"


@dataclass(frozen=True)
class Pattern:
    label: str
    regex: re.Pattern
    keeps_key: bool = False  # the match's ``key`` group (``Bearer ``, ``password=``) stays readable
    triggers: tuple[str, ...] = ()  # lower-case substrings without which the pattern cannot match (a cheap prefilter)

    requires: re.Pattern | None = None  # matches only in a text where this also matches (a secret beside its id)

    def apply(self, text: str, lowered: str | None = None) -> tuple[str, int]:
        lowered = text.lower() if lowered is None else lowered
        if self.triggers and not any(t in lowered for t in self.triggers):
            return text, 0
        if self.requires is not None and not self.requires.search(text):
            return text, 0
        repl = ("\\g<key>" if self.keeps_key else "") + placeholder(self.label)
        return self.regex.subn(repl, text)


# ``total_tokens: 33894`` is a count, not a token: a plural ``tokens`` is no key name
_KEY_NAMES = r"[A-Za-z0-9_]*(?:password|passwd|passphrase|pwd|secret|token(?!s(?:\b|_))|api_?key|access_?key|private_?key)[A-Za-z0-9_]*"

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "private-key",
        # a whole block, or a truncated one (no END line): the BEGIN line and the key body after it
        re.compile(
            r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----(?:.{0,8000}?-----END \1PRIVATE KEY-----|(?:(?:\s|\\n)*[A-Za-z0-9+/=]{16,})*)",
            re.S,
        ),
        triggers=("private key-----",),
    ),
    Pattern("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), triggers=("eyj",)),
    Pattern("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"), triggers=("_live_", "_test_")),
    Pattern("slack-webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+"), triggers=("hooks.slack.com",)),
    Pattern("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), triggers=("hf_",)),
    Pattern("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), triggers=("glpat-",)),
    Pattern("azure-key", re.compile(r"(?P<key>\bAccountKey=)(?!\[REDACTED)[A-Za-z0-9+/]{20,}={0,2}", re.I), keeps_key=True, triggers=("accountkey=",)),
    Pattern(
        "aws-secret-key",
        # a bare 40-character secret is told from any other 40 characters by the access key id beside it
        re.compile(r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[0-9])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        triggers=("akia", "asia"),
        requires=re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ),
    Pattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), triggers=("sk-ant-",)),
    Pattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), triggers=("sk-",)),
    Pattern("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"), triggers=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    Pattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), triggers=("akia", "asia")),
    Pattern("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"), triggers=("xox",)),
    Pattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), triggers=("aiza",)),
    Pattern(
        "bearer-token",
        re.compile(r"(?P<key>\bBearer\s+)(?!\[REDACTED)[A-Za-z0-9._~+/=\-]{8,}", re.I),
        keeps_key=True,
        triggers=("bearer",),
    ),
    Pattern(
        "url-password",
        re.compile(r"(?P<key>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'`]+:)(?!\[REDACTED)[^\s@/\"'`]+(?=@)"),
        keeps_key=True,
        triggers=("://",),
    ),
    Pattern(
        "password-flag",
        re.compile(r"(?P<key>(?<![\w-])--?(?:password|passwd|pass|token|secret|api-key|apikey|access-token)(?:=|\s+))(?!\[REDACTED)(?!-)[^\s\"'`]+", re.I),
        keeps_key=True,
        triggers=("--pass", "-pass", "--token", "--secret", "--api", "--access-token", "-token"),
    ),
    Pattern(
        "email",
        re.compile(r"(?<![\w.%+\-])(?!git@)[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"),
        triggers=("@",),
    ),
    Pattern(
        "password",
        re.compile(
            r"(?P<key>(?P<q>[\"']?)\b" + _KEY_NAMES + r"\b(?P=q)\s*(?::|=|:=)\s*(?P<vq>[\"']?))"
            r"(?!\[REDACTED)(?![\"'])(?!(?:None|null|true|false|undefined)\b)(?![A-Za-z_][\w.]*\()(?!\$)"
            # an unquoted camelCase name is a variable in code (``_csrf_token: csrfToken``), not a literal
            r"(?!(?P=vq)(?<![\"'])(?-i:[a-z]+(?:[A-Z][a-z]+)+)(?![\w\-.]))[^\s\"',;`)}\]]{3,}",
            re.I,
        ),
        keeps_key=True,
        triggers=("pass", "pwd", "secret", "token", "key"),
        # a key name followed by its assignment: prose that only mentions a key ("the key rotation") skips the rule
        requires=re.compile(r"(?:pass|pwd|secret|token|key)\w*[\"']?\s*[:=]", re.I),
    ),
)


def _home_pattern(home: str | None) -> re.Pattern:
    homes = [r"/home/[A-Za-z0-9._\-]+", r"/Users/[A-Za-z0-9._\-]+", r"[A-Za-z]:\\\\?Users\\\\?[A-Za-z0-9._\-]+"]
    if home and home not in ("/", ""):
        homes.insert(0, re.escape(home.rstrip("/")))
    # Claude Code names a project folder after its absolute path: /home/jdoe/projects/x -> -home-jdoe-projects-x
    folder = [r"-home-[A-Za-z0-9_]+", r"-Users-[A-Za-z0-9_]+"]
    return re.compile(
        r"(?<![\w.~])(?:" + "|".join(homes) + r")(?![A-Za-z0-9._\-])"
        r"|(?<![\w\-])(?:" + "|".join(folder) + r")(?=-|/|\\|\s|$|[^\w\-])"
    )


_HOME = _home_pattern(os.path.expanduser("~"))
_HOME_TRIGGERS = tuple({"/home/", "/users/", "users\\", "-home-", "-users-", os.path.expanduser("~").lower()} - {"", "/"})


@dataclass
class ScrubStats:
    """How many placeholders each label produced (the ingest summary reports them)."""

    counts: dict

    def add(self, label: str, n: int) -> None:
        if n:
            self.counts[label] = self.counts.get(label, 0) + n


_ALL_TRIGGERS = tuple(sorted({t for p in PATTERNS for t in p.triggers} | set(_HOME_TRIGGERS)))
_UNTRIGGERED = tuple(p for p in PATTERNS if not p.triggers)


PERSONAL_LABELS = frozenset({"email"})  # besides the home path: what only ``personal`` scrubbing replaces


def scrub(text: str, stats: ScrubStats | None = None, *, personal: bool = True) -> str:
    """``text`` with every secret replaced by its labelled placeholder and, ``personal``, every e-mail
    address by its placeholder and the home path by ``~``."""
    if not text:
        return text
    lowered = text.lower()
    present = {t for t in _ALL_TRIGGERS if t in lowered}  # which patterns can match at all (substring searches)
    if not present and not _UNTRIGGERED:
        return text
    for pattern in PATTERNS:
        if pattern.triggers and present.isdisjoint(pattern.triggers):
            continue
        if not personal and pattern.label in PERSONAL_LABELS:
            continue
        text, n = pattern.apply(text, lowered)
        if n:
            lowered = text.lower()
            if stats is not None:
                stats.add(pattern.label, n)
    if not personal or not any(t in lowered for t in _HOME_TRIGGERS):
        return text
    text, n = _HOME.subn(HOME_PLACEHOLDER, text)
    if stats is not None:
        stats.add("home-path", n)
    return text


def scrub_secrets(text: str) -> str:
    """``text`` with every secret replaced by its labelled placeholder (addresses and paths kept)."""
    return scrub(text, personal=False)


def scrub_json(value):
    """A JSON-shaped value (dicts, lists, strings, numbers) with every string in it scrubbed of secrets."""
    if isinstance(value, str):
        return scrub_secrets(value)
    if isinstance(value, dict):
        return {key: scrub_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub_json(item) for item in value]
    return value
