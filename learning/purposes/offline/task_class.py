"""The class of work a tool run did, read from its tools and the ask: what the offline skill drafter names.

A tool's name is read as namespace, verb and object (``git_create_branch``: ``git`` / ``create`` /
``branch``; ``update_invoice_lines``: - / ``update`` / ``invoice lines``). The run's
task class is its acting tool (one that changes something, not a read, and not one that only tells
someone: a posted message, a comment, a reply); when several act, the one whose object the ask names
wins, then the one whose verb the ask names, then the last to act. When the ask wants that object fixed
(``GOAL_VERBS``: "CI is red, can you fix it?"), the ask's verb names the work (``fix-ci``, not the
``rerun-ci`` that ended it). The ask adds at most one word, the
qualifier it puts before a one-word object ("the *release* branch"), and never a greeting, a courtesy,
a name or an identifier: the greeting a conversation opens with is not what it was about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core import words as vocabulary
from learning import procedures

# verbs of a tool that only looks: reading never names the work, it serves the acting tool
READ_VERBS = frozenset(
    """get list search find fetch read query show view lookup look describe inspect browse count check calculate
    compute think diff status wait watch load download preview explain summarize summarise estimate validate
    verify poll peek scan recall retrieve""".split()
)
ACT_VERBS = frozenset(
    """create update delete remove book cancel transfer send post edit write add set assign merge deploy rollback
    run rerun restart transition close open approve reject comment reply move rename upload publish apply push
    commit checkout clone tag refund pay schedule submit modify change replace patch fix install start
    stop kill scale invite notify archive restore pin unpin mark link escalate resolve reopen upgrade downgrade
    grant revoke reset enable disable trigger execute build cut ship rotate revert backport triage
    exchange reserve charge credit pull sync import export migrate provision configure register""".split()
)
VERBS = READ_VERBS | ACT_VERBS
# what a run tells someone with (post a message, add a comment, reply): how it reported, not what it did -- a chat
# agent's every run ends with one; it names the work only when nothing else acted
REPORT_OBJECTS = frozenset("message messages comment comments reply replies email emails notification notifications".split())
REPORT_VERBS = frozenset({"reply", "notify", "comment"})  # when no object says what was sent
# what the ask wants done to a thing, beyond any one tool's act: "CI is red, can you fix it?" is fixing CI, whichever
# tool then reran it; the ask's goal names the work when the acting tool's object is the thing the ask names
GOAL_VERBS = ("fix", "repair", "debug", "troubleshoot", "diagnose", "unblock", "resolve")
# what a conversation opens and closes with; it never names the work
COURTESY = frozenset(
    """hi hello hey hiya howdy greetings good morning afternoon evening day dear there thanks thank thx cheers
    please pls sorry excuse appreciate appreciated welcome bye goodbye ok okay yes yeah yep sure great awesome
    perfect wonderful lovely nice fine alright cool wow oh hope doing well""".split()
)
# words before a noun that say which one of this conversation's, not what kind
NOT_QUALIFIERS = frozenset(
    """upcoming recent current new old last next first second third other same previous existing entire whole
    both each every another own certain specific particular few several many more most less separate single
    additional extra direct cheaper cheapest later earlier original different exact correct proper right wrong
    main usual quick simple""".split()
)
OPENER = re.compile(
    r"^(?:(?:(?:hi|hello|hey|hiya|howdy)(?:\s+there)?|greetings|dear|thanks|thank you|please|sorry|ok|okay|yes|yeah|"
    r"yep|sure|great|well|good (?:morning|afternoon|evening|day))\b[\s,!.:;-]*)+",
    re.I,
)
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def tool_words(tool: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", CAMEL.sub("_", tool).lower()) if w]


@dataclass(frozen=True)
class Action:
    """One tool read as namespace, verb and object; ``verb`` is "" when none of its words is a verb."""

    tool: str
    verb: str
    object: tuple[str, ...]

    @classmethod
    def of(cls, tool: str) -> Action:
        parts = tool_words(tool)
        for i, word in enumerate(parts):
            if word in VERBS:
                return cls(tool=tool, verb=word, object=tuple(parts[i + 1:]))
        return cls(tool=tool, verb="", object=tuple(parts))

    @property
    def acts(self) -> bool:
        return self.verb in ACT_VERBS

    @property
    def head(self) -> str:
        nouns = [w for w in self.object if w not in vocabulary.STOPWORDS]
        return nouns[-1] if nouns else ""

    @property
    def reports(self) -> bool:
        """True for a tool that tells someone: its object a message, comment or reply, or an object-less reply."""
        return self.head in REPORT_OBJECTS or (self.verb in REPORT_VERBS and not self.head)

    def words(self) -> list[str]:
        return [w for w in (self.verb, *self.object) if w]


def ask_words(ask: str) -> list[str]:
    return [vocabulary.stem(w) for w in vocabulary.words(ask)]


def _named(action: Action, asked: set[str]) -> tuple[int, int]:
    head_named = int(bool(action.head) and vocabulary.stem(action.head) in asked)
    return head_named, sum(1 for w in action.object if vocabulary.stem(w) in asked and w not in vocabulary.STOPWORDS)


def acting(tools: list[str], ask: str) -> Action | None:
    """The tool the run's work class is named for, or None for a run of no tool but the agent's own (its memory
    and skill tools are how it works, never what it did: ``learning.memory.procedures``)."""
    actions = [Action.of(t) for t in procedures.procedure(tools)]
    if not actions:
        return None
    acts = [a for a in actions if a.acts]
    candidates = ([a for a in acts if not a.reports] or acts or [a for a in actions if a.verb not in READ_VERBS]
                  or actions)
    asked = set(ask_words(ask))
    order = {a.tool: i for i, a in enumerate(candidates)}  # the last call of each tool
    return max(candidates, key=lambda a: (*_named(a, asked), int(vocabulary.stem(a.verb) in asked), order[a.tool]))


def qualifier(action: Action, ask: str) -> str:
    """The word the ask puts before a one-word object ("cut the release branch"), or ""."""
    if len(action.object) != 1 or not action.head:
        return ""
    raw = re.findall(r"[A-Za-z0-9][A-Za-z0-9_'-]*", ask or "")
    for before, word in zip(raw, raw[1:], strict=False):
        if vocabulary.stem(word) != vocabulary.stem(action.head):
            continue
        low = before.lower()
        if (low in vocabulary.STOPWORDS or low in VERBS or low in COURTESY or low in NOT_QUALIFIERS
                or len(low) < vocabulary.MIN_CONTENT_CHARS or any(c.isdigit() for c in low)
                or not low.isalpha() or before[:1].isupper() or low in action.words()):
            continue
        return low
    return ""


def name(tools: list[str], asks: list[str]) -> str:
    """The task class as a skill name: the acting tool's verb and object, e.g. ``update-invoice-lines``."""
    ask = "\n".join(asks)
    action = acting(tools, ask)
    if action is None:
        return ""
    words = action.words()
    goal = _goal(action, asks)
    if goal:
        words = [goal, *action.object]
    extra = qualifier(action, ask)
    if extra:
        words = [*words[:-1], extra, words[-1]]
    return vocabulary.slug("-".join(words))


