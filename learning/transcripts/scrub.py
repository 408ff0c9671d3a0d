"""Scrubbing at extraction: secrets and the user's home path leave a transcript as labelled placeholders.

Every string an adapter lifts out of a transcript passes through ``scrub`` before anything is
stored, embedded or sent to a model; the raw line never is. Each pattern has a label, so a reader
sees what was there (``[REDACTED:openai-key]``) without seeing it. Patterns run in order: the
specific provider keys before the generic assignment rule, so a key keeps its provider's label.
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

    def apply(self, text: str, lowered: str | None = None) -> tuple[str, int]:
        lowered = text.lower() if lowered is None else lowered
        if self.triggers and not any(t in lowered for t in self.triggers):
            return text, 0
        repl = ("\\g<key>" if self.keeps_key else "") + placeholder(self.label)
        return self.regex.subn(repl, text)


_KEY_NAMES = r"[A-Za-z0-9_]*(?:password|passwd|passphrase|pwd|secret|token|api_?key|access_?key|private_?key)[A-Za-z0-9_]*"

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "private-key",
        re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----", re.S),
        triggers=("private key-----",),
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
        "password",
        re.compile(
            r"(?P<key>(?P<q>[\"']?)\b" + _KEY_NAMES + r"\b(?P=q)\s*(?::|=|:=)\s*(?P<vq>[\"']?))"
            r"(?!\[REDACTED)(?![\"'])(?!(?:None|null|true|false|undefined)\b)(?![A-Za-z_][\w.]*\()(?!\$)[^\s\"',;`)}\]]{3,}",
            re.I,
        ),
        keeps_key=True,
        triggers=("pass", "pwd", "secret", "token", "key"),
    ),
)


def _home_pattern(home: str | None) -> re.Pattern:
    homes = [r"/home/[A-Za-z0-9._\-]+", r"/Users/[A-Za-z0-9._\-]+", r"[A-Za-z]:\\\\?Users\\\\?[A-Za-z0-9._\-]+"]
    if home and home not in ("/", ""):
        homes.insert(0, re.escape(home.rstrip("/")))
    return re.compile(r"(?<![\w.~])(?:" + "|".join(homes) + r")(?![A-Za-z0-9._\-])")


_HOME = _home_pattern(os.path.expanduser("~"))
_HOME_TRIGGERS = tuple({"/home/", "/users/", "users\\", os.path.expanduser("~").lower()} - {"", "/"})


@dataclass
class ScrubStats:
    """How many placeholders each label produced (the ingest summary reports them)."""

    counts: dict

    def add(self, label: str, n: int) -> None:
        if n:
            self.counts[label] = self.counts.get(label, 0) + n


def scrub(text: str, stats: ScrubStats | None = None) -> str:
    """``text`` with every secret replaced by its labelled placeholder and the home path by ``~``."""
    if not text:
        return text
    lowered = text.lower()
    for pattern in PATTERNS:
        text, n = pattern.apply(text, lowered)
        if n:
            lowered = text.lower()
            if stats is not None:
                stats.add(pattern.label, n)
    if not any(t in lowered for t in _HOME_TRIGGERS):
        return text
    text, n = _HOME.subn(HOME_PLACEHOLDER, text)
    if stats is not None:
        stats.add("home-path", n)
    return text
