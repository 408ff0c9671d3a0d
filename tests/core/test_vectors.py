import numpy as np
import pytest
from django.utils import timezone

from core.vectors import CosineDistance, nearest, nearest_rows, pool, ranked_ids, split_words, usable
from learning.models import DiaryEntry


def _rows(seat, vectors, model="m-a"):
    now = timezone.now()
    rows = []
    for i, v in enumerate(vectors):
        entry = DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=f"note {i}", created_at=now)
        entry.set_vector(v.tolist(), model)
        rows.append(entry)
    return DiaryEntry.objects.bulk_create(rows)


def test_cosine_ranking_in_sql_equals_numpy_ranking(seat):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 32)).astype(np.float32)
    rows = _rows(seat, vectors)
    query = rng.normal(size=32).astype(np.float32)

    ranked = list(nearest(DiaryEntry.objects.filter(seat=seat), query.tolist(), "m-a").values_list("id", "distance"))

    sims = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    expected = [rows[i].id for i in np.argsort(-sims, kind="stable")]
    assert [r[0] for r in ranked] == expected
    np.testing.assert_allclose([r[1] for r in ranked], np.sort(1 - sims), atol=1e-4)


def test_rows_of_another_model_never_match(seat):
    rng = np.random.default_rng(1)
    _rows(seat, rng.normal(size=(5, 8)), model="m-a")
    other = _rows(seat, rng.normal(size=(5, 8)), model="m-b")
    hits = nearest(DiaryEntry.objects.filter(seat=seat), rng.normal(size=8).tolist(), "m-a")
    assert hits.count() == 5
    assert not set(hits.values_list("id", flat=True)) & {r.id for r in other}


def test_rows_without_a_vector_are_excluded(seat):
    rng = np.random.default_rng(2)
    _rows(seat, rng.normal(size=(3, 8)))
    DiaryEntry.objects.create(seat=seat, kind=DiaryEntry.LONG, content="no vector", created_at=timezone.now())
    hits = nearest(DiaryEntry.objects.filter(seat=seat), rng.normal(size=8).tolist(), "m-a")
    assert hits.count() == 3
    assert "no vector" not in hits.values_list("content", flat=True)


def test_a_row_of_another_width_yields_null_distance_instead_of_an_error(seat):
    rng = np.random.default_rng(3)
    _rows(seat, rng.normal(size=(2, 8)))
    _rows(seat, rng.normal(size=(2, 16)))
    dists = list(
        DiaryEntry.objects.filter(seat=seat).annotate(d=CosineDistance("embedding", rng.normal(size=8).tolist())).values_list("d", flat=True)
    )
    assert sum(d is None for d in dists) == 2 and sum(d is not None for d in dists) == 2


def test_distance_filter_works_in_sql(seat):
    _rows(seat, np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]))
    close = nearest(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a").filter(distance__lt=0.1)
    assert sorted(close.values_list("content", flat=True)) == ["note 0", "note 2"]


def test_vector_round_trips_through_the_column(seat):
    _rows(seat, np.array([[0.25, -0.5, 1.0]]))
    assert DiaryEntry.objects.get(seat=seat).embedding == pytest.approx([0.25, -0.5, 1.0])


@pytest.mark.parametrize("vector", [[0.0, 0.0, 0.0], [float("nan"), 1.0], [float("inf"), 0.0], []])
def test_zero_or_non_finite_vectors_are_no_vector(vector):
    assert not usable(vector)


def test_split_between_words_and_pool():
    text = " ".join(f"word{i}" for i in range(100))
    pieces = split_words(text, 50)
    assert all(len(p) <= 50 for p in pieces)
    assert " ".join(pieces) == text
    pooled = pool([[1.0, 0.0], [0.0, 1.0]], [1, 1])
    assert pooled == pytest.approx([2**-0.5, 2**-0.5])
    assert pool([[0.0, 0.0]]) is None


def test_ranked_ids_gives_numpys_top_k_with_distances(seat):
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(200, 24)).astype(np.float32)
    rows = _rows(seat, vectors)
    _rows(seat, rng.normal(size=(20, 24)), model="m-b")  # another model: never ranked
    query = rng.normal(size=24).astype(np.float32)

    ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), query.tolist(), "m-a", limit=50)

    sims = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    order = np.argsort(-sims, kind="stable")[:50]
    assert [i for i, _ in ranked] == [rows[k].id for k in order]
    np.testing.assert_allclose([d for _, d in ranked], 1 - sims[order], atol=1e-4)


