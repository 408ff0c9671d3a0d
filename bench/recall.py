"""Retrieval quality of ``query_episodes`` on real conversations, through the HTTP API.

DATA is a folder holding LoCoMo-format and tau-bench-format JSON files at any depth (e.g. ``../shared/bench-data``:
``locomo/locomo-dev.json``, ``tau-bench/airline-dev.json``), or one such file; files are told by their format,
not their names (``bench_data``). A set DATA does not hold is skipped. Nothing is copied into the repo.

- LoCoMo: one seat per conversation; every dialog turn is POSTed to ``/api/v1/turns`` as a chat turn
  (the speaker as the interaction's sender, one ``reply`` tool call, a label that does not name the
  sender). ``--context 1`` (default) delivers the message the new one answers as a first interaction,
  as a chat runtime waking on a reply does; ``--context 0`` sends the message alone. Each question is
  asked through ``POST /api/v1/agents/{seat}/tools/query_episodes`` (limit 10); a question is a hit at
  k when one of its evidence turns is among the first k turns returned (a turn counts by its own
  message only, never by the context it carried), and a session hit when a returned turn lies in an
  evidence session.
- tau-bench: trials 0-2 of each task are POSTed as finished turns of one seat (the customer's
  messages as interactions, every tool call, the final answer as the account); the opening message
  of trial 3 is the query, a hit when a returned turn is a prior trial of the same task. Then each other
  trial in turn is the query, the other three stored (one seat each), and the four splits are summed: many
  openings say only "I'd like to change my flight", and which trial's openings are asked moves every
  method's figure more than the methods differ (run last: see ``tau_each_trial``).
- Close calls: ``query_episodes`` says when no turn stood out (``close_call``; the best fused score near the
  fifth's). Each set prints how many answers were close calls and how often the first turn was right among
  them and among the rest: what the warning is worth on that data.

Baselines computed in the same run with the same embedder, per conversation: numpy cosine over
``speaker: text`` (tau: over the opening messages), BM25 (``rank_bm25``) over the same texts, and
their reciprocal-rank fusion (k=60).

Latency, three rows and two ratios, every query of the run (the baseline is the vector-only path:
``core.vectors.ranked_ids`` over the seat's raw episodes' pooled vectors, same limit, same relevance
floor):

- ``query_episodes tool call (HTTP, once)``: each recall question's POST as timed in the recall loop.
- ``tool fused/vector p50`` -- the issue's target (<= 1.5x): the WHOLE tool call (embed the query,
  rank, read the rows, count the unreachable ones, render), as shipped against the same call with
  only its ranking swapped for the vector-only path by a patch inside this bench (``tool_latency``),
  interleaved query by query, best of LATENCY_REPEATS. What a caller of the tool waits for.
- ``bare SQL fused/vector p50``: the fused ranking alone (``episode_search.ranked``: two statements and
  the fusion) against the vector-only statement alone, same query vectors, interleaved (``sql_latency``). On seats of a few
  hundred rows both run in a millisecond or two and a statement's fixed costs dominate, so this ratio
  reads high though the difference is small beside a tool call, mostly spent embedding the query; it
  shows where the ranking's own cost moves.

The selection protocol: the stored turns are ranked again in SQL at each candidate value of each tuned
constant (``CONSTANTS``; the production ranking, ``episode_search.ranked``); for each split the value best
on one side is printed with its figure on the other (leave-one-conversation-out, and LoCoMo against
tau-bench both ways), beside the shipped value's.

Usage: python bench/recall.py DATA [--context 0|1] [--only locomo|tau]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import warnings
from collections import defaultdict
from typing import Any, NamedTuple

import bench_data  # the sibling module: finds the data by format

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BASELINE_RRF_K = 60

def _hybrid():
    from core import hybrid

    return hybrid


def _episode_search():
    from learning.memory import episode_search

    return episode_search


# the tuned constants of the ranking and the values the selection protocol tries
CONSTANTS = {
    "WEIGHT": (_hybrid, (0.3, 0.4, 0.5, 0.6, 0.7)),
    "SHORTLIST": (_hybrid, (20, 50, 100)),
    "RECALL_MAX_DISTANCE": (_episode_search, (0.7, 0.8, 0.9, 1.0)),
}
LATENCY_REPEATS = 3
LABEL = "Chat message"  # a runtime's label that does not name the sender
QUERY_TRIAL = 3  # tau-bench: the issue's query is the 4th trial's opening (the last trial, where there is no 4th)
TAU_ISSUE_SPLIT: list = []  # the issue's split, as ``tau`` asked it (a ``TauSplit``), for ``tau_each_trial``
# each set's seats as asked, for ``likeness``: set -> [(api, seat handle, the queries asked of it, each answer unlike?)]
ASKED: dict[str, list[tuple[Any, str, list[str], list[bool]]]] = {}


# ---- parent: the child process on DATABASE_URL or a throwaway database ---------------------------


def run_child(url: str, label: str, args) -> int:
    env = dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE="crewlet.settings", PYTHONPATH=ROOT,
               CREWLET_Q_SYNC="1", HF_HUB_OFFLINE="1", DJANGO_SECURE_SSL_REDIRECT="0")
    cmd = [sys.executable, os.path.abspath(__file__), args.data, "--child", label, "--context", str(args.context),
           "--only", args.only]
    return subprocess.call(cmd, cwd=ROOT, env=env)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--context", type=int, default=1, choices=[0, 1])
    parser.add_argument("--only", default="", choices=["", "locomo", "tau"])
    parser.add_argument("--child", default="")
    args = parser.parse_args(argv)
    args.data = os.path.abspath(args.data)
    if args.child:
        return child(args)
    return on_database(lambda url, label: run_child(url, label, args))


def on_database(run) -> int:
    """``run(url, label)`` on ``DATABASE_URL`` if set, else on a throwaway embedded PostgreSQL
    (``fresh_db``). Shared by this bench and bench/diary_recall.py."""
    label = "PostgreSQL + pgvector + tsvector"
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        return run(os.environ["DATABASE_URL"], label)
    from fresh_db import start_pgserver

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    server, url = start_pgserver()
    try:
        return run(url, label)
    finally:
        server.cleanup()


# ---- data ---------------------------------------------------------------------------------------


def dia_ids(evidence) -> list[str]:
    """Evidence ids normalised: ``'D8:6; D9:17'`` split, ``D30:05`` unpadded, anything else dropped."""
    out = []
    for item in evidence if isinstance(evidence, list) else [evidence]:
        for part in re.split(r"[;,\s]+", str(item)):
            m = re.fullmatch(r"D(\d+):(\d+)", part.strip())
            if m:
                out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])


def locomo_turns(conversation: dict) -> list[dict]:
    keys = sorted((k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    turns = []
    for key in keys:
        for t in conversation[key]:
            ids = dia_ids([t.get("dia_id", "")])
            if ids and t.get("text"):
                turns.append({"id": ids[0], "speaker": t["speaker"], "text": t["text"],
                              "date": conversation.get(f"{key}_date_time", "")})
    return turns


def tau_users(run: dict) -> list[str]:
    return [m["content"] for m in run["traj"] if m.get("role") == "user" and m.get("content")]


def tau_tools(run: dict) -> list[str]:
    return [c["function"]["name"] for m in run["traj"] if m.get("role") == "assistant"
            for c in (m.get("tool_calls") or [])]


def tau_final(run: dict) -> str:
    said = [m["content"] for m in run["traj"] if m.get("role") == "assistant" and m.get("content")]
    return said[-1] if said else ""


# ---- child --------------------------------------------------------------------------------------


class Api:
    def __init__(self, token: str):
        from django.test import Client

        self.client = Client()
        self.auth: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
        self.close_calls: list[bool] = []  # each query's answer: was it a close call (no turn stood out)?
        self.unlikes: list[bool] = []  # each query's answer: was no turn like the query at all?

    def post_turn(self, record: dict) -> None:
        response = self.client.post("/api/v1/turns", json.dumps(record), content_type="application/json", **self.auth)
        if response.status_code not in (200, 202):
            raise SystemExit(f"POST /turns answered {response.status_code}: {response.content[:300]!r}")

    def query(self, handle: str, query: str, limit: int = 10) -> tuple[list[str], float]:
        started = time.perf_counter()
        response = self.client.post(f"/api/v1/agents/{handle}/tools/query_episodes",
                                    json.dumps({"run_id": "bench", "arguments": {"query": query, "limit": limit}}),
                                    content_type="application/json", **self.auth)
        ms = (time.perf_counter() - started) * 1000
        data = response.json().get("data") or {}
        self.close_calls.append(bool(data.get("close_call")))
        self.unlikes.append(bool(data.get("unlike")))
        return [h["turn_id"] for h in data.get("hits", [])], ms


def make_seat(company, handle: str):
    from crewlet.models import ApiToken, Role, Seat, Unit

    role, _ = Role.objects.get_or_create(company=company, name="assistant")
    unit, _ = Unit.objects.get_or_create(company=company, key="bench", defaults={"name": "Bench"})
    seat = Seat.objects.create(company=company, role=role, unit=unit, handle=handle)
    _token, raw = ApiToken.issue(company=company, seat=seat)
    return seat, Api(raw)


def fill_all(seat) -> None:
    """Vectors the turn's own embed budget missed on a busy machine (the embedding fill, as scheduled)."""
    from learning.passes.embed_fill import run_fill

    for _ in range(200):
        report = run_fill(seat=seat)
        if not report.get("ran") or (report.get("filled", 0) + report.get("pieces_filled", 0)) == 0:
            return


