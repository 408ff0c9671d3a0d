"""The offline PersistDecider's rules (no model, no network): a small, general fallback.

A model reads a turn far better than these rules do (``docs/providers.md``); they exist so that the
whole loop runs with no key, and they err towards NOOP. Each rule is one sentence a reader can check
against any text:

1. Only a statement is kept: a question, a request ("please", "can you", "I want", "let's"), an
   instruction (a clause that opens with a verb: "..., so cancel my order", "don't ...") or a sentence
   that needs the conversation ("it", "you", "that one") is never a note.
2. A liking or a habit the sender states of themselves ("I prefer ...", "I don't like ...", "I always
   ...") is a LONG fact about them, in the third person ("Ana prefers ...").
3. "My <attribute> is ..." for an attribute of a person (email, time zone, role, team, manager ...),
   "I work/live in ...", "I'm allergic to ...", "we use ..." and "the <system> runs ..." are LONG facts.
4. A statement with a date (any common form: "2026-06-20", "June 20", "the 14th", "next Tuesday", "from
   June 10 to June 20") or a situation word (vacation, on call, freeze, this week ...) is a SHORT note
   that lasts to the date's end; without a date it is anchored to today.
5. A team convention ("team convention", "everyone should") is a DOC recommendation.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from core import words as vocabulary
from core.words import ABBREVIATED_DOT, INITIALISM, INITIALISM_GOES_ON, STOPWORDS
from learning.purposes.offline.person import (
    ADVERBS,
    IRREGULAR_PAST,
    NO_VERB,
    SAME_FORM,
    personal_we,
    third_form,
    third_person,
)

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december"]

# ---- rule 1: only a statement ---------------------------------------------------------------------

LEAD_WORDS = re.compile(
    r"^(?:\d+[.)]\s*)?(?:(?:yes|yeah|yep|sure|ok|okay|well|actually|also|oh|so|and|but|great|alright|btw|fyi|plus|"
    r"heads up|just so you know|quick note|by the way|wow|hey|hi|thanks|thank you)\b[\s,!:-]*)+",
    re.I,
)
TIME_LEAD = re.compile(r"^(?:next|this|last)\s+(?:week|month|weekend|sprint|year)\s*,?\s*|^(?:today|tomorrow)\s*,?\s+", re.I)
DECLARATIVE_SUBJECT = re.compile(
    r"^(?:i|i'm|i am|i've|i'll|we|we're|we are|we've|we'll|my|our|the team|the [a-z0-9-]+ "
    r"(?:service|server|servers|database|db|cluster|pipeline|api|repo|repository|build|deploy|deploys|release|"
    r"office|team|freeze))\b",
    re.I,
)
REQUEST = re.compile(
    r"\b(?:please|pls|kindly|can you|could you|would you|will you|can we|could we|let's|let us|i'd like|"
    r"i would like|i'd prefer|i would prefer|i'd love|i want|i need|we need|we want|i wanna|go ahead|"
    r"instead|help me|make sure|don't forget|remember to|never mind|nevermind)\b",
    re.I,
)
# an instruction riding on a statement: a clause after a comma, a semicolon, "so" or "then" that opens with a
# verb and what it is done to ("..., so cancel my order", "..., then ask Bo"), any clause after a semicolon that
# opens with no subject ("...; send it to Bo"), one that opens with "don't"/"never", or one that
# says what the sender wants ("... and need to add her", "... but would like to upgrade", "..., hoping to get ...")
_SUBJECTS = r"(?:i|we|you|he|she|it|they|there|this|that|these|those|my|our|your|his|her|their|its|the|a|an)"
_OBJECT = r"(?:my|the|a|an|our|it|them|me|us|her|him|this|that|all|both|those|these|everything|anything)"
ASK_ON_THE_SIDE = re.compile(
    r"(?:[,;:]|\band\b|\bbut\b|\bso\b)\s+(?:i\s+|we\s+)?(?:(?:would|'d|’d)\s+(?:like|love|appreciate|prefer)|"
    r"want(?:ed|s)?|need(?:ed|s)?|hop(?:e|ed|es|ing)|wish(?:ed|es)?|wonder(?:ed|ing)?|have\s+to|require)\b"
    rf"|(?:[,;:]|\bso\b|\bthen\b)\s+(?:(?:so|and|then|just|please)\s+)*(?:don't|don’t|do not|never)\s+[a-z]+"
    rf"|(?:[,;:]|\bso\b|\bthen\b)\s+(?:(?:so|and|then|just|please)\s+)*(?!{_SUBJECTS}\b)[a-z]+\s+(?:{_OBJECT}\b|(?-i:[A-Z]))"
    rf"|;\s*(?:(?:please|just)\s+)?(?!{_SUBJECTS}\b)[a-z]+\s",
    re.I,
)
# an instruction on its own: the sentence opens with "don't", "never", "always", "avoid" or "make sure"
INSTRUCTION = re.compile(r"^(?:please\s+)?(?:don't|don’t|do not|never|always|avoid|make sure|remember)\b", re.I)
SIGN_OFF = re.compile(r"\s*[,;:-]+\s*(?:talk|speak|chat|catch up|see you|ttyl|cheers|thanks|thank you)\b[^.!?]*[.!]*\s*$",
                      re.I)
# "Please remember I prefer window seats": a statement the sender asks to be kept is the statement
KEEP_THAT = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:remember|note|keep in mind|make a note|bear in mind)"
    r"\s+(?:that\s+)?(?=(?:i|i'm|i am|i've|we|we're|we are|my|our)\b)",
    re.I,
)
# "I'm trying to book ...", "I just want to cancel ...": what the sender wants of this conversation
INTENT = re.compile(
    r"^(?:i'm|i am|we're|we are)\s+(?:just\s+|really\s+|also\s+|now\s+)?(?:going to need|gonna need|trying|looking|"
    r"hoping|calling|writing|reaching out|checking|wondering|contacting|here to|interested in)\b"
    r"|^(?:i|we)\s+(?:just\s+|really\s+|only\s+|also\s+|still\s+)?(?:want|wanted|need|needed|would like|wish|hope)\b",
    re.I,
)
# "I was told ...", "We had an outage": what happened is no situation that holds on
PAST = re.compile(r"^(?:i|we)\s+(?:(?:just|already|also|really|only)\s+)?(?:was|were|had|did)\b", re.I)
# "Today I'm feeling great": how the sender feels is no situation to keep
FEELING = re.compile(r"^(?:i'm|i am|we're|we are)\s+(?:feeling|so|really|super|very|pretty|quite)\b|^(?:i|we)\s+(?:feel|felt)\b",
                     re.I)
# a note is read later, away from the conversation: one that needs it ("it", "you", "that one") is not kept
NEEDS_THE_CONVERSATION = re.compile(r"\b(?:it|them|you|your|yours|yourself)\b(?!['’])", re.I)
CONTEXTUAL = re.compile(r"\b(?:that|this|those|these|the same|the other|the first|the second)\s+"
                        r"(?:one|ones|option|options|time|way|thing|idea|day|date)\b", re.I)
_HERE = r"\b(?:here|there)\b"
HERE_OR_THERE = re.compile(_HERE, re.I)
_POINTING = re.compile(_HERE + r"|\b(?:that|this|these|those)\s*$", re.I)
# a liking of a definite thing ("I love the photos") is a reaction to what the conversation holds
AFFECT = {"like", "love", "enjoy", "hate", "dislike"}
HELD_OBJECT = re.compile(r"^(?:all\s+|both\s+)?(?:the|its|his|her|their)\b|\b(?:you|your|yours)\b", re.I)
DEICTIC = re.compile(r"^(?:it|this|that|these|those|them|you|your|yours|how|what|when|where|so much|a lot|"
                     r"to (?:hear|see|know|say|admit|complain|ask|bother|tell|be))\b", re.I)
_SHARED = re.compile(r"\b(?:we|our|ours|us)\b", re.I)  # "I usually join our calls late": a plural shared with the listener
# the negative-capture bans: no environment failures, no "tool X doesn't work", no transient errors
NEGATIVE = re.compile(
    r"\b(doesn't work|does not work|is broken|timed? ?out|timeout|transient|flaky|rate limit|error|"
    r"crashed|500|503|unavailable|down again)\b",
    re.I,
)


def _clause(stops: str) -> str:
    """What a fact states: up to the first of ``stops``; a dot inside a word ("node.js"), of a title ("Mr. Jones")
    or of an initialism the sentence goes on after ("10 a.m. on weekdays") kept."""
    return rf"(?:[^{stops}]|\.(?=[^\s{stops}])|(?:{ABBREVIATED_DOT})\s|(?<={INITIALISM})\.(?={INITIALISM_GOES_ON}))+"


CLAUSE = _clause(".!?")  # to the sentence's end
VALUE = _clause(".!?,")  # a stated value: to the sentence's end or a comma

# ---- rules 2 and 3: standing facts ---------------------------------------------------------------

PREFERENCE = re.compile(
    r"^(?P<who>i|we)\s+(?P<adv>really\s+|strongly\s+|much\s+|usually\s+|always\s+|generally\s+)?"
    r"(?P<verb>prefer|like|love|enjoy|hate|dislike|avoid)\s+(?P<x>" + CLAUSE + ")",
    re.I,
)
NOT_LIKING = re.compile(r"^(?P<who>i|we)\s+(?:really\s+)?(?:don't|don’t|do not)\s+(?:really\s+)?(?P<verb>like|love|enjoy)\s+"
                        r"(?P<x>" + CLAUSE + ")", re.I)
FAN_OF = re.compile(r"^(?P<who>i'm|i am|we're|we are)\s+(?P<neg>not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fans?\s+of\s+"
                    r"(?P<x>" + CLAUSE + ")", re.I)
HABIT = re.compile(r"^(?P<who>i|we)\s+(?P<adv>always|usually|normally|typically|generally|never|rarely|often)"
                   rf"(?P<more>(?:\s+(?:{ADVERBS}))*)\s+(?P<verb>[a-z]+)\s+(?P<x>" + CLAUSE + ")", re.I)
MY_FACT = re.compile(
    r"^(?P<who>my|our)\s+(?P<what>user ?id|username|user name|email|e-mail|phone number|time ?zone|pronouns|role|"
    r"title|job title|team|manager|on-call rotation|stack|main language|language|birthday|address)\s+(?:is|are)\s+"
    r"(?P<x>" + VALUE + ")",
    re.I,
)
WORK_FACT = re.compile(r"^(?P<who>i|we)\s+(?P<verb>work|live|am based|are based)\s+(?P<x>(?:as|at|for|in|on|from)\s+"
                       + CLAUSE + ")", re.I)
TEAM_USES = re.compile(r"^(?P<who>we|our team|the team)\s+(?P<verb>use|uses|deploy|deploys|run|runs|own|owns)\s+"
                       r"(?P<x>" + CLAUSE + ")", re.I)
ALLERGY = re.compile(r"^(?P<who>i'm|i am)\s+(?:(?:severely|very|highly|mildly)\s+)?(?P<x>allergic to " + CLAUSE + ")", re.I)
SYSTEM_FACT = re.compile(
    r"^(?P<x>the [a-z0-9-]+ (?:service|server|servers|database|db|cluster|pipeline|api|repo|repository)\s+"
    r"(?:is|runs|uses|lives|deploys|needs|requires|has)\s+" + CLAUSE + ")",
    re.I,
)
VERB_3RD = {"work": "works", "live": "lives", "use": "uses", "deploy": "deploys", "run": "runs", "own": "owns",
            "am based": "is based", "are based": "is based"}

# ---- rule 4: situations and their dates ----------------------------------------------------------

SITUATION = re.compile(
    r"\b(vacation|holiday|out of (?:the )?office|ooo|on leave|parental leave|freeze|frozen|"
    r"(?:i'm|i am|we're|we are|be|is|are)\s+away|"
    r"on call|on-call|blocked|embargo|offsite|migration window|this week|next week|"
    r"this sprint|today|tomorrow|this weekend|next weekend|this month|next month)\b",
    re.I,
)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH = r"(" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?\b"
MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}|\b{_DAY}\s+(?:of\s+)?{_MONTH}", re.I)  # "June 20", "20th of June"
NTH = re.compile(r"\bthe\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b", re.I)  # "until the 14th": the next 14th
WEEKDAY = re.compile(rf"\b(?P<which>next|this|on|until|till|through|thru|by|from|to)\s+(?P<day>{'|'.join(WEEKDAYS)})\b",
                     re.I)
RELATIVE = (("today", 1), ("tomorrow", 2), ("this weekend", 3), ("next weekend", 10), ("this week", 7),
            ("next week", 14), ("sprint", 14), ("this month", 31), ("next month", 62))
MAX_SHORT_DAYS = 90

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


def words(text: str) -> set[str]:
    """The text's words that are not stopwords (any length): what two texts are compared on."""
    return {w for w in vocabulary.words(text) if w not in STOPWORDS}


