"""A person's topics, read from what they said: noun phrases whose head noun recurs, or nothing.

A noun phrase is what follows a determiner, a possessive or a preposition ("my *invoice
template*", "against *staging*", "about the *book club*") up to the next function word, verb
form, name or punctuation; its head is its last word. A phrase is a topic only when its head noun
turns up in at least two of the person's sentences. Verbs, fillers ("first", "same", "thing"),
names (a capitalised word inside a sentence, and the person's own name) and identifiers (anything
with a digit or an underscore) never count, and an acronym counts only as a qualifier ("the *QA
team*", never "from *SFO*" or "my user *ID*"), so "Can you reproduce this against staging first?
Don't touch the production queue." has no topic at all: nothing in it recurs.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from core import words as vocabulary
from learning.purposes.offline.person import IRREGULAR_PAST

MIN_SENTENCES = 2  # the head noun turns up in at least this many of the person's sentences
MAX_PHRASE_WORDS = 3
MIN_HEAD_CHARS = 3

# what opens a noun phrase: a determiner or possessive, a preposition, or "this"/"that", which also stand
# alone as pronouns, so a verb after them ("that sounds great") is no noun
DETERMINERS = frozenset("a an the my our your his her their its these those some any each every no another".split())
PREPOSITIONS = frozenset(
    """of for about with on in at from into onto against over under after before during without within between
    through across around near via per like""".split()
)
DEMONSTRATIVES = frozenset({"this", "that"})
OPENERS = DETERMINERS | PREPOSITIONS | DEMONSTRATIVES
# function words that close one (beyond the project's stopwords)
FUNCTION = frozenset(
    """against over under after before during without within between through across around near via per
    as than because while although though unless since until till whether either neither nor both not no
    yet still even only more most much many few less least very really quite rather too also again ever
    never always often sometimes usually already soon here there where everywhere somewhere anywhere
    he she him her his hers they them their we us you i me my mine yours ours theirs myself yourself
    itself himself herself ourselves themselves someone something anyone anything everyone everything
    nobody nothing none one ones other others such same own whose whom whatever whichever
    am being isn't aren't wasn't weren't doesn't didn't won't wouldn't shouldn't couldn't haven't hasn't
    together apart alone away back forward ahead instead
    hadn't i'd i'll i've you'd you'll you've we'd we'll we've they'd they'll they've he's she's that's
    there's here's what's who's mustn't might must may shall ought""".split()
)
# words that say which or how much, or fill a sentence, and name no subject
FILLERS = frozenset(
    """first second third last next previous other same different new old current upcoming recent existing
    whole entire full certain particular specific various several lot lots bit kind sort type way ways
    thing things stuff time times day days moment today tomorrow yesterday tonight week weeks month months
    year years morning afternoon evening night weekend minute minutes hour hours while ago now later
    sure okay ok yes yeah hey hi hello thanks thank please sorry great good nice awesome cool wow
    amazing awesome wonderful lovely glad happy sad fun hard easy best better worse worst big little small
    huge great real true able free fine right wrong well much many more most less least few enough
    anyway though instead actually basically really totally definitely probably maybe perhaps
    bunch couple number idea part parts side end point case fact example place situation question questions
    help assistance details detail information info option options look chance trouble confusion patience
    inconvenience understanding apologies apology pleasure luck
    fastest cheapest earliest latest soonest important inspiring amazing correct awesome available possible
    necessary means change changes update updates sum rest safe""".split()
)
# the -ing of a light verb is never a subject: "for making", "about having"
LIGHT_ING = frozenset(
    """making having doing getting going taking being looking trying saying coming giving seeing thinking using
    wanting needing feeling keeping putting letting telling asking changing""".split()
)
# verbs, in any form, end a phrase; a base form at the head of a phrase ("the change") is a noun there
VERBS = frozenset(
    """be have do say get make go know take see come think look want give use find tell ask work seem feel try
    leave call need keep let begin help show hear play run move live believe bring happen write provide sit
    stand lose pay meet include continue set learn change lead understand watch follow stop create speak read
    spend grow open walk win offer remember love consider appear buy wait serve die send expect build stay
    fall cut reach kill remain suggest raise pass sell require report decide pull reproduce touch deploy book
    cancel update modify check fly travel visit plan hope enjoy like prefer wish share paint draw join
    start finish fix add remove delete move return upgrade downgrade confirm apply transfer request
    reserve choose pick cook bake hike swim dance sing attend celebrate mean motivate inspire sound matter
    miss hurt care reach remind agree""".split()
)
NAMEISH = re.compile(r"^[A-Z][A-Za-z'-]*$")
# "ID", "QA", "SFO": a word of a phrase ("the QA team"), not a name -- but never its head, which would make a topic
# of a code ("from SFO", "my user ID")
ACRONYM = re.compile(r"^[A-Z]{2,5}s?$")
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'-]*|[^\sA-Za-z0-9]")


