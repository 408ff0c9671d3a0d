"""PostgreSQL keeps a row's vector in the row (``core.vector_storage``): with the packaged model's
384-float vectors beside a long turn's texts, pgvector's own storage moved the vector out of line, and
every similarity scan read it back through the TOAST table."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from crewlet.config import schema
from learning import episodes
from learning.models import DiaryEntry, Episode
from tests.learning.memory_rows import episode, note

pytestmark = pytest.mark.skipif("connection.vendor != 'postgresql'")

WIDE = schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")},
                        embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-384", dimensions=384))
# texts that do not compress: a row this long is past the TOAST threshold with its vector beside it
LONG_ASK = "The billing export failed: " + " ".join(f"case-{i * 7919 % 10007}" for i in range(90))
LONG_NOTE = "Ana wants the billing export report on Mondays; " + " ".join(f"ref-{i * 6151 % 9973}" for i in range(110))


def out_of_line(table: str, row_id: int) -> bool:
    if connection.pg_version < 170000:
        pytest.skip("which value is stored out of line is told by pg_column_toast_chunk_id, PostgreSQL 17 and later")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL FROM {table} WHERE id = %s", [row_id])
        return cursor.fetchone()[0]


@pytest.fixture
def wide_vectors(serve_config):
    serve_config(providers=WIDE)


def test_a_long_turns_384_float_vector_is_kept_in_its_row_and_found(seat, wide_vectors):
    turn = episode(seat, ask=LONG_ASK, did="Restarted the export and told Ana.", run_id="long-1")
    assert turn.embedding_dim == 384
    assert not out_of_line("episodes", turn.pk)
    found = episodes.recall(seat=seat, vector=list(turn.embedding), model="hashing-384", query="billing export")
    assert [e.pk for e in found.turns] == [turn.pk]


@pytest.mark.django_db(transaction=True)
def test_vectors_stored_out_of_line_before_the_migration_are_moved_into_their_rows(seat, serve_config):
    from core.providers.embeddings import reset_embedder

    call_command("migrate", "learning", "0018_postings_row_length", verbosity=0)
    try:
        serve_config(providers=WIDE)
        reset_embedder()
        turn = episode(seat, ask=LONG_ASK, did="Restarted the export.", run_id="before-1")
        memo = note(seat, LONG_NOTE)
        assert out_of_line("episodes", turn.pk) and out_of_line("agent_diary", memo.pk)  # pgvector's own storage
        before = list(Episode.objects.get(pk=turn.pk).embedding)
    finally:
        call_command("migrate", verbosity=0)
    assert not out_of_line("episodes", turn.pk)
    assert not out_of_line("agent_diary", memo.pk)
    assert list(Episode.objects.get(pk=turn.pk).embedding) == before  # the same vector, now in its row
    assert DiaryEntry.objects.get(pk=memo.pk).embedding_dim == 384
