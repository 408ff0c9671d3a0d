"""Group commit: what concurrent threads submit while a write runs is written together, next, in one call."""

import threading
import time

import pytest

from learning.group_commit import GroupCommit


class Writes:
    """A write that records each batch and holds the first one until told to go on."""

    def __init__(self, outcome=lambda item: item * 10):
        self.batches: list[list] = []
        self.first_started, self.go = threading.Event(), threading.Event()
        self.outcome = outcome

    def __call__(self, items):
        self.batches.append(list(items))
        if len(self.batches) == 1:
            self.first_started.set()
            assert self.go.wait(30)
        return [self.outcome(i) for i in items]


def submit_in_threads(group, items):
    answers, threads = {}, []

    def run(item):
        try:
            answers[item] = group.submit(item)
        except Exception as exc:
            answers[item] = exc

    for item in items:
        threads.append(threading.Thread(target=run, args=(item,)))
        threads[-1].start()
    return answers, threads


def join(threads):
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)


def wait_until_waiting(group, n):
    """Until ``n`` submitters queue behind the held write (they are threads: they get there soon)."""
    for _ in range(6000):
        if group.waiting() >= n:
            return
        time.sleep(0.005)
    raise AssertionError(f"{group.waiting()} waiting, expected {n}")


def test_a_lone_item_is_written_at_once_in_a_batch_of_its_own():
    writes = Writes()
    writes.go.set()
    group = GroupCommit(writes)
    assert group.submit(4) == 40 and group.submit(5) == 50
    assert writes.batches == [[4], [5]]


def test_items_submitted_while_a_write_runs_are_written_together_in_the_next_one():
    writes = Writes()
    group = GroupCommit(writes)
    first, first_threads = submit_in_threads(group, [1])
    assert writes.first_started.wait(30)
    rest, threads = submit_in_threads(group, [2, 3, 4])
    wait_until_waiting(group, 3)
    writes.go.set()
    join(first_threads + threads)
    assert writes.batches[0] == [1] and sorted(writes.batches[1]) == [2, 3, 4] and len(writes.batches) == 2
    assert first == {1: 10} and rest == {2: 20, 3: 30, 4: 40}  # each thread gets its own item's outcome


def test_an_items_exception_is_raised_in_its_own_thread_only():
    writes = Writes(outcome=lambda item: ValueError(f"bad {item}") if item == 3 else item)
    group = GroupCommit(writes)
    _, first_threads = submit_in_threads(group, [1])
    assert writes.first_started.wait(30)
    answers, threads = submit_in_threads(group, [2, 3])
    wait_until_waiting(group, 2)
    writes.go.set()
    join(first_threads + threads)
    assert answers[2] == 2 and isinstance(answers[3], ValueError) and str(answers[3]) == "bad 3"


def test_a_write_that_raises_fails_its_batch_and_the_next_batch_is_written():
    calls = []

    def write(items):
        calls.append(list(items))
        if len(calls) == 1:
            raise ConnectionError("database gone")
        return items

    group = GroupCommit(write)
    with pytest.raises(ConnectionError):
        group.submit(1)
    assert group.submit(2) == 2 and calls == [[1], [2]]


def test_a_batch_is_at_most_max_batch_items_and_always_holds_its_writers_own():
    writes = Writes(outcome=lambda item: item)
    group = GroupCommit(writes, max_batch=2)
    _, first_threads = submit_in_threads(group, [0])
    assert writes.first_started.wait(30)
    answers, threads = submit_in_threads(group, [1, 2, 3, 4, 5])
    wait_until_waiting(group, 5)
    writes.go.set()
    join(first_threads + threads)
    assert answers == {1: 1, 2: 2, 3: 3, 4: 4, 5: 5}
    assert all(len(b) <= 2 for b in writes.batches) and sorted(i for b in writes.batches for i in b) == [0, 1, 2, 3, 4, 5]
