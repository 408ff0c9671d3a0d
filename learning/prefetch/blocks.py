"""What every prefetch block hands the assembler: its rendered text and its telemetry."""

from __future__ import annotations

from dataclasses import dataclass, field

from learning.memory.condensation import nbytes


@dataclass(frozen=True)
class BlockResult:
    name: str
    text: str = ""
    selection_count: int | None = None  # rows rendered (None where the block counts nothing)
    extra: dict = field(default_factory=dict)  # block-specific telemetry (the thread's counts)
    shown: dict = field(default_factory=dict)  # the memory rows the text shows: {"notes"|"episodes"|"skills": [id, ...]}

    @property
    def hit(self) -> bool:
        """The block surfaced something: a text that only says nothing was found (a count of 0) is a miss."""
        if self.selection_count is not None:
            return bool(self.text) and self.selection_count > 0
        return bool(self.text)

    @property
    def bytes(self) -> int:
        return nbytes(self.text)


def done(result: BlockResult):
    """A finisher for a block that did all its work in ``start``."""
    return lambda: result
