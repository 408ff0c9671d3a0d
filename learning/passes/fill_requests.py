"""The embedding fill's requests: one minute's budget, batches, refusal isolation, long rows.

See ``embed_fill`` for the rules; this module is how one minute sends what it sends.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core import events
from core.providers.embeddings.base import Embedder
from core.providers.errors import ConfigurationError, RefusedError, TransientError
from core.vectors import pool, usable
from knowledge.models import Page
from learning.events import MemoryFillInputContinued, MemoryFillVectorUnusable
from learning.models import DiaryEntry, Episode
from learning.passes import fill_ledger
from learning.transcripts.models import Shard

_REF = {DiaryEntry: "diary", Episode: "episode"}

log = logging.getLogger("learning.passes.embed_fill")

HOLD = timedelta(hours=1)  # a refused or directionless row is offered again after an hour
ALONE = {"alone": True}  # ``embed_pieces`` of a row refused alone: after its hour it is offered alone again
PROBE_WORD = "hello"  # the one plain word that judges a first refusal
MAX_INPUTS_PER_REQUEST = 256


class EndMinute(Exception):
    """Not about any row: the minute ends for every seat, resuming at this seat next minute."""

    def __init__(self, why: str, *, pause: bool = False):
        super().__init__(why)
        self.why, self.pause = why, pause


class RanOut(Exception):
    """The minute's requests or bytes are spent."""


# ---- rows ----------------------------------------------------------------------------------------


@dataclass
class Row:
    obj: DiaryEntry | Episode | Shard | Page
    text: str
    pieces: list[str]

    @property
    def ref(self) -> str:
        return f"{_REF.get(type(self.obj), type(self.obj)._meta.model_name)}:{self.obj.pk}"

    @property
    def nbytes(self) -> int:
        return sum(_bytes(p) for p in self.pieces)

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


# ---- the minute ------------------------------------------------------------------------------------


@dataclass
class Minute:
    """One sender's share of the wall-clock minute ``started``: every request is charged to the
    minute's ledger (``fill_ledger``) before it is sent; ``report`` counts what this sender sent."""

    embedder: Embedder
    now: datetime
    started: datetime  # the wall-clock minute whose budget this is
    max_requests: int
    max_bytes: int
    request_bytes: int
    answers: int = 0
    report: dict = field(default_factory=lambda: {
        "requests": 0, "bytes": 0, "filled": 0, "held_refused": 0, "held_unusable": 0, "held_empty": 0,
        "continued": 0,
        "held": [], "judged": None,
    })

    def request(self, texts: list[str]) -> list[list[float]]:
        """One request, charged to the minute before it is sent; typed failures become the minute's end."""
        size = sum(_bytes(t) for t in texts)
        if not fill_ledger.charge(self.started, size, max_requests=self.max_requests, max_bytes=self.max_bytes):
            raise RanOut()
        self.report["requests"] += 1
        self.report["bytes"] += size
        try:
            vectors = self.embedder.embed_batch(list(texts))
        except RefusedError:
            self.answers += 1
            raise
        except TransientError as exc:  # rate limit, timeout, 5xx, network
            raise EndMinute(f"{exc.kind}: {exc}") from None
        except ConfigurationError as exc:  # a refused key, a model the endpoint does not serve
            raise EndMinute(f"configuration: {exc}") from None
        except Exception as exc:
            log.warning("embedder failed unexpectedly", exc_info=True)
            raise EndMinute(f"error: {type(exc).__name__}: {exc}") from None
        self.answers += 1
        if len(vectors) != len(texts) or any(v is not None and len(v) not in (0, self.embedder.dim) for v in vectors):
            raise EndMinute(f"configuration: the embedder answered {len(vectors)} vectors of another width or count")
        return vectors

    def judge_first_refusal(self) -> None:
        """A refusal that is the minute's first answer: one plain word alone says whose it is."""
        if self.answers != 1 or self.report["judged"] is not None:
            return
        try:
            self.request([PROBE_WORD])
        except RefusedError:
            self.report["judged"] = "configuration"
            raise EndMinute("configuration refused: one plain word was refused too", pause=True) from None
        self.report["judged"] = "notes"


def hold(row: Row, minute: Minute, *, reason: str, pieces: dict | None = None, piece: int | None = None) -> None:
    """Hold one row back an hour (refused alone, no direction, or nothing to embed)."""
    type(row.obj).objects.filter(pk=row.obj.pk).update(embed_held_until=minute.now + HOLD, embed_pieces=pieces)
    minute.report[f"held_{reason}"] += 1
    where = {} if piece is None else {"piece": piece, "pieces_total": len(row.pieces)}
    minute.report["held"].append({"row": row.ref, "reason": reason, "bytes": row.nbytes, **where})
    if reason == "unusable":
        events.publish(MemoryFillVectorUnusable(row=row.ref, bytes=row.nbytes, **where), seat=getattr(row.obj, "seat", None))
    else:
        log.warning("embedding fill: %s (%d bytes) %s; held back for an hour", row.ref, row.nbytes, reason)


def refused_alone(obj) -> bool:
    """Whether the row was refused alone (and so, once its hour is up, is offered alone again)."""
    return isinstance(obj.embed_pieces, dict) and obj.embed_pieces.get("alone") is True