def _goal(action: Action, asks: list[str]) -> str:
    """The ``GOAL_VERBS`` word of the first sentence of the asks that both says it and names the acting tool's object
    ("CI on main is red, can you fix it?" for ``rerun_ci``), or ""."""
    head = vocabulary.stem(action.head) if action.head else ""
    if not head:
        return ""
    for sentence in (s for a in asks for s in vocabulary.sentences(a)):
        said = ask_words(sentence)
        goal = next((w for w in said if w in GOAL_VERBS), "")
        if goal and goal != action.verb and head in said:
            return goal
    return ""


def is_courtesy(sentence: str) -> bool:
    """A greeting, a thanks or a sign-off: nothing in it but courtesy words and names."""
    every = vocabulary.words(sentence)
    plain = [w for w in every if w not in vocabulary.STOPWORDS and w not in COURTESY]
    if not plain:
        return True
    # "Hi, I'm Ana." / "Hello there, Bo here": a greeting whose rest is a name or two
    capitals = set(re.findall(r"\b[A-Z][a-z]+\b", sentence))
    opens_with_greeting = bool(every) and every[0] in COURTESY
    return opens_with_greeting and len(plain) <= 2 and all(w.capitalize() in capitals or w == "here" for w in plain)


def work_sentence(asks: list[str], action: Action | None) -> str:
    """The first sentence of the asks that says what was wanted: never a greeting or a courtesy.

    A sentence that names the acting tool's object (or verb) is preferred; else the first that is
    not a courtesy.
    """
    sentences = [s for a in asks for s in vocabulary.sentences(a)]
    plain = [s for s in sentences if not is_courtesy(s)]
    if action is not None:
        wanted = {vocabulary.stem(w) for w in (action.head, action.verb) if w}
        for s in plain:
            if wanted & set(ask_words(s)):
                return without_courtesy(s)
    return without_courtesy(plain[0]) if plain else ""


def without_courtesy(sentence: str) -> str:
    """The sentence less the greeting or courtesy it opens with ("Hey, I need..." reads "I need...")."""
    rest = OPENER.sub("", sentence, count=1)
    return rest[:1].upper() + rest[1:] if rest else sentence


def _shouted(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return sum(c.isupper() for c in letters) * 2 > len(letters)


def phrase(action: Action | None, name_: str, asks: Sequence[str] = ()) -> str:
    """The class of work in words: ``update invoice lines``; a word the asks write in capitals is written
    so (``fix CI``, ``review PR``: an acronym lowercased reads as another word), unless the ask is shouted."""
    words = name_.split("-") if name_ else (action.words() if action else [])
    capitals = {w.lower(): w for a in asks if not _shouted(a) for w in re.findall(r"\b[A-Z][A-Z0-9]+\b", a)}
    return " ".join(capitals.get(w, w) for w in words)
