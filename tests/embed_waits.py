"""An embed that waits for the code under test to do something first, and the ranking-by-words
statements to watch for: how the tests show a search ranks by words while its query embeds."""

from __future__ import annotations

import threading

from core.providers.embeddings import get_embedder


def embed_waits_for(event: threading.Event, monkeypatch) -> dict:
    """The embedder's batches wait (at most 30 s) for ``event``; ``seen["meanwhile"]``: whether it came."""
    seen: dict = {}
    embedder = get_embedder()
    embed_batch = embedder.embed_batch

    def waiting(texts):
        seen["meanwhile"] = event.wait(timeout=30)
        return embed_batch(texts)

    monkeypatch.setattr(embedder, "embed_batch", waiting)
    return seen


def words_ranking_table(sql: str) -> str | None:
    """The table a ranking-by-words statement reads (``core.hybrid.by_words``), or None for another statement."""
    if not sql.startswith("WITH stats AS"):
        return None
    return next((t for t in ("agent_diary", "episodes", "knowledge_page") if f"FROM {t} t" in sql), None)


def watching_words(tables: set[str]):
    """An execute wrapper listing the tables ranked by words, in order, and an event set once every one of
    ``tables`` has been: ``(wrapper, ranked, done)``."""
    ranked: list[str] = []
    done = threading.Event()

    def wrapper(execute, sql, params, many, context):
        out = execute(sql, params, many, context)
        if table := words_ranking_table(sql):
            ranked.append(table)
            if tables <= set(ranked):
                done.set()
        return out

    return wrapper, ranked, done


def ranked_while_embedding(tables: set[str], monkeypatch, run):
    """``run()`` with an embed that waits until every one of ``tables`` has been ranked by words (a ranking
    made only after the vector would leave it waiting in vain): ``(run's result, whether the wait ended so,
    the tables ranked by words, in order)``."""
    from django.db import connection

    watch, ranked, done = watching_words(tables)
    seen = embed_waits_for(done, monkeypatch)
    with connection.execute_wrapper(watch):
        result = run()
    return result, seen.get("meanwhile"), ranked