def store(row: Row, vector: list[float], minute: Minute) -> None:
    """Setting the vector clears the hold and any kept pieces."""
    type(row.obj).objects.filter(pk=row.obj.pk).update(
        embedding=list(vector), embedding_model=minute.embedder.model, embedding_dim=len(vector),
        embed_held_until=None, embed_pieces=None,
    )
    minute.report["filled"] += 1


def send_rows(rows: list[Row], minute: Minute) -> None:
    """One batch; a refusal is judged (first answer) and then isolated by halves."""
    try:
        vectors = minute.request([p for r in rows for p in r.pieces])
    except RefusedError:
        minute.judge_first_refusal()
        if len(rows) == 1:
            hold(rows[0], minute, reason="refused", pieces=ALONE)
            return
        half = len(rows) // 2
        send_rows(rows[:half], minute)
        send_rows(rows[half:], minute)
        return
    at = 0
    for row in rows:
        mine, at = vectors[at : at + len(row.pieces)], at + len(row.pieces)
        if not all(usable(v) for v in mine):
            hold(row, minute, reason="unusable")
            continue
        vector = mine[0] if len(mine) == 1 else pool(mine, [len(p) for p in row.pieces])
        store(row, vector, minute) if vector is not None else hold(row, minute, reason="unusable")


# ---- long rows: a request at a time, across minutes ---------------------------------------------------


def is_long(row: Row, minute: Minute) -> bool:
    return row.nbytes > minute.request_bytes or len(row.pieces) > MAX_INPUTS_PER_REQUEST or bool(kept(row, minute))


def kept(row: Row, minute: Minute) -> list[list[float]]:
    """The piece vectors already in, when they are of this model, width and text."""
    state = row.obj.embed_pieces or {}
    if (state.get("model"), state.get("dim"), state.get("sha")) != (minute.embedder.model, minute.embedder.dim, row.sha):
        return []
    return [list(v) for v in state.get("vectors") or []]


def _pieces_state(row: Row, minute: Minute, vectors: list) -> dict | None:
    if not vectors:
        return None
    return {"model": minute.embedder.model, "dim": minute.embedder.dim, "sha": row.sha, "vectors": vectors}


def _chunk(pieces: list[str], budget: int) -> list[str]:
    out: list[str] = []
    size = 0
    for piece in pieces[:MAX_INPUTS_PER_REQUEST]:
        if out and size + _bytes(piece) > budget:
            break
        out.append(piece)
        size += _bytes(piece)
    return out


def send_pieces(chunk: list[str], minute: Minute, out: list) -> str | None:
    """Send pieces in order, appending accepted vectors to ``out``; the first failure's reason or None."""
    try:
        vectors = minute.request(chunk)
    except RefusedError:
        minute.judge_first_refusal()
        if len(chunk) == 1:
            return "refused"
        half = len(chunk) // 2
        return send_pieces(chunk[:half], minute, out) or send_pieces(chunk[half:], minute, out)
    for vector in vectors:
        if not usable(vector):
            return "unusable"
        out.append(list(vector))
    return None


def send_long(row: Row, minute: Minute) -> None:
    """This minute's request for a long row: the next pieces; pooled whole once every piece is in."""
    done = kept(row, minute)
    chunk = _chunk(row.pieces[len(done):], minute.request_bytes)
    accepted: list = []
    failure = None
    try:
        failure = send_pieces(chunk, minute, accepted)
    finally:
        vectors = done + accepted
        if failure is None and accepted and len(vectors) < len(row.pieces):
            type(row.obj).objects.filter(pk=row.obj.pk).update(embed_pieces=_pieces_state(row, minute, vectors))
    if failure is not None:
        hold(row, minute, reason=failure, pieces=_pieces_state(row, minute, vectors), piece=len(vectors))
        return
    if len(vectors) == len(row.pieces):
        vector = pool(vectors, [len(p) for p in row.pieces])
        store(row, vector, minute) if vector is not None else hold(row, minute, reason="unusable")
        return
    minute.report["continued"] += 1
    events.publish(
        MemoryFillInputContinued(row=row.ref, pieces_in=len(vectors), pieces_total=len(row.pieces), bytes=row.nbytes),
        seat=getattr(row.obj, "seat", None),
    )


def fill_rows(rows, minute: Minute) -> None:
    """Batch a seat's rows within the per-request share; long rows go a request at a time, and a row
    refused alone before is sent alone."""
    batch: list[Row] = []

    def flush():
        if batch:
            send_rows(list(batch), minute)
            batch.clear()

    for row in rows:
        if not row.pieces:
            hold(row, minute, reason="empty")
            continue
        if is_long(row, minute):
            flush()
            send_long(row, minute)
            continue
        if refused_alone(row.obj):  # refused alone before: offered alone, never again with its neighbours
            flush()
            send_rows([row], minute)
            continue
        if batch and (sum(r.nbytes for r in batch) + row.nbytes > minute.request_bytes
                      or sum(len(r.pieces) for r in batch) + len(row.pieces) > MAX_INPUTS_PER_REQUEST):
            flush()
        batch.append(row)
    flush()
