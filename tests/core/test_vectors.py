import numpy as np
import pytest
from django.utils import timezone

from core.vectors import nearest, nearest_rows, pool, ranked_ids, split_words, usable
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


def test_rows_of_another_width_are_not_compared(seat):
    rng = np.random.default_rng(3)
    same = _rows(seat, rng.normal(size=(2, 8)))
    _rows(seat, rng.normal(size=(2, 16)))
    hits = nearest(DiaryEntry.objects.filter(seat=seat), rng.normal(size=8).tolist(), "m-a")
    assert sorted(hits.values_list("id", flat=True)) == sorted(r.id for r in same)


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
    _rows(seat, np.array([[1.0, 0.0, 0.0]]))

    ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a", limit=10, max_distance=0.5)

    assert [i for i, _ in ranked] == [near[0].id, near[1].id]
    assert ranked[0][1] == pytest.approx(0.0, abs=1e-6)


def _numpy_top(rows, vectors, query, keep, limit=50):
    sims = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    order = [k for k in np.argsort(-sims, kind="stable") if keep(rows[k])][:limit]
    return [rows[k].id for k in order]


def test_ranked_ids_ranks_within_any_filter_shape_the_queryset_has(seat, other_seat):
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
    assert select_list.count("embedding") == 1  # the distance; the column itself never selected
    assert "embedding_model" not in select_list


def test_nearest_rows_are_read_without_their_vectors(seat):
    _rows(seat, np.array([[1.0, 0.0], [0.8, 0.2], [0.0, 1.0]]))

    rows = nearest_rows(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a", limit=2)

    assert [r.content for r in rows] == ["note 0", "note 1"]
    assert rows[0].distance == pytest.approx(0.0, abs=1e-6)
    assert "embedding" in rows[0].get_deferred_fields()


def test_nearest_ranks_in_sql_after_a_ranked_ids_call_on_the_same_connection(seat):
    rows = _rows(seat, np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert [i for i, _ in ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.1], "m-a", limit=2)] == [r.id for r in rows]
    ranked = list(nearest(DiaryEntry.objects.filter(seat=seat), [0.1, 1.0], "m-a").values_list("id", flat=True))
    assert ranked == [rows[1].id, rows[0].id]


def test_ranking_holds_on_a_connection_with_pgvectors_adapters(seat):
    """A connection registers pgvector's adapters as it opens (crewlet.apps); the ORM's ranking still compiles."""
    from django.db import connection

    from core.vectors import register_pgvector

    assert register_pgvector(connection)
    _rows(seat, np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]))
    ranked = nearest(DiaryEntry.objects.filter(seat=seat), [1.0, 0.0], "m-a")
    assert list(ranked.values_list("content", flat=True)) == ["note 0", "note 2", "note 1"]


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
    assert len(seen) == 1 and "<=>" in seen[0]

    with transaction.atomic():
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            ranked_ids(DiaryEntry.objects.filter(seat=seat), [1.0, 0.1], "m-a", limit=5)


def test_an_approximate_index_is_made_once_per_width_and_ranks_as_the_exact_scan(seat):
    from django.db import connection

    from core.vectors import ensure_index, index_name

    assert ensure_index("agent_diary", 8) is True
    assert ensure_index("agent_diary", 8) is False  # made once
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [index_name("agent_diary", 8)])
        (definition,) = cursor.fetchone()
    assert "hnsw" in definition and "embedding_dim = 8" in definition
    rng = np.random.default_rng(9)
    vectors = rng.normal(size=(60, 8)).astype(np.float32)
    rows = _rows(seat, vectors)
    query = rng.normal(size=8).astype(np.float32)
    queryset = nearest(DiaryEntry.objects.filter(seat=seat), query.tolist(), "m-a")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_diary")
        # a table this small is otherwise read and sorted: the test asks whether the index CAN serve the order
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
        assert index_name("agent_diary", 8) in queryset[:5].explain()  # the ranking's expression is the index's
        ranked = ranked_ids(DiaryEntry.objects.filter(seat=seat), query.tolist(), "m-a", limit=5)
    assert [i for i, _ in ranked] == _numpy_top(rows, vectors, query, lambda r: True, limit=5)
