"""Where a long pass stopped: the last seat (or unit) it began, so the next tick resumes after it.

A pass the queue kills at its timeout (or a process that dies) leaves the cursor at the item it
had begun. The next tick starts with the items after it and takes the begun one LAST: the items
the killed tick never reached go first (so later seats cannot starve behind an early one that
always runs long), and the one that may be what killed it is still retried, once the others are
done. A pass that reaches its end clears the cursor, so the next full tick starts from the first.

The cursor lives in its own ``Duty`` row (``learning.<pass>.cursor``), as the embedding fill's
does, written in autocommit the moment an item is begun: a rolled-back or killed pass still
leaves it where it stopped. A cursor that cannot be read or written costs only the resume (the
pass runs in its natural order), never the pass.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from django.db import DatabaseError

from learning.models import Duty

log = logging.getLogger("learning.passes.cursor")

T = TypeVar("T")


def duty_name(pass_name: str) -> str:
    return f"learning.{pass_name}.cursor"


def began_last(pass_name: str) -> int | None:
    """The id of the item the last unfinished tick began, or None (none recorded, or unreadable)."""
    try:
        row = Duty.objects.filter(name=duty_name(pass_name)).values_list("last_result", flat=True).first()
    except DatabaseError:
        log.warning("cursor of %s unreadable; the pass starts at its first item", pass_name, exc_info=True)
        return None
    value = (row or {}).get("began")
    return value if isinstance(value, int) else None


def _save(pass_name: str, state: dict) -> None:
    try:
        Duty.objects.update_or_create(name=duty_name(pass_name), defaults={"last_result": state})
    except DatabaseError:
        log.warning("cursor of %s could not be written; a killed tick restarts at the first item", pass_name,
                    exc_info=True)


def resumed(items: Iterable[T], began: int | None, key: Callable[[T], int]) -> list[T]:
    """``items`` (in id order) rotated to start after ``began``, with ``began`` itself last."""
    ordered = sorted(items, key=key)
    if began is None:
        return ordered
    return [i for i in ordered if key(i) > began] + [i for i in ordered if key(i) <= began]


def walk(pass_name: str, items: Iterable[T], *, key: Callable[[T], int] = lambda item: item.pk) -> Iterator[T]:  # type: ignore[attr-defined]
    """Yield ``items`` from where the last tick stopped, recording each as it is begun.

    Exhausting the iterator clears the cursor; a tick that stops early (an exception escapes, the
    process is killed) leaves it at the item it was on.
    """
    for item in resumed(items, began_last(pass_name), key):
        _save(pass_name, {"began": key(item)})
        yield item
    _save(pass_name, {})
