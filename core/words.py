"""Words of a text, defined once: the stopword list, what a content word is, a sentence, a slug, and a plural's
singular.

Every full-text search (episodes, notes, native knowledge pages), the offline heuristics (reflection's and the
turn start's) and the skill namers read text through these, so two of them never disagree on whether "how" or
"thanks" carries meaning.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_][\w'-]*")  # letters and digits of any script: "rückgabe", "заказ", not "r", "ckgabe"
STOPWORDS = frozenset(
    """a about all also an and any are as at be been but by can can't cannot could did do does don't for from
    get got had has have hello hey hi how i i'm if in into is it it's its just let let's lets make me my need
    needs new now of ok okay on one or our out please see should so some than thank thanks that the their them
    then there these they this to too up us very want was we we're were what when where which who why will with
    would yes you your""".split()
)
# the dot of a title, a company form or a Latin aside ("Mr. Jones", "Dr. Patel", "St. Louis", "Acme Inc. in
# Denver", "tea vs. coffee", "AWS, e.g. S3") ends no sentence, nor a clause of the offline heuristics (one
# look-behind each: a look-behind has one width)
ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Mt", "Jr", "Sr", "Col", "Gen", "Rev", "Inc", "Ltd", "Corp", "vs",
                 "e.g", "i.e")
ABBREVIATED_DOT = "|".join(rf"(?<=\b{re.escape(a)})\." for a in ABBREVIATIONS)
# the last dot of an initialism ("the U.S.", "10 a.m.") ends no sentence and no clause when a lower-case word or a
# number goes on after it ("moved to the U.S. in 2019"); before a capital it may ("I live in the U.S. My ...")
INITIALISM = r"\b[A-Za-z]\.[A-Za-z]"  # its last two letters, before its last dot
INITIALISM_GOES_ON = r"\s+(?-i:[a-z0-9])"
SENTENCE = re.compile(r"(?<=[.!?])" + "".join(rf"(?<!\b{re.escape(a)}\.)" for a in ABBREVIATIONS)
                      + rf"(?!(?<={INITIALISM}\.){INITIALISM_GOES_ON})\s+|\n+", re.I)
MIN_CONTENT_CHARS = 3
SLUG_CHARS = 80
MAX_SEARCH_WORDS = 32


def words(text: str) -> list[str]:
    """The text's lower-cased words in order; a possessive is its owner (``carol's`` reads ``carol``); a typographic
    apostrophe is the plain one (chat clients write "don’t": not the content word "don")."""
    text = (text or "").lower().replace("’", "'")
    return [w[:-2] if w.endswith("'s") else w for w in WORD.findall(text)]


def content_words(text: str, *, identifiers: bool = True) -> list[str]:
    """Distinct words of three or more characters that are not stopwords, in order of first use.

    ``identifiers=False`` also leaves out words with a digit in them (ticket keys, versions, dates),
    which name an incident rather than a kind of work.
    """
    out: dict[str, None] = {}  # insertion-ordered: a long text's repeats found by hash, not by a scan
    for w in words(text):
        if len(w) < MIN_CONTENT_CHARS or w in STOPWORDS or w in out:
            continue
        if not identifiers and any(ch.isdigit() for ch in w):
            continue
        out[w] = None
    return list(out)


def search_words(query: str, *, limit: int = MAX_SEARCH_WORDS) -> list[str]:
    """What full-text search is given of a query: its content words; a query of nothing but stopwords
    keeps its words (it has nothing else to be found by)."""
    return (content_words(query) or list(dict.fromkeys(w for w in words(query) if w)))[:limit]


def sentences(text: str) -> list[str]:
    """The text's sentences: one ends at a ``.``, ``!`` or ``?`` followed by white space, or at a line break (a pasted
    log has no full stops). A dot inside a word ("manage.py", "3.12", "e.g.") ends none, nor does an abbreviation's."""
    return [s.strip() for s in SENTENCE.split(text or "") if s and s.strip()]


def slug(text: str, *, limit: int = SLUG_CHARS) -> str:
    """Lower-case letters and digits joined by single hyphens, at most ``limit`` characters."""
    return re.sub(r"[^a-z0-9]+", "-", (text or "").lower()).strip("-")[:limit].strip("-")


def stem(word: str) -> str:
    """A plural folded to its singular, so ``flights`` in a tool name meets ``flight`` in an ask."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w