def overlap(a: str | set[str], b: str) -> float:
    """Jaccard of the two texts' words (``a`` may be given as its ``words`` already: one text against many)."""
    wa, wb = (a if isinstance(a, set) else words(a)), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


IDENTIFIER = re.compile(r"[^\s']*[_\d]")  # a first word with an underscore or a digit: a handle, an id
LEAD_IN = re.compile(r"^(?:heads up|fyi|note|btw|just so you know|quick note)\s*[:,!-]*\s*", re.I)
TRAILING_PLEASE = re.compile(r"[,\s]+please[.!\s]*$", re.I)


def finish(text: str) -> str:
    text = TRAILING_PLEASE.sub("", LEAD_IN.sub("", text.strip()))
    text = text.strip().rstrip(".!,;:") + "."
    if IDENTIFIER.match(text):  # a handle such as "ana_k_42" is written as it is
        return text
    return text[0].upper() + text[1:]


def statement(sentence: str) -> str | None:
    """The sentence without its lead-in words and courtesies when it states something; None for a question, a
    request or an instruction (rule 1)."""
    text = LEAD_WORDS.sub("", sentence.strip()).strip()
    kept = KEEP_THAT.sub("", text)
    if kept != text:  # "please remember I prefer ...": the statement, as a statement
        text = kept.rstrip().rstrip("?").rstrip() + "."
    text = SIGN_OFF.sub(".", TRAILING_PLEASE.sub("", text))
    if (not text or text.rstrip().endswith("?") or REQUEST.search(text) or ASK_ON_THE_SIDE.search(text)
            or INSTRUCTION.match(text)):
        return None
    return text


