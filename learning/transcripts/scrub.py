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

    def apply(self, text: str) -> tuple[str, int]:
        repl = ("\\g<key>" if self.keeps_key else "") + placeholder(self.label)
        return self.regex.subn(repl, text)


_KEY_NAMES = r"[A-Za-z0-9_]*(?:password|passwd|passphrase|pwd|secret|token|api_?key|access_?key|private_?key)[A-Za-z0-9_]*"

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "private-key",
        re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----", re.S),
    ),
    Pattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    Pattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    Pattern("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    Pattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    Pattern("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}")),
    Pattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    Pattern(
        "bearer-token",
        re.compile(r"(?P<key>\bBearer\s+)(?!\[REDACTED)[A-Za-z0-9._~+/=\-]{8,}", re.I),
        keeps_key=True,
    ),
    Pattern(
        "url-password",
        re.compile(r"(?P<key>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'`]+:)(?!\[REDACTED)[^\s@/\"'`]+(?=@)"),
        keeps_key=True,
    ),
    Pattern(
        "password",
        re.compile(
            r"(?P<key>(?P<q>[\"']?)\b" + _KEY_NAMES + r"\b(?P=q)\s*(?::|=|:=)\s*(?P<vq>[\"']?))"
            r"(?!\[REDACTED)(?![\"'])(?!(?:None|null|true|false|undefined)\b)(?![A-Za-z_][\w.]*\()(?!\$)[^\s\"',;`)}\]]{3,}",
            re.I,
        ),
        keeps_key=True,
    ),
)


def _home_pattern(home: str | None) -> re.Pattern:
    homes = [r"/home/[A-Za-z0-9._\-]+", r"/Users/[A-Za-z0-9._\-]+", r"[A-Za-z]:\\\\?Users\\\\?[A-Za-z0-9._\-]+"]
    if home and home not in ("/", ""):
        homes.insert(0, re.escape(home.rstrip("/")))
    return re.compile(r"(?<![\w.~])(?:" + "|".join(homes) + r")(?![A-Za-z0-9._\-])")


_HOME = _home_pattern(os.path.expanduser("~"))


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
    for pattern in PATTERNS:
        text, n = pattern.apply(text)
        if stats is not None:
            stats.add(pattern.label, n)
    text, n = _HOME.subn(HOME_PLACEHOLDER, text)
    if stats is not None:
        stats.add("home-path", n)
    return text
