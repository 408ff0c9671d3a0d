"""The one JSON extraction and the lenient field types every purpose reads its answer with."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.answers import Batch, NoObject, TextList, json_object, says_nothing, without_thinking


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Sure! The fields are {a, b}. Here: {"a": 1} and that is all.', {"a": 1}),  # braces in prose
        ('{"a": 1}\n{"a": 2}', {"a": 1}),  # two objects: the first
        ('<think>maybe {"a": 0}?</think>{"a": 1}', {"a": 1}),
        ('reasoning that lost its opening tag {"a": 0}</think>\n{"a": 1}', {"a": 1}),
        ('{"Body": "# Title\n\n1. step"}', {"body": "# Title\n\n1. step"}),  # raw newlines; key case
        ('{"Items": [{"ID": 1}]}', {"items": [{"id": 1}]}),
    ],
)
def test_the_first_complete_object_is_found_wherever_it_stands(text, expected):
    assert json_object(text) == expected


@pytest.mark.parametrize("text", ['{"a": "cut of', "no object here", '<think>{"a": 1} still thinking', ""])
def test_no_complete_object_is_refused_never_repaired(text):
    with pytest.raises(NoObject):
        json_object(text)


def test_thinking_is_removed_and_an_unclosed_thought_leaves_nothing():
    assert without_thinking("<think>hm</think>\nanswer") == "answer"
    assert without_thinking("answer <thinking>and then") == "answer"


@pytest.mark.parametrize("text", ["NOOP", "noop.", "`NOOP`", "**None**", "Nothing!", "<think>x</think> none", "[]"])
def test_words_for_nothing(text):
    assert says_nothing(text)


@pytest.mark.parametrize("text", ["NOOP is not right here", "no", '{"noop": true}'])
def test_an_answer_that_says_more_is_not_nothing(text):
    assert not says_nothing(text)


class Shape(BaseModel):
    ids: Batch[int] = []
    tags: TextList = []


def test_a_batch_drops_only_its_bad_items_and_lists_split_from_strings():
    shape = Shape.model_validate({"ids": ["41", "x", 7, None, 3.0], "tags": "billing, invoices; tax\n- audits"})

    assert shape.ids == [41, 7, 3]
    assert shape.tags == ["billing", "invoices", "tax", "audits"]
    assert Shape.model_validate({"ids": "41, 7", "tags": "none"}).model_dump() == {"ids": [41, 7], "tags": []}