def declarative(sentence: str) -> str | None:
    """``statement``'s text when it has a subject (the sender, their team, a system) and is not what the sender
    wants of this conversation; None otherwise."""
    text = statement(sentence)
    if text is None:
        return None
    body = TIME_LEAD.sub("", text)
    return text if DECLARATIVE_SUBJECT.match(body) and not INTENT.match(body) else None


def _is_team(who_word: str) -> bool:
    return who_word.lower() in ("we", "our", "we're", "we are", "our team", "the team")


def _subject(who_word: str, who: str, group: bool = False) -> str:
    if not _is_team(who_word):
        return who
    return f"{who} and others" if group else f"{who}'s team"


def _after_subject(x: str, who_word: str, who: str, group: bool = False) -> str:
    """What follows a note's subject, in the third person, its mentions of the subject already made."""
    team = _is_team(who_word)
    return third_person(x.strip(), who, named=not team, team_named=team, group=group)


def _has_content(x: str) -> bool:
    return (bool(vocabulary.content_words(x, identifiers=False)) and not DEICTIC.match(x.strip())
            and not CONTEXTUAL.search(x) and not NEEDS_THE_CONVERSATION.search(x))


def _present(verb: str) -> bool:
    """A verb in its plain present form ("pick"), not a past ("got", "moved"), a modal or no verb."""
    lowered = verb.lower()
    past = lowered.endswith("ed") and not lowered.endswith("eed")
    return not (past or lowered in SAME_FORM or lowered in NO_VERB)


