"""Deterministic text heuristics the offline answers are made of (no model, no network).

They are deliberately plain: a stated preference becomes a declarative LONG fact, a dated
situation a SHORT note with a TTL counted from the date it names, anything else NOOP.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from learning import words as vocabulary
from learning.words import STOPWORDS

SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december"]

PREFERENCE = [
    re.compile(r"\b(?P<who>i|we)\s+(?:really\s+|strongly\s+|much\s+)?(?:prefer|like|want)\s+(?P<x>[^.!?]+)", re.I),
    re.compile(r"\b(?P<who>my|our)\s+preference\s+is\s+(?:to\s+|for\s+|that\s+)?(?P<x>[^.!?]+)", re.I),
    re.compile(r"(?:^|\bplease\s+|\bfrom now on,?\s+)(?P<when>always|never)\s+(?P<x>[^.!?]+)", re.I),
]
SITUATION = re.compile(
    r"\b(vacation|holiday|out of (?:the )?office|ooo|on leave|parental leave|away|freeze|frozen|"
    r"on call|on-call|blocked|embargo|offsite|migration window|code freeze|this week|next week|"
    r"this sprint|today|tomorrow)\b",
    re.I,
)
UNTIL = re.compile(r"\b(?:until|through|thru|till|til|ends?|runs through|by)\b", re.I)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
MONTH_DAY = re.compile(r"\b(" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\.?\s+(\d{1,2})\b", re.I)
TEAM_WIDE = re.compile(
    r"\b(team convention|everyone (?:on the team )?should|for the whole team|the whole team|team-wide|"
    r"our process is|the team should|house rule)\b",
    re.I,
)
CORRECTION = re.compile(
    r"\b(next time|instead of|instead,|you should have|should've|don't forget|do not forget|please remember|"
    r"wrong order|before you|make sure (?:to|you)|you skipped|you forgot)\b",
    re.I,
)
# The negative-capture bans: no environment failures, no "tool X doesn't work", no transient errors.
NEGATIVE = re.compile(
    r"\b(doesn't work|does not work|is broken|timed? ?out|timeout|transient|flaky|rate limit|error|"
    r"crashed|500|503|unavailable|down again)\b",
    re.I,
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(text or "") if s and s.strip()]


def words(text: str) -> set[str]:
    """The text's words that are not stopwords (any length): what two texts are compared on."""
    return {w for w in vocabulary.words(text) if w not in STOPWORDS}


def overlap(a: str, b: str) -> float:
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def third_person(text: str, who: str) -> str:
    """Rewrite a sender's first person as a statement about them."""
    rules = [
        (r"\bI'm\b", f"{who} is"), (r"\bI am\b", f"{who} is"), (r"\bI'll\b", f"{who} will"),
        (r"\bI've\b", f"{who} has"), (r"\bI was\b", f"{who} was"), (r"\bI\b", who),
        (r"\bwe're\b", "the team is"), (r"\bwe are\b", "the team is"), (r"\bwe'll\b", "the team will"),
        (r"\bwe\b", "the team"), (r"\bour\b", "the team's"), (r"\bmy\b", f"{who}'s"), (r"\bme\b", who),
        (r"\bmine\b", f"{who}'s"),
    ]
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text, flags=re.I)
    return text


LEAD_IN = re.compile(r"^(?:heads up|fyi|note|btw|just so you know|quick note)\s*[:,!-]*\s*", re.I)
TRAILING_PLEASE = re.compile(r"[,\s]+please[.!\s]*$", re.I)


def finish(text: str) -> str:
    text = TRAILING_PLEASE.sub("", LEAD_IN.sub("", text.strip()))
    text = text.strip().rstrip(".!,;:") + "."
    return text[0].upper() + text[1:]


def preference_fact(sentence: str, who: str) -> str | None:
    """A stated preference as a declarative fact ("Ana prefers ..."), or None."""
    if sentence.rstrip().endswith("?"):
        return None
    for pattern in PREFERENCE:
        m = pattern.search(sentence)
        if not m:
            continue
        x = third_person(m.group("x").strip(), who)
        if "when" in m.groupdict() and m.group("when"):
            return finish(f"{who} prefers that the agent {m.group('when').lower()} {x}")
        subject = f"{who}'s team" if m.group("who").lower() in ("we", "our") else who
        return finish(f"{subject} prefers {x}")
    return None


def situation_note(sentence: str, who: str, today: date) -> tuple[str, int] | None:
    """A dated situation as (declarative note, ttl_days), or None."""
    if sentence.rstrip().endswith("?") or not (SITUATION.search(sentence) or _named_date(sentence, today)):
        return None
    end = _named_date(sentence, today)
    ttl = _ttl_days(sentence, today, end)
    note = third_person(sentence, who).rstrip(".!")
    if end is None:
        note = f"{note} (as of {today.isoformat()})"
    elif not ISO_DATE.search(sentence):
        note = f"{note} (ends {end.isoformat()})"
    return finish(note), ttl


def _named_date(sentence: str, today: date) -> date | None:
    m = ISO_DATE.search(sentence)
    if m:
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    m = MONTH_DAY.search(sentence)
    if m and UNTIL.search(sentence):
        month = [x[:3] for x in MONTHS].index(m.group(1).lower()[:3]) + 1
        try:
            found = date(today.year, month, int(m.group(2)))
        except ValueError:
            return None
        return found if found >= today else found.replace(year=today.year + 1)
    lowered = sentence.lower()
    if UNTIL.search(sentence):
        for i, day in enumerate(WEEKDAYS):
            if re.search(rf"\b{day}\b", lowered):
                ahead = (i - today.weekday()) % 7 or 7
                return today + timedelta(days=ahead)
    return None


def _ttl_days(sentence: str, today: date, end: date | None) -> int:
    if end is not None:
        return max(1, min(90, (end - today).days + 1))
    lowered = sentence.lower()
    for word, days in (("today", 1), ("tomorrow", 2), ("this week", 7), ("next week", 14), ("sprint", 14)):
        if word in lowered:
            return days
    return 7


def team_note(sentence: str, who: str) -> str | None:
    if sentence.rstrip().endswith("?") or not TEAM_WIDE.search(sentence):
        return None
    return finish(f"{who} described a team-wide practice: {third_person(sentence, who)}")


def correction(sentence: str) -> bool:
    return bool(CORRECTION.search(sentence)) and not NEGATIVE.search(sentence)