def _verb_form(word: str) -> bool:
    if word in VERBS or word in IRREGULAR_PAST:
        return True
    for suffix, back in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("es", ""), ("s", ""), ("ied", "y"), ("ies", "y")):
        if word.endswith(suffix) and word[: -len(suffix)] + back in VERBS:
            return True
    return False


def _identifier(token: str) -> bool:
    return any(c.isdigit() or c == "_" for c in token)


def sentences(messages: list[str]) -> list[str]:
    return [s for m in messages for s in vocabulary.sentences(m)]


def phrases(sentence: str, *, names: frozenset[str] = frozenset()) -> list[list[str]]:
    """The sentence's noun phrases, each its words lower-cased, head last."""
    found: list[list[str]] = []
    current: list[str] | None = None

    def close() -> None:
        if current:
            found.append(current)

    opener = ""
    acronyms: set[str] = set()
    for i, token in enumerate(TOKEN.findall(sentence)):
        low = token.lower()
        low = low[:-2] if low.endswith("'s") else low
        if low in OPENERS:  # "the", "my", "against": a phrase may start here
            close()
            current, opener = [], low
            continue
        if current is None:
            continue
        if low in LIGHT_ING or (not current and opener in DEMONSTRATIVES and _verb_form(low)):
            close()
            current = None
            continue
        acronym = bool(ACRONYM.match(token))
        if acronym:
            acronyms.add(low)
        is_name = bool(NAMEISH.match(token)) and i > 0 and low != "i" and not acronym
        if low in FILLERS and not current:
            continue  # "the first invoice": a filler before the phrase's words is skipped
        past = low in IRREGULAR_PAST or (low.endswith("ed") and _verb_form(low))
        if past and not current:
            continue  # "the booked room"
        if (not token[:1].isalnum() or low in vocabulary.STOPWORDS or low in FUNCTION or low in FILLERS
                or is_name or low in names or _identifier(token) or "'" in low
                or (current and _verb_form(low))):
            close()
            current = None
            continue
        current.append(low)
    close()
    return [p[-MAX_PHRASE_WORDS:] for p in found
            if len(p[-1]) >= MIN_HEAD_CHARS and p[-1].isalpha() and p[-1] not in acronyms]


def topics(messages: list[str], *, subject: str = "", limit: int = 5, known: Sequence[str] = ()) -> list[str]:
    """At most ``limit`` topics, most recurrent first: each a phrase whose head noun is in two sentences.

    A topic whose head noun is already one of ``known``'s ("kids" beside a known "kid") is not new.
    """
    had = {vocabulary.stem(t.split()[-1]) for t in known if t.split()}
    names = frozenset(vocabulary.words(subject))
    said = sentences(messages)
    per_sentence = [phrases(s, names=names) for s in said]
    in_sentences: dict[str, set[int]] = defaultdict(set)
    wording: dict[str, Counter] = defaultdict(Counter)
    first_seen: dict[str, int] = {}
    for n, found in enumerate(per_sentence):
        for phrase in found:
            for word in phrase:
                in_sentences[vocabulary.stem(word)].add(n)
            head = vocabulary.stem(phrase[-1])
            wording[head][" ".join(phrase)] += 1
            first_seen.setdefault(head, n)
    heads = [h for h in wording if len(in_sentences[h]) >= MIN_SENTENCES and h not in had]
    heads.sort(key=lambda h: (-len(in_sentences[h]), first_seen[h]))
    out = []
    for head in heads[:limit]:
        ranked = sorted(wording[head].items(), key=lambda kv: (-kv[1], -len(kv[0].split()), kv[0]))  # said most, then most specific
        out.append(ranked[0][0])
    return out