def test_ranked_ids_drops_rows_past_the_distance_and_rows_of_another_width(seat):
    near = _rows(seat, np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]]))
    wrong_width = _rows(seat, np.array([[1.0, 0.0, 0.0]]))
    DiaryEntry.objects.filter(pk=wrong_width[0].pk).update(embedding_dim=2)  # a row whose width lies

    ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a", limit=10, max_distance=0.5)

    assert [i for i, _ in ranked] == [near[0].id, near[1].id]
    assert ranked[0][1] == pytest.approx(0.0, abs=1e-6)


def test_ranked_ids_skips_a_missing_vector_under_a_width_inside_a_transaction_that_goes_on(seat):
    """A row claiming a width with no vector (or a vector of another width) ranks nowhere and breaks
    neither the ranking nor the transaction it runs in."""
    from django.db import transaction

    with transaction.atomic():
        near = _rows(seat, np.array([[1.0, 0.0], [0.6, 0.4]]))
        hollow = _rows(seat, np.array([[0.9, 0.1]]))
        DiaryEntry.objects.filter(pk=hollow[0].pk).update(embedding=None)  # embedding_dim still says 2
        lying = _rows(seat, np.array([[1.0, 0.0, 0.0]]))
        DiaryEntry.objects.filter(pk=lying[0].pk).update(embedding_dim=2)

        ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a", limit=10)
        after = _rows(seat, np.array([[0.0, 1.0]]))  # the transaction still takes writes

    assert [i for i, _ in ranked] == [near[0].id, near[1].id]
    assert DiaryEntry.objects.filter(pk=after[0].pk).exists()


def _numpy_top(rows, vectors, query, keep, limit=50):
    sims = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    order = [k for k in np.argsort(-sims, kind="stable") if keep(rows[k])][:limit]
    return [rows[k].id for k in order]


def test_ranked_ids_ranks_within_any_filter_shape_the_queryset_has(seat, other_seat):
    """The one-table fast path (only the WHERE compiled) and the whole compiler (a join) rank alike."""
    from django.db.models import Q

    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(120, 16)).astype(np.float32)
    rows = _rows(seat, vectors[:80]) + _rows(other_seat, vectors[80:])
    soon = timezone.now() + timezone.timedelta(days=1)
    expired = {r.id for r in rows[::7]}
    DiaryEntry.objects.filter(id__in=expired).update(ttl_until=timezone.now() - timezone.timedelta(days=1))
    DiaryEntry.objects.filter(id__in=[r.id for r in rows[1::7]]).update(ttl_until=soon)
    query = rng.normal(size=16).astype(np.float32)
    live = Q(ttl_until__isnull=True) | Q(ttl_until__gt=timezone.now())

    scoped = {
        "one seat, live (an OR and a datetime)": (DiaryEntry.objects.filter(seat=seat).filter(live),
                                                 lambda r: r.seat_id == seat.id and r.id not in expired),
        "by the seat's handle (a join)": (DiaryEntry.objects.filter(seat__handle=other_seat.handle),
                                          lambda r: r.seat_id == other_seat.id),
        "everything but one seat (an exclude)": (DiaryEntry.objects.exclude(seat=seat),
                                                 lambda r: r.seat_id != seat.id),
        "no filter at all": (DiaryEntry.objects.all(), lambda r: True),
    }
    for label, (queryset, keep) in scoped.items():
        ranked = ranked_ids(queryset, query.tolist(), "m-a", limit=50)
        assert [i for i, _ in ranked] == _numpy_top(rows, vectors, query, keep), label
    assert ranked_ids(DiaryEntry.objects.filter(id__in=[]), query.tolist(), "m-a", limit=5) == []


def test_ranked_ids_is_one_statement_that_reads_no_vector(seat):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _rows(seat, np.random.default_rng(6).normal(size=(30, 8)))
    with CaptureQueriesContext(connection) as queries:
        ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0] * 8, "m-a", limit=10)
    assert len(ranked) == 10 and len(queries.captured_queries) == 1
    select_list = queries.captured_queries[0]["sql"].split(" FROM ")[0]
    # the distance (and on PostgreSQL its width guard); the column itself never selected
    assert select_list.count("embedding") == (2 if connection.vendor == "postgresql" else 1)
    assert "embedding_model" not in select_list