def turn_record(seat, run_id, conversation_id, interactions, plan, tools, outcome="done", started=None) -> dict:
    return {"run_id": run_id, "seat": seat.handle, "conversation_id": conversation_id, "conversation_kind": "chat",
            "label": LABEL, "plan_summary": plan, "tool_sequence": tools[-1:] if tools else [],
            "tools_called": tools, "review_outcome": outcome, "interactions": interactions,
            **({"started_at": started, "ended_at": started} if started else {})}


def sender(name: str) -> dict:
    return {"handle": re.sub(r"\W+", "_", name.lower())[:60] or "someone", "display_name": name, "platform": "bench"}


def child(args) -> int:
    import django

    sys.path.insert(0, ROOT)
    django.setup()
    import logging

    from django.core.management import call_command

    # each turn is reflected in this process (CREWLET_Q_SYNC): django-q2's six INFO lines a task would bury the
    # figures under some 4,000 lines a run; a warning or an error still shows
    logging.getLogger("django-q").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    from learning.reflection.workers import episodist

    # The bench waits for each turn's embed rather than leaving a late one to the fill (same vectors
    # either way): on a busy machine a two-second budget would only move the work into fill_all.
    episodist.EPISODE_EMBED_BUDGET = None  # type: ignore[assignment]  # embed_many's "no budget"
    from core.providers.embeddings import get_embedder
    from crewlet.models import Company
    from demo.foundation import engine_description

    embedder = get_embedder()
    if embedder is None:
        raise SystemExit("no embedder configured: the bench compares rankings of one embedder's vectors")
    embedder.load() if hasattr(embedder, "load") else None
    print(f"\n== {args.child}: {engine_description()}; embedder {embedder.model}")
    company = Company.objects.create(name="Recall bench")
    print(f"data: {bench_data.describe(args.data)}")
    has_tau = args.only in ("", "tau") and bool(bench_data.tau(args.data))
    has_locomo = args.only in ("", "locomo") and bool(bench_data.locomo(args.data))
    if not (has_tau or has_locomo):
        raise SystemExit(f"no LoCoMo or tau-bench file under {args.data}")
    if has_tau:
        tau(args, company, embedder)
    if has_locomo:
        locomo(args, company, embedder)
    if has_tau:
        tau_each_trial(args, company, embedder)
    if has_tau and has_locomo:
        likeness(embedder.model)
        specifics(args)
    return 0