def _liking(text: str, who: str, group: bool) -> str | None:
    """Rule 2's likings: "I prefer ...", "I don't like ...", "I'm a fan of ..."."""
    m = PREFERENCE.match(text)
    if m and _has_content(m["x"]) and not (m["verb"].lower() in AFFECT and HELD_OBJECT.search(m["x"])):
        verb = m["verb"].lower() if group and _is_team(m["who"]) else third_form(m["verb"].lower())
        lead = f"{m['adv'].strip().lower()} {verb}" if m["adv"] else verb
        return finish(f"{_subject(m['who'], who, group)} {lead} {_after_subject(m['x'], m['who'], who, group)}")
    m = NOT_LIKING.match(text)
    if m and _has_content(m["x"]) and not HELD_OBJECT.search(m["x"]):
        denied = "don't" if group and _is_team(m["who"]) else "doesn't"
        return finish(f"{_subject(m['who'], who, group)} {denied} {m['verb'].lower()} "
                      f"{_after_subject(m['x'], m['who'], who, group)}")
    m = FAN_OF.match(text)
    if m and _has_content(m["x"]):
        plural = group and _is_team(m["who"])
        liking = ("are not fans of" if plural else "is not a fan of") if m["neg"] else ("like" if plural else "likes")
        return finish(f"{_subject(m['who'], who, group)} {liking} {_after_subject(m['x'], m['who'], who, group)}")
    return None


