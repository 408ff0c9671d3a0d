"""Reading a model's answer: one extraction for every JSON purpose, and lenient field types.

Real models wrap the object they were asked for: a ```json fence, a sentence before it, commentary
after it, a ``<think>`` block first (reasoning models), raw newlines inside a string (a Markdown
body), keys in another case. ``json_object`` finds the first balanced JSON object in the answer
with the standard library's own decoder (``raw_decode`` from each ``{`` in turn, ``strict=False``
so control characters inside strings are kept); nothing is repaired: an answer cut off mid-object
has no complete object and is refused, never completed by guessing (the provider has already said
it was truncated). Keys are lower-cased.

The field types below coerce what a model obviously meant (``"false"``, ``"41"``, ``"a, b"``) and
``Batch[T]`` keeps the good items of a list, dropping only the bad ones.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

T = TypeVar("T")

_THINK_TAGS = "think|thinking|reasoning|thought"
_THINK_BLOCK = re.compile(rf"<({_THINK_TAGS})>.*?</\1\s*>", re.S | re.I)
_THINK_CLOSE = re.compile(rf"</(?:{_THINK_TAGS})\s*>", re.I)
_THINK_OPEN = re.compile(rf"<(?:{_THINK_TAGS})>", re.I)
_DECODER = json.JSONDecoder(strict=False)

# the words models use for "nothing", across the purposes' prompts ("NOOP", "none", "nothing"); an empty
# object is not one of them: it is no answer (``core.purposes.read_json``)
NOTHING_WORDS = frozenset({"noop", "none", "nothing", "no-op", "n/a", "null", "[]"})


class NoObject(ValueError):
    """The answer holds no complete JSON object."""


def without_thinking(text: str) -> str:
    """The answer with a reasoning model's thinking removed.

    A closed block goes; text before a lone closing tag is thinking whose opening tag the server
    ate; an opening tag never closed means the answer never came (everything after it is thought).
    """
    text = _THINK_BLOCK.sub("", text or "")
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip()


def says_nothing(text: str, words: frozenset[str] = NOTHING_WORDS) -> bool:
    """Whether the whole answer is a word for nothing ("NOOP", "None.", "`none`", "**NOOP**")."""
    bare = without_thinking(text).strip().strip("`*_\"'.!:;, \n").lower()
    return bare in words


def json_object(text: str) -> dict:
    """The first balanced JSON object in ``text``, keys lower-cased; raises ``NoObject``."""
    body = without_thinking(text)
    for match in re.finditer(r"\{", body):
        try:
            value, _end = _DECODER.raw_decode(body, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return lower_keys(value)
    if "{" in body:
        raise NoObject("no complete JSON object in the answer")
    raise NoObject("no JSON object in the answer")


def lower_keys(value: Any) -> Any:
    """Dict keys lower-cased (and stripped), at every depth."""
    if isinstance(value, dict):
        return {str(k).strip().lower(): lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [lower_keys(v) for v in value]
    return value


# ---- lenient field types ---------------------------------------------------------------------


def _split_list(value: Any) -> Any:
    """A comma-, semicolon- or newline-separated string as a list; None as an empty list."""
    if value is None:
        return []
    if isinstance(value, str):
        if says_nothing(value) or not value.strip():
            return []
        parts = re.split(r"[\n;]+|,(?!\d)", value)
        return [p.strip().lstrip("-*• ").strip() for p in parts if p.strip().lstrip("-*• ").strip()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    return value


def _text(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    return value


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(_text)]
Upper = Annotated[str, BeforeValidator(_upper)]
Lower = Annotated[str, BeforeValidator(_lower)]
TextList = Annotated[list[Text], BeforeValidator(_split_list)]


def _each_valid(value: Any, handler: ValidatorFunctionWrapHandler) -> list:
    """Validate a list item by item; a bad item is dropped, never the list (a string is split first)."""
    if not isinstance(value, list):
        value = _split_list(value)
        if not isinstance(value, list):
            return []
    kept: list = []
    for item in value:
        try:
            kept.extend(handler([item]))
        except ValidationError:
            continue
    return kept


# ``Batch[Item]``: a list whose invalid items are dropped one by one
Batch = Annotated[list[T], WrapValidator(_each_valid)]


# ---- meaning: what an answer may not be, whatever its shape -----------------------------------

_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ONE_WORD = re.compile(r"[a-z_]+")  # a one-word literal of a template ("read", "patch") is a value, not a blank


def normalised(text: str) -> str:
    """Lower-case words joined by single spaces: how two texts are compared for sameness."""
    return " ".join(re.findall(r"[^\W_]+", (text or "").lower()))


def template_blanks(messages: list[dict]) -> frozenset[str]:
    """The fill-in texts of the JSON templates a prompt's system message shows (``"content": "the fact, or empty for NOOP"``,
    ``["..."]``), normalised: a quoted string inside a ``{...}`` of the prompt that is neither a key (a colon
    follows it) nor one of a set of alternatives (``"LONG" | "SHORT"``) nor a one-word literal."""
    blanks: set[str] = set()
    for message in messages:
        if message.get("role") != "system":  # the user message shows data (a profile as JSON), not a template
            continue
        text = str(message.get("content", ""))
        for start in (m.start() for m in re.finditer(r"\{\s*\"", text)):
            depth, end = 0, start
            for end in range(start, min(len(text), start + 2000)):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                if depth == 0:
                    break
            span = text[start : end + 1]
            for quoted in _QUOTED.finditer(span):
                after = span[quoted.end() :].lstrip()[:1]
                before = span[: quoted.start()].rstrip()[-1:]
                if after == ":" or "|" in (after, before) or _ONE_WORD.fullmatch(quoted.group(1)):
                    continue
                blanks.add(normalised(quoted.group(1)))
    return frozenset(blanks)


def string_leaves(value: Any) -> list[tuple[str, str]]:
    """Every string inside an answer with the field it sits under (``("topics", "dogs")``)."""
    out: list[tuple[str, str]] = []

    def walk(item: Any, where: str) -> None:
        if isinstance(item, str):
            out.append((where, item))
        elif isinstance(item, dict):
            for key, inner in item.items():
                walk(inner, str(key))
        elif isinstance(item, (list, tuple)):
            for inner in item:
                walk(inner, where)

    walk(value, "answer")
    return out


def blank_in(text: str, blanks: frozenset[str]) -> str:
    """The template blank ``text`` is, or holds (a blank of three words or more inside it); "" for none.
    A text of punctuation only ("...", "…") is a blank too."""
    norm = normalised(text)
    if not norm:
        return text.strip() if text.strip() else ""
    if norm in blanks:
        return norm
    padded = f" {norm} "
    return next((b for b in blanks if len(b.split()) >= 3 and f" {b} " in padded), "")


def stems(*texts: str) -> frozenset[str]:
    """The texts' content words folded to their singular, and every word of two letters or more
    ("CI", "QA"): what two texts are compared by when one must come from the other."""
    from core.words import STOPWORDS, content_words, stem, words

    found: set[str] = set()
    for text in texts:
        found.update(stem(w) for w in content_words(text or ""))
        found.update(w for w in words(text or "") if len(w) == 2 and w not in STOPWORDS)
    return frozenset(found)


def unsupported(text: str, known: frozenset[str], *, ignore: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` shares no word with ``known`` other than those in ``ignore`` (names, say)."""
    return not ((stems(text) - ignore) & known)