def test_nearest_rows_are_read_without_their_vectors(seat):
    _rows(seat, np.array([[1.0, 0.0], [0.8, 0.2], [0.0, 1.0]]))

    rows = nearest_rows(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a", limit=2)

    assert [r.content for r in rows] == ["note 0", "note 1"]
    assert rows[0].distance == pytest.approx(0.0, abs=1e-6)
    assert "embedding" in rows[0].get_deferred_fields()


@pytest.mark.postgres_only
def test_postgres_connections_use_pgvectors_binary_adapters(seat, require_postgres):
    from django.db import connection
    from pgvector import Vector

    _rows(seat, np.array([[0.25, -0.5, 1.0]]))
    raw = connection.connection
    assert raw.adapters.types.get("vector") is not None  # registered on connect (or on first vector query)
    import psycopg

    with psycopg.Cursor(raw) as cursor:
        cursor.execute("SELECT embedding FROM agent_diary WHERE seat_id = %s", [seat.id], binary=True)
        (value,) = cursor.fetchone()
    assert isinstance(value, Vector) and value.to_list() == pytest.approx([0.25, -0.5, 1.0])
    # a query vector bound as %s (ranked_ids binds server-side) is dumped in pgvector's binary format
    from psycopg.adapt import PyFormat

    assert raw.adapters.get_dumper(Vector, PyFormat.AUTO).format == psycopg.pq.Format.BINARY


def test_nearest_ranks_in_sql_after_a_ranked_ids_call_on_the_same_connection(seat):
    """ranked_ids registers pgvector's adapters on the connection; the ORM's ranking keeps working after."""
    rows = _rows(seat, np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert [i for i, _ in ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.1], "m-a", limit=2)] == [r.id for r in rows]
    ranked = list(nearest(DiaryEntry.objects.filter(seat=seat), [0.1, 1.0], "m-a").values_list("id", flat=True))
    assert ranked == [rows[1].id, rows[0].id]


def test_ranking_holds_on_a_connection_with_pgvectors_adapters(seat):
    """A fresh process's connection registers pgvector's adapters as it opens (crewlet.apps): the
    ORM's ranking must still compile there (it hashes the ORDER BY's parameters)."""
    from django.db import connection

    from core.vectors import register_pgvector

    if connection.vendor == "postgresql":
        assert register_pgvector(connection)
    _rows(seat, np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]))
    ranked = nearest(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a")
    assert list(ranked.values_list("content", flat=True)) == ["note 0", "note 2", "note 1"]


def test_a_remembered_statement_ranks_each_calls_own_seat_model_and_cut_off(seat, other_seat, monkeypatch):
    """The ranking is compiled once per queryset shape; a later call of the same shape, with another
    seat, model or cut-off time, ranks its own rows (it is never compiled again)."""
    from django.db.models import Q

    import core.vectors

    rng = np.random.default_rng(8)
    mine, theirs = rng.normal(size=(40, 12)).astype(np.float32), rng.normal(size=(40, 12)).astype(np.float32)
    mine_rows, their_rows = _rows(seat, mine, model="m-a"), _rows(other_seat, theirs, model="m-b")
    _rows(other_seat, rng.normal(size=(10, 12)), model="m-a")  # the other seat's rows of the first model
    now = timezone.now()
    early = {r.id for r in their_rows[::3]}  # expire between the two cut-offs below
    DiaryEntry.objects.filter(id__in=early).update(ttl_until=now + timezone.timedelta(hours=1))
    query = rng.normal(size=12).astype(np.float32)

    def live(when):
        return Q(ttl_until__isnull=True) | Q(ttl_until__gt=when)

    first = ranked_ids(DiaryEntry.objects.filter(seat=seat).filter(live(now)), query.tolist(), "m-a", limit=20)
    assert [i for i, _ in first] == _numpy_top(mine_rows, mine, query, lambda r: True, limit=20)

    def no_compile(*args, **kwargs):
        raise AssertionError("a remembered shape was compiled again")

    monkeypatch.setattr(core.vectors, "_scope", no_compile)
    before = ranked_ids(DiaryEntry.objects.filter(seat=other_seat).filter(live(now)), query.tolist(), "m-b", limit=20)
    later = now + timezone.timedelta(hours=2)
    after = ranked_ids(DiaryEntry.objects.filter(seat=other_seat).filter(live(later)), query.tolist(), "m-b", limit=20)

    assert [i for i, _ in before] == _numpy_top(their_rows, theirs, query, lambda r: True, limit=20)
    assert [i for i, _ in after] == _numpy_top(their_rows, theirs, query, lambda r: r.id not in early, limit=20)


def test_ranked_ids_is_seen_by_execute_wrappers_and_refused_in_a_broken_transaction(seat):
    """The ranking runs on the connection's own transaction, as every other statement: an execute
    wrapper sees it, and a transaction marked for rollback refuses it."""
    from django.db import connection, transaction
    from django.db.transaction import TransactionManagementError

    rows = _rows(seat, np.array([[1.0, 0.0], [0.0, 1.0]]))
    seen = []

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.1], "m-a", limit=5)
    assert [i for i, _ in ranked] == [rows[0].id, rows[1].id]
    assert len(seen) == 1 and "crewlet_distance" in seen[0]

    with transaction.atomic():
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.1], "m-a", limit=5)