def preference_fact(sentence: str, who: str) -> str | None:
    """A stated liking, habit or standing fact about a person, a team or a system as a declarative note ("Ana
    prefers ..."), or None: only what the sentence itself states (rules 2 and 3)."""
    text = declarative(sentence)
    if text is None or NEGATIVE.search(text):
        return None
    text = TIME_LEAD.sub("", text)
    group = personal_we(text)
    liked = _liking(text, who, group)
    if liked:
        return liked
    m = HABIT.match(text)
    if (m and _present(m["verb"]) and _has_content(m["x"]) and not text.rstrip().endswith("!")
            and not _POINTING.search(m["x"]) and not _SHARED.search(m["x"])
            and (m["who"].lower() == "i" or not group)):  # a "we" habit is kept when it is the team's work
        return finish(f"{_subject(m['who'], who)} {m['adv'].lower()}{m['more']} {third_form(m['verb'])} "
                      f"{_after_subject(m['x'], m['who'], who)}")
    m = MY_FACT.match(text)
    if m:
        value = re.split(r"\s+(?:and|but)\s+", m["x"].strip())[0]
        if value.strip("'\"`").casefold() == who.strip().casefold():  # it only says who the sender is
            return None
        owner = "the team's" if m["who"].lower() == "our" and not group else f"{who}'s"
        return finish(f"{owner} {m['what']} is {value}")
    m = ALLERGY.match(text)
    if m and not NEEDS_THE_CONVERSATION.search(m["x"]):
        return finish(f"{who} is {m['x'].strip()}")
    for pattern in (WORK_FACT, TEAM_USES):
        m = pattern.match(text)
        if m and _has_content(m["x"]):
            verb = m["verb"].lower()
            if not (group and _is_team(m["who"])):  # "Ana and others live in Lyon", "Ana's team uses Terraform"
                verb = VERB_3RD.get(verb, verb)
            return finish(f"{_subject(m['who'], who, group)} {verb} {_after_subject(m['x'], m['who'], who, group)}")
    if SYSTEM_FACT.match(text):
        return finish(text)
    return None


