"""Progress for operator commands: a tqdm bar on a terminal, nothing but the summary otherwise."""

from __future__ import annotations

import sys
from contextlib import contextmanager


def on_terminal(stream) -> bool:
    target = getattr(stream, "_out", stream)
    return bool(getattr(target, "isatty", lambda: False)())


@contextmanager
def bar(stream, *, total: int | None, desc: str, unit: str = "seat"):
    """Yields ``advance(n=1, label='')``; a no-op when the output is not a terminal."""
    if not on_terminal(stream):
        yield lambda n=1, label="": None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False) as progress:

        def advance(n: int = 1, label: str = "") -> None:
            if label:
                progress.set_postfix_str(label, refresh=False)
            progress.update(n)

        yield advance


def summary_lines(result: dict) -> list[str]:
    """The result's scalar fields, one per line, for the plain summary."""
    return [f"  {key}: {value}" for key, value in result.items() if not isinstance(value, (list, dict))]
