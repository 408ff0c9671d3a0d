"""Acceptance: the same 200 turns posted from 4 concurrent clients.

Every turn is stored once, every pass runs once, and no seat is ever reflected by two passes at
the same time. Real threads, each with its own database connection; the queue runs each task
inline after the intake commits (django-q2's sync mode), so passes race exactly as they would on
a cluster's workers.
"""

import json
import random
import threading
import time
from collections import Counter, defaultdict

import pytest
from django.db import connections
from django.test import Client

from core.models import Event
from learning.models import Turn
from learning.reflection import dispatcher
from tests.factories import SeatFactory, token_for
from tests.learning.reflection.conftest import human, record

CLIENTS = 4
TURNS = 200
PROCEDURE = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]


def _turns(seats) -> list[dict]:
    out = []
    for n in range(TURNS):
        seat = seats[n % len(seats)]
        kind = n % 4
        fields = {"run_id": f"conc-{n}", "work_key": f"chat:conc-{n}", "conversation_id": f"chat:C{n % 7}"}
        if kind == 1:
            fields.update(tool_sequence=PROCEDURE, tools_called=PROCEDURE,
                          interactions=[human("Cut the release branch and run the release checklist.")])
        elif kind == 2:
            fields.update(interactions=[human(f"I'm out of office until Friday, ping Ravi for item {n}.")])
        elif kind == 3:
            fields.update(review_outcome="skipped", tool_sequence=[], tools_called=[])
        out.append(record(seat, **fields))
    return out


@pytest.mark.django_db(transaction=True)
def test_the_same_200_turns_from_four_concurrent_clients(company, role, unit, monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)
    seats = [SeatFactory(company=company, role=role, unit=unit, handle=h) for h in ("ana", "bo", "cy")]
    tokens = {s.handle: token_for(s) for s in seats}
    turns = _turns(seats)

    spans, active, overlaps, guard = [], Counter(), [], threading.Lock()
    real_run_pass = dispatcher.run_pass

    def recording_run_pass(ctx):
        with guard:
            active[ctx.seat.pk] += 1
            if active[ctx.seat.pk] > 1:
                overlaps.append(ctx.run_id)
            started = time.monotonic()
        try:
            return real_run_pass(ctx)
        finally:
            with guard:
                active[ctx.seat.pk] -= 1
                spans.append((ctx.seat.pk, started, time.monotonic(), ctx.run_id))

    monkeypatch.setattr(dispatcher, "run_pass", recording_run_pass)
    answers: dict[str, list[int]] = defaultdict(list)
    errors: list[BaseException] = []

    def client_thread(seed: int):
        try:
            client, order = Client(), list(turns)
            random.Random(seed).shuffle(order)
            for body in order:
                response = client.post(
                    "/api/v1/turns", json.dumps(body), content_type="application/json",
                    HTTP_AUTHORIZATION=f"Bearer {tokens[body['seat']]}",
                )
                with guard:
                    answers[body["run_id"]].append(response.status_code)
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=client_thread, args=(seed,)) for seed in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)

    # every turn stored once: one 202 and three 200s per run id
    assert Turn.objects.count() == TURNS
    assert all(sorted(codes) == [200, 200, 200, 202] for codes in answers.values()), answers
    # every pass run once
    passes = list(Event.objects.filter(name="reflection_completed").values_list("payload", flat=True))
    assert len(passes) == TURNS and len({p["run_id"] for p in passes}) == TURNS
    assert len(spans) == TURNS
    assert not Turn.objects.filter(reflected_at__isnull=True).exists()
    assert Counter(p["gate"] for p in passes)["no_engagement"] == TURNS // 4
    # no seat reflected concurrently
    assert overlaps == []
    for seat in seats:
        mine = sorted((s, e) for pk, s, e, _ in spans if pk == seat.pk)
        assert all(later[0] >= earlier[1] for earlier, later in zip(mine, mine[1:], strict=False))