def situation_note(sentence: str, who: str, today: date) -> tuple[str, int] | None:
    """A dated situation as (declarative note, ttl_days), or None (rule 4)."""
    text = declarative(sentence)
    if text is None:
        return None
    body = TIME_LEAD.sub("", text)
    end = named_date(text, today)
    if (not (SITUATION.search(text) or end) or NEGATIVE.search(text) or FEELING.match(body) or MY_FACT.match(body)
            or NEEDS_THE_CONVERSATION.search(text) or CONTEXTUAL.search(text) or _happened(body)
            or HERE_OR_THERE.search(text)):
        return None
    note = third_person(text, who, group=personal_we(text)).rstrip(".!")
    if end is None:
        return finish(f"{note} (as of {today.isoformat()})"), _relative_days(text)
    if not ISO_DATE.search(text):
        note = f"{note} (ends {end.isoformat()})"
    return finish(note), max(1, min(MAX_SHORT_DAYS, (end - today).days + 1))


def _happened(text: str) -> bool:
    """What the sender did or was ("I was told ...", "I went there on Monday"); a past that sets what holds ("We
    moved the release to next week") is not this."""
    if PAST.match(text):
        return True
    m = re.match(rf"^(?:i|we)(?:\s+(?:{ADVERBS}))*\s+([a-z]+)\b", text, re.I)
    return m is not None and m.group(1).lower() in IRREGULAR_PAST


def _on_or_after(today: date, month: int, day: int) -> date | None:
    """The first date on or after ``today`` with this month and day (this year's, else next year's)."""
    for year in (today.year, today.year + 1):
        try:
            found = date(year, month, day)
        except ValueError:
            continue
        if found >= today:
            return found
    return None


def _next_nth(today: date, day: int) -> date | None:
    """The first day numbered ``day`` on or after ``today`` ("the 14th")."""
    year, month = today.year, today.month
    for _ in range(3):
        try:
            found = date(year, month, day)
            if found >= today:
                return found
        except ValueError:
            pass
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def named_date(sentence: str, today: date) -> date | None:
    """The last day the sentence names, in any common form, on or after ``today``; None when it names none.

    An ISO date, a month and day ("June 20", "20 June"), a day of the month ("the 14th": the next one) or a
    day of the week ("next Tuesday", "through Friday": the coming one, a week on when it is today). Of a
    range ("from June 10 to June 20") the latest day is the end.
    """
    found: list[date] = []
    for m in ISO_DATE.finditer(sentence):
        try:
            found.append(date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
        except ValueError:
            pass
    for m in MONTH_DAY.finditer(sentence):
        name, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        day = _on_or_after(today, [x[:3] for x in MONTHS].index(name.lower()[:3]) + 1, int(number))
        if day:
            found.append(day)
    if not found:
        found += [d for d in (_next_nth(today, int(m["day"])) for m in NTH.finditer(sentence)) if d]
    for m in WEEKDAY.finditer(sentence):
        found.append(today + timedelta(days=(WEEKDAYS.index(m["day"].lower()) - today.weekday()) % 7 or 7))
    return max(found) if found else None


def _relative_days(sentence: str) -> int:
    lowered = sentence.lower()
    return next((days for word, days in RELATIVE if word in lowered), 7)


def team_note(sentence: str, who: str) -> str | None:
    """Rule 5: a team convention, as a DOC recommendation."""
    if sentence.rstrip().endswith("?") or not TEAM_WIDE.search(sentence) or REQUEST.search(sentence):
        return None
    return finish(f"{who} described a team-wide practice: {third_person(sentence, who)}")


def correction(sentence: str) -> bool:
    return bool(CORRECTION.search(sentence)) and not NEGATIVE.search(sentence)
