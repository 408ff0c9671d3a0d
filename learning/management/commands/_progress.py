"""Progress for operator commands: a tqdm bar on a terminal, nothing but the summary otherwise.

A bar stays whole when a warning is logged mid-run (the project's log lines are written through
tqdm while it runs), and batch commands load the embedder before their first item, so the first
item neither pays for the load nor is stored vectorless because of it.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

PROJECT_LOGGERS = ("crewlet", "core", "learning", "knowledge")


def on_terminal(stream) -> bool:
    target = getattr(stream, "_out", stream)
    return bool(getattr(target, "isatty", lambda: False)())


@contextmanager
def tqdm_bar(stream, *, total: int | None, desc: str, unit: str, **options):
    """A tqdm bar on stderr while ``stream`` is a terminal (None otherwise); log lines print above it."""
    if not on_terminal(stream):
        yield None
        return
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    loggers = [logging.getLogger(name) for name in PROJECT_LOGGERS]
    with logging_redirect_tqdm(loggers=loggers), tqdm(total=total, desc=desc, unit=unit, file=sys.stderr,
                                                       leave=False, **options) as progress:
        yield progress


@contextmanager
def bar(stream, *, total: int | None, desc: str, unit: str = "seat"):
    """Yields ``advance(n=1, label='')``; a no-op when the output is not a terminal."""
    with tqdm_bar(stream, total=total, desc=desc, unit=unit) as progress:
        if progress is None:
            yield lambda n=1, label="": None
            return

        def advance(n: int = 1, label: str = "") -> None:
            if label:
                progress.set_postfix_str(label, refresh=False)
            progress.update(n)

        yield advance


def load_embedder(stdout) -> None:
    """Load the configured embedder before the first item, saying how long it took."""
    from core.providers.embeddings import warm
    from crewlet import config

    seconds = warm.warm()
    spec = config.current().providers.embeddings
    if seconds is None and spec.kind != "none":
        stdout.write(f"embedder {spec.kind}/{spec.model} could not be loaded; items are stored without a vector")
    elif seconds is not None:
        stdout.write(f"embedder {spec.kind}/{spec.model} loaded in {seconds:.1f}s")


def summary_lines(result: dict) -> list[str]:
    """The result's scalar fields, one per line, for the plain summary."""
    return [f"  {key}: {value}" for key, value in result.items() if not isinstance(value, (list, dict))]


def seat_lines(result: dict) -> list[str]:
    """One line per seat of a pass that reports each seat (``results``): what a dry run found there."""
    lines = []
    for row in result.get("results") or []:
        if not isinstance(row, dict) or "seat" not in row:
            continue
        fields = "  ".join(f"{k}={_compact(v)}" for k, v in row.items() if k != "seat")
        lines.append(f"  {row['seat']}: {fields}")
    return lines


def _compact(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_compact(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    return str(value)