# ---- rankings -----------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def rrf(*rankings, k=BASELINE_RRF_K) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, i in enumerate(ranking[:100]):
            scores[i] += 1.0 / (k + rank + 1)
    return sorted(scores, key=lambda i: -scores[i])


class Baselines:
    """numpy cosine, BM25 and their fusion over ``texts``, same embedder as the project."""

    def __init__(self, texts: list[str], embedder):
        import numpy as np
        from rank_bm25 import BM25Okapi

        self.np = np
        self.vectors = np.asarray(embedder.embed_batch(texts))
        self.bm25 = BM25Okapi([tokens(t) or ["_"] for t in texts])

    def rank(self, query: str, qvec) -> dict[str, list[int]]:
        np = self.np
        by_cos = list(np.argsort(-(self.vectors @ np.asarray(qvec)), kind="stable"))
        by_bm25 = list(np.argsort(-self.bm25.get_scores(tokens(query)), kind="stable"))
        return {"numpy cosine": by_cos, "BM25": by_bm25, "cosine+BM25 RRF": rrf(by_cos, by_bm25)}


def p95(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def sql_latency(seat, queries, qvecs, model) -> tuple[list[float], list[float]]:
    """Each query's fused ranking (``episode_search.ranked``: two statements and the fusion) and vector-only
    path (``ranked_ids`` over ``episodes.raw``), interleaved, each the best of LATENCY_REPEATS."""
    from core.vectors import ranked_ids
    from learning.memory import episode_search, episodes

    fused, vector_only = [], []
    for q, v in zip(queries, qvecs, strict=True):  # interleaved; each the best of LATENCY_REPEATS (a shared machine)
        f = o = float("inf")
        for _ in range(LATENCY_REPEATS):
            started = time.perf_counter()
            episode_search.ranked(seat=seat, vector=v, model=model, query=q, limit=10)
            f = min(f, time.perf_counter() - started)
            started = time.perf_counter()
            ranked_ids(episodes.raw(seat), v, model, limit=10)
            o = min(o, time.perf_counter() - started)
        fused.append(f * 1000)
        vector_only.append(o * 1000)
    return fused, vector_only


def vector_only_ranked(*, seat, vector, model: str, query: str, limit: int, outcome: str | None = None,
                       ranked_words=None):
    """The vector-only baseline, in ``episode_search.ranked``'s shape: ``ranked_ids`` over the seat's raw
    episodes' pooled vectors, with the same outcome filter and relevance floor (``RECALL_MAX_DISTANCE``);
    the query's words (and a ranking of them) are not read."""
    from core.hybrid import Ranked
    from core.vectors import ranked_ids
    from learning.memory import episode_search, episodes

    rows = episodes.raw(seat)
    if outcome:
        rows = rows.filter(review_outcome=outcome)
    ranking = ranked_ids(rows, vector, model, limit=limit, max_distance=episode_search.RECALL_MAX_DISTANCE)
    return Ranked(ranking, ranking[0][1] if ranking else None)


def tool_latency(seat, queries) -> tuple[list[float], list[float], int]:
    """Each query's whole ``query_episodes`` call, once as shipped and once with its ranking swapped for
    ``vector_only_ranked`` (``unittest.mock.patch`` of ``episode_search.ranked``, the one function
    ``episodes.recall`` ranks with, only around that arm's call), interleaved query by query, each
    the best of LATENCY_REPEATS, the arms' order alternating between repeats. Both arms embed the query
    (the configured embedder, through the embed pool), rank, read the recalled rows, count the
    unreachable ones and render the hits: what a caller of the tool waits for.

    Called as the runtime's transports call it -- ``learning.tools.run``, the function both the HTTP
    view (``learning.tools.api.call_tool``) and the MCP server hand each call to -- and not through the
    test client: routing, token auth and JSON add the same work to both arms and only their own noise,
    and leaving them out makes the ratio stricter, never looser. Also answers the number of calls that
    did not answer ``ok`` (an embed past its budget answers fast and would flatter its arm)."""
    from unittest import mock

    from learning import tools
    from learning.memory import episode_search

    def call(query: str) -> tuple[float, bool]:
        started = time.perf_counter()
        result = tools.run(seat=seat, name="query_episodes", run_id="bench", arguments={"query": query, "limit": 10})
        return time.perf_counter() - started, result.ok

    swapped = mock.Mock(side_effect=vector_only_ranked)
    fused, vector_only, failed, ranked_alone = [], [], 0, 0
    for q in queries:
        f = o = float("inf")
        for repeat in range(LATENCY_REPEATS):
            for arm in ((0, 1) if repeat % 2 == 0 else (1, 0)):
                if arm == 0:
                    ms, ok = call(q)
                    f = min(f, ms)
                else:
                    with mock.patch.object(episode_search, "ranked", swapped):
                        ms, ok = call(q)
                    o = min(o, ms)
                    ranked_alone += ok
                failed += not ok
        fused.append(f * 1000)
        vector_only.append(o * 1000)
    assert swapped.call_count >= ranked_alone, "the vector-only arm did not rank through its patch"
    return fused, vector_only, failed


def constant_hits(seat, queries, qvecs, model, hit) -> dict[str, dict[object, int]]:
    """Hits@10 of the production ranking at each candidate value of each tuned constant (the others as
    shipped), ``hit(i, episode ids)`` telling a question's hit."""
    from learning.memory import episode_search

    out: dict[str, dict[object, int]] = {}
    for name, (module, values) in CONSTANTS.items():
        shipped, out[name] = getattr(module(), name), {}
        try:
            for value in values:
                setattr(module(), name, value)
                out[name][value] = sum(
                    bool(hit(i, [e for e, _ in episode_search.ranked(seat=seat, vector=v, model=model, query=q,
                                                                     limit=10).rows]))
                    for i, (q, v) in enumerate(zip(queries, qvecs, strict=True)))
        finally:
            setattr(module(), name, shipped)
    return out


def _rate(folds, names, name, value) -> float:
    """Mean hit rate of ``value`` over the folds ``names`` (each fold weighs the same)."""
    return sum(folds[f][1][name][value] / folds[f][0] for f in names) / max(1, len(names))


def print_selection(folds: dict[str, tuple[int, dict[str, dict[object, int]]]]) -> None:
    """The selection protocol: each constant's value chosen on one side (best hits@10 there, ties to the
    shipped value) and the figure it gets on the side it was not chosen on. Sides: each fold left out
    (leave-one-conversation-out), and LoCoMo against tau-bench both ways."""
    locomo = [f for f in folds if f != "tau-bench"]
    splits = [(f"leave out {f}", [g for g in folds if g != f], [f]) for f in folds]
    if locomo and "tau-bench" in folds:
        splits += [("chosen on LoCoMo, checked on tau-bench", locomo, ["tau-bench"]),
                   ("chosen on tau-bench, checked on LoCoMo", ["tau-bench"], locomo)]
    for name, (module, values) in CONSTANTS.items():
        shipped = getattr(module(), name)
        print(f"\n{name} (shipped {shipped}): hits@10 by value, the value chosen on one side, its held-out figure"
              " beside the shipped value's")
        print(f"{'split':<42} " + " ".join(f"{str(v):>6}" for v in values) + "  chosen  held-out  shipped")
        for label, chosen_on, held in splits:
            if not chosen_on:
                continue
            chosen = max(values, key=lambda v: (round(_rate(folds, chosen_on, name, v), 9), v == shipped))
            print(f"{label:<42} " + " ".join(f"{_rate(folds, held, name, v):>6.3f}" for v in values)
                  + f"  {str(chosen):>6}  {_rate(folds, held, name, chosen):>7.3f}  {_rate(folds, held, name, shipped):>7.3f}")


FOLDS: dict[str, tuple[int, dict[str, dict[object, int]]]] = {}


# ---- LoCoMo ---------------------------------------------------------------------------------------


def locomo(args, company, embedder) -> None:
    from learning.models import Episode

    conversations = bench_data.locomo(args.data)
    methods = ["project (query_episodes)", "numpy cosine", "BM25", "cosine+BM25 RRF"]
    hits: dict[str, defaultdict[int, list[int]]] = {m: defaultdict(lambda: [0, 0, 0, 0, 0]) for m in methods}  # cat -> [n, @1, @5, @10, unused]
    sessions = {m: [0, 0, 0] for m in methods}  # n, hit@1, hit@10
    tool_ms: list[float] = []
    fused_ms: list[float] = []
    vector_ms: list[float] = []
    tool_fused: list[float] = []
    tool_vector: list[float] = []
    tool_failed = 0
    close: list[bool] = []  # each question's answer a close call?
    first_in_session: list[bool] = []  # the project's first turn in an evidence session?
    started = time.monotonic()
    for n, conv in enumerate(conversations):
        turns = locomo_turns(conv["conversation"])
        seat, api = make_seat(company, f"locomo{n}")
        for i, t in enumerate(turns):
            interactions = []
            if args.context and i and session_of(turns[i - 1]["id"]) == session_of(t["id"]):
                prev = turns[i - 1]
                interactions.append({"sender": sender(prev["speaker"]), "body": prev["text"]})
            interactions.append({"sender": sender(t["speaker"]), "body": t["text"]})
            api.post_turn(turn_record(seat, f"{conv['sample_id']}:{t['id']}", f"locomo:{conv['sample_id']}",
                                      interactions, "Replied in the chat.", ["reply"]))
        fill_all(seat)
        texts = [f"{t['speaker']}: {t['text']}" for t in turns]
        ids = [t["id"] for t in turns]
        base = Baselines(texts, embedder)
        questions = [(q, set(dia_ids(q.get("evidence", []))) & set(ids)) for q in conv["qa"]]
        questions = [(q, ev) for q, ev in questions if ev]
        qvecs = embedder.embed_batch([q["question"] for q, _ in questions])
        for (q, evidence), qvec in zip(questions, qvecs, strict=True):
            returned, ms = api.query(seat.handle, q["question"])
            tool_ms.append(ms)
            ranked = {"project (query_episodes)": [r.split(":", 1)[1] for r in returned]}
            ranked.update({m: [ids[i] for i in order[:10]] for m, order in base.rank(q["question"], qvec).items()})
            ev_sessions = {session_of(e) for e in evidence}
            project = ranked["project (query_episodes)"]
            first_in_session.append(bool(project) and session_of(project[0]) in ev_sessions)
            for m, top in ranked.items():
                row = hits[m][q.get("category", 0)]
                row[0] += 1
                for j, k in enumerate((1, 5, 10)):
                    row[1 + j] += bool(set(top[:k]) & evidence)
                got = [session_of(d) for d in top]
                sessions[m][0] += 1
                sessions[m][1] += bool(got[:1] and got[0] in ev_sessions)
                sessions[m][2] += bool(set(got) & ev_sessions)
        close += api.close_calls
        ASKED.setdefault("LoCoMo", []).append((api, seat.handle, [q["question"] for q, _ in questions],
                                               list(api.unlikes)))
        f, v = sql_latency(seat, [q["question"] for q, _ in questions], qvecs, embedder.model)
        fused_ms += f
        vector_ms += v
        tf, tv, failed = tool_latency(seat, [q["question"] for q, _ in questions])
        tool_fused += tf
        tool_vector += tv
        tool_failed += failed
        by_id = dict(Episode.objects.filter(seat=seat).values_list("id", "run_id"))
        FOLDS[conv["sample_id"]] = (len(questions), constant_hits(
            seat, [q["question"] for q, _ in questions], qvecs, embedder.model,
            lambda i, got, qs=questions, ids=by_id: {ids[e].split(":", 1)[1] for e in got} & qs[i][1]))
    print(f"\n-- LoCoMo ({len(conversations)} conversations, context {args.context}, {time.monotonic() - started:.0f}s)")
    print_locomo(hits, sessions)
    print_close_calls(close, first_in_session, "a turn of an evidence session")
    print_latency(tool_ms, (tool_fused, tool_vector, tool_failed), (fused_ms, vector_ms))
    print_selection(FOLDS)


def print_locomo(hits, sessions) -> None:
    header = f"{'method':<26} {'category':<12} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6}"
    print(header)
    print("-" * len(header))
    for m, cats in hits.items():
        total = [0, 0, 0, 0]
        for cat in sorted(cats):
            row = cats[cat]
            total = [a + b for a, b in zip(total, row[:4], strict=True)]
            print(f"{m:<26} {CATEGORIES.get(cat, str(cat)):<12} {row[0]:>4} "
                  + " ".join(f"{row[j] / row[0]:>6.3f}" for j in (1, 2, 3)))
        print(f"{m:<26} {'overall':<12} {total[0]:>4} " + " ".join(f"{total[j] / total[0]:>6.3f}" for j in (1, 2, 3)))
    print(f"\n{'method':<26} {'session Hit@1':>14} {'Hit@10':>8}")
    for m, (n, h1, h10) in sessions.items():
        print(f"{m:<26} {h1 / n:>14.3f} {h10 / n:>8.3f}")
    print("targets: turn R@10 >= 0.80, session Hit@1 >= 0.70, project above every baseline in every category")


def print_latency(http_ms, tool: tuple[list[float], list[float], int], sql: tuple[list[float], list[float]]) -> None:
    """The recall loop's HTTP calls (once each), then the two same-run A/Bs: the whole tool call
    (``tool_latency``, the issue's target) and the bare statements (``sql_latency``); beside each
    ratio the median of the per-query differences (fused minus vector-only), what the fusion adds."""
    def row(name: str, ms: list[float], tail: str = "") -> None:
        print(f"{name:<40} {statistics.median(ms):>7.2f} {p95(ms):>8.2f}{tail}")

    def ratio(a: list[float], b: list[float]) -> str:
        paired = statistics.median(x - y for x, y in zip(a, b, strict=True))
        return f"{statistics.median(a) / statistics.median(b):.2f}x (paired median {paired:+.2f} ms)"

    (tool_fused, tool_vector, failed), (sql_fused, sql_vector) = tool, sql
    print(f"\n{'latency (ms)':<40} {'p50':>7} {'p95':>8}")
    row("query_episodes tool call (HTTP, once)", http_ms)
    row("query_episodes, hybrid ranking", tool_fused)
    row("query_episodes, vector-only ranking", tool_vector,
        f"   tool fused/vector p50 = {ratio(tool_fused, tool_vector)} (target <= 1.5x)"
        + (f"; {failed} call(s) not ok" if failed else ""))
    row("fused ranking alone (2 statements)", sql_fused)
    row("vector-only SQL statement alone", sql_vector,
        f"   bare SQL fused/vector p50 = {ratio(sql_fused, sql_vector)}")


# ---- tau-bench ------------------------------------------------------------------------------------


def tau(args, company, embedder) -> None:
    runs = bench_data.tau(args.data)
    started = time.monotonic()
    split = tau_split(runs, query_trial(runs), company, "airline", embedder)
    seat, queries, opening = split.seat, split.queries, [tau_users(r)[0] for r in split.queries]
    sql = sql_latency(seat, opening, split.qvecs, embedder.model)
    tool = tool_latency(seat, opening)
    from learning.models import Episode

    by_id = dict(Episode.objects.filter(seat=seat).values_list("id", "run_id"))
    FOLDS["tau-bench"] = (len(queries), constant_hits(
        seat, opening, split.qvecs, embedder.model,
        lambda i, got: queries[i]["task_id"] in {int(by_id[e].split(":")[1]) for e in got}))
    stored = sum(1 for r in runs if r["trial"] != split.trial and tau_users(r))
    print(f"\n-- tau-bench airline ({stored} stored runs, {len(queries)} queries, "
          f"{time.monotonic() - started:.0f}s)")
    print_tau(split.hits, len(queries))
    print("targets: same-task @1 >= 0.85, @3 >= 0.95")
    print_close_calls(split.close_calls, split.first, "a prior trial of the same task")
    print_latency(split.tool_ms, tool, sql)
    TAU_ISSUE_SPLIT[:] = [split]
    ASKED["tau-bench"] = [(split.api, seat.handle, opening, list(split.unlikes))]


def tau_each_trial(args, company, embedder) -> None:
    """Every other trial in turn as the query, beside the issue's (``tau``'s): how much of its figure is the 4th
    trial's openings. Run last: it adds three seats, and the figures printed before it are of the issue's
    seats alone."""
    runs = bench_data.tau(args.data)
    started = time.monotonic()
    asked = query_trial(runs)
    splits = {asked: TAU_ISSUE_SPLIT[0]}
    for trial in sorted({r["trial"] for r in runs} - {asked}):
        splits[trial] = tau_split(runs, trial, company, f"airline-q{trial}", embedder)
    n = sum(len(split.queries) for split in splits.values())
    total = {m: [sum(split.hits[m][j] for split in splits.values()) for j in range(3)] for m in splits[asked].hits}
    close = [c for split in splits.values() for c in split.close_calls]
    first = [f for split in splits.values() for f in split.first]
    print(f"\n-- tau-bench airline, each trial in turn the query, the other three stored ({n} queries, "
          f"{time.monotonic() - started:.0f}s more)")
    print_tau(total, n)
    print_close_calls(close, first, "a prior trial of the same task")
    project = "project (query_episodes)"
    print("same-task @1 by the trial asked: " + ", ".join(
        f"trial {t} project {splits[t].hits[project][0]} / best baseline "
        f"{max(row[0] for m, row in splits[t].hits.items() if m != project)}" for t in sorted(splits)))


class TauSplit(NamedTuple):
    """One split of the tau-bench runs as asked: the seat holding the stored trials and what its queries got."""

    seat: Any
    queries: list[dict]  # the asked trial's runs, one a task
    qvecs: list  # their openings' vectors
    hits: dict[str, list[int]]  # method -> [@1, @3, @10 hits]
    tool_ms: list[float]  # each query_episodes call
    close_calls: list[bool]  # each answer a close call?
    unlikes: list[bool]  # each answer: no turn like the query?
    first: list[bool]  # the project's first turn a prior trial of the same task?
    api: Any  # the seat's client
    trial: int  # the trial asked


def query_trial(runs: list[dict]) -> int:
    """The trial whose openings the issue's figure asks: the 4th, or the last there is."""
    trials = {r["trial"] for r in runs}
    return QUERY_TRIAL if QUERY_TRIAL in trials else max(trials)


def tau_split(runs: list[dict], asked_trial: int, company, handle: str, embedder) -> TauSplit:
    """One seat holding every trial but ``asked_trial`` of each task, each POSTed as a finished turn; the
    opening of the ``asked_trial`` run of each task asked, by the project and by the baselines."""
    stored = [r for r in runs if r["trial"] != asked_trial and tau_users(r)]
    queries = [r for r in runs if r["trial"] == asked_trial and tau_users(r)]
    seat, api = make_seat(company, handle)
    for r in stored:
        user = (r.get("info") or {}).get("task", {}).get("user_id") or "customer"
        interactions = [{"sender": sender(user), "body": body} for body in tau_users(r)]
        api.post_turn(turn_record(seat, f"tau:{r['task_id']}:{r['trial']}", f"tau:{r['task_id']}:{r['trial']}",
                                  interactions, tau_final(r), tau_tools(r) or ["reply"],
                                  outcome="done" if r.get("reward") == 1 else "failed"))
    fill_all(seat)
    base = Baselines([tau_users(r)[0] for r in stored], embedder)
    at = {m: [0, 0, 0] for m in ("project (query_episodes)", "numpy cosine", "BM25", "cosine+BM25 RRF")}
    tool_ms, first = [], []
    opening = [tau_users(r)[0] for r in queries]
    qvecs = embedder.embed_batch(opening)
    for r, q, qvec in zip(queries, opening, qvecs, strict=True):
        returned, ms = api.query(seat.handle, q)
        tool_ms.append(ms)
        ranked = {"project (query_episodes)": [int(x.split(":")[1]) for x in returned]}
        ranked.update({m: [stored[i]["task_id"] for i in order[:10]] for m, order in base.rank(q, qvec).items()})
        first.append(ranked["project (query_episodes)"][:1] == [r["task_id"]])
        for m, top in ranked.items():
            for j, k in enumerate((1, 3, 10)):
                at[m][j] += r["task_id"] in top[:k]
    return TauSplit(seat, queries, qvecs, at, tool_ms, api.close_calls, api.unlikes, first, api, asked_trial)


def likeness(model: str) -> None:
    """What ``query_episodes``'s ``unlike`` (no turn like the query at all: ``core.providers.embeddings.likeness``)
    is worth: each set's queries as asked of their own seats, where each has a turn it is about (judged unlike
    there, a miss), then asked again of the other set's seats, where none is (judged unlike there, right). Run
    last: the questions asked elsewhere are more queries of those seats."""
    from core.providers.embeddings.likeness import similar_from
    from crewlet import config

    floor = similar_from(model, config.current().providers.embeddings.similar_from)
    print(f"\n-- nothing like it (unlike: no turn's similarity reaches similar_from, {floor} for {model})")
    if floor is None:
        print("not judged for this model")
        return
    for name, other in (("tau-bench", "LoCoMo"), ("LoCoMo", "tau-bench")):
        own = [u for *_, unlikes in ASKED[name] for u in unlikes]
        queries = [q for _, _, asked, _ in ASKED[name] for q in asked]
        elsewhere = []
        for i, q in enumerate(queries):
            api, handle, _, _ = ASKED[other][i % len(ASKED[other])]
            api.query(handle, q)
            elsewhere.append(api.unlikes[-1])
        print(f"{name}: asked of its own seat{'s' if len(ASKED[name]) > 1 else ''}, {sum(own)} of {len(own)} judged"
              f" unlike; asked of the {other} seat{'s' if len(ASKED[other]) > 1 else ''}, {sum(elsewhere)} of"
              f" {len(elsewhere)}")


# a reservation or flight code as the customers write them: six capitals and digits, a capital among them
CODE = re.compile(r"\b(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")


def specifics(args) -> None:
    """A short query of specifics, as the close call's sentence asks for: each reservation or flight code the
    stored tau-bench runs' customers wrote, asked alone of the issue split's seat. Such a query is far from
    every whole turn by meaning; the turns that name it are still like it (``episode_search.says_every_word``)."""
    runs = bench_data.tau(args.data)
    named: dict[str, set[int]] = defaultdict(set)  # code -> the tasks whose stored runs name it
    asked = query_trial(runs)
    for r in runs:
        if r["trial"] != asked:
            for text in tau_users(r):
                for code in CODE.findall(text):
                    named[code].add(r["task_id"])
    api, handle, _, _ = ASKED["tau-bench"][0]
    unlike = first = 0
    for code, tasks in sorted(named.items()):
        returned, _ms = api.query(handle, code)
        unlike += api.unlikes[-1]
        first += bool(returned) and int(returned[0].split(":")[1]) in tasks
    print(f"tau-bench, each code a customer wrote asked alone ({len(named)}): {unlike} judged unlike; the first turn"
          f" one of a task that names it for {first}")


def print_close_calls(close: list[bool], first: list[bool], what: str) -> None:
    """How often the project's answer was a close call (``query_episodes`` says so: no turn stood out), and how
    often its first turn was right among those and among the rest: what the warning is worth."""
    flagged = [f for c, f in zip(close, first, strict=True) if c]
    rest = [f for c, f in zip(close, first, strict=True) if not c]
    share = lambda hits: f"{sum(hits) / len(hits):.2f}" if hits else "-"  # noqa: E731
    print(f"close calls: {len(flagged)} of {len(close)} queries; {what} first among them {share(flagged)},"
          f" among the rest {share(rest)}")


def print_tau(at: dict[str, list[int]], n: int) -> None:
    print(f"{'method':<26} {'same-task @1':>13} {'@3':>6} {'@10':>6}")
    for m, (a1, a3, a10) in at.items():
        print(f"{m:<26} {a1 / n:>13.2f} {a3 / n:>6.2f} {a10 / n:>6.2f}")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
