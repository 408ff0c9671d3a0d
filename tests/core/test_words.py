"""One stopword list, one notion of a content word and of a sentence, one slug (core.words), shared by every purpose."""

import pytest

from core import words
from learning.purposes import knowledge_query, memory_relevance_filter
from learning.purposes.offline import heuristics
from learning.transcripts.artifacts import draft


def test_content_words_are_distinct_in_order_and_identifiers_can_be_left_out():
    text = "How do we cut the 2026 release branch for PLAT-7? Cut it today, thanks!"
    assert words.content_words(text) == ["cut", "2026", "release", "branch", "plat-7", "today"]
    assert words.content_words(text, identifiers=False) == ["cut", "release", "branch", "today"]


def test_a_possessive_is_its_owner_and_a_contraction_is_a_stopword():
    assert words.words("Carol's runbook") == ["carol", "runbook"]
    assert words.content_words("don't it's we're let's") == []
    assert words.content_words("don’t it’s Carol’s runbook") == ["carol", "runbook"]  # as a chat client types them


def test_the_turn_start_and_reflection_heuristics_read_the_same_words():
    ask = "How should we rotate the payment signing key?"
    expected = " ".join(words.content_words(ask)[: knowledge_query.KNOWLEDGE_QUERY_WORDS])
    assert knowledge_query._offline_knowledge_query(knowledge_query.Inputs(ask=ask)) == expected == "rotate payment signing key"
    assert memory_relevance_filter.content_words(ask) == set(words.content_words(ask))
    assert heuristics.words(ask) >= set(words.content_words(ask))


def test_one_slug_with_each_callers_length():
    assert words.slug("Cut the release -- branch!") == "cut-the-release-branch"
    assert len(words.slug("x" * 200)) == words.SLUG_CHARS
    assert draft.slug("!!!") == "lesson" and len(draft.slug("y" * 200)) == 60


def test_a_plural_meets_its_singular_and_a_singular_ending_in_s_is_kept():
    assert [words.stem(w) for w in ("flights", "baggages", "batches", "policies", "status", "class", "analysis")] \
        == ["flight", "baggage", "batch", "policy", "status", "class", "analysis"]


@pytest.mark.parametrize("text, expected", [
    ("Run `python manage.py check` first. Then push!", ["Run `python manage.py check` first.", "Then push!"]),
    ("Use Python 3.12, e.g. from pyenv. Dr. Patel said so", ["Use Python 3.12, e.g. from pyenv.", "Dr. Patel said so"]),
    ("We moved to the U.S. in 2019. Really?\nyes", ["We moved to the U.S. in 2019.", "Really?", "yes"]),
])
def test_a_sentence_ends_at_its_mark_and_white_space_not_at_a_dot_inside_a_word(text, expected):
    assert words.sentences(text) == expected
