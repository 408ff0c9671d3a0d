"""State the demo steps share: the printer, the seats' tokens and a clock the demo controls."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.core.management.base import OutputWrapper
from django.core.management.color import Style


@dataclass
class DemoContext:
    out: OutputWrapper  # a management command's stdout
    style: Style
    tokens: dict[str, str] = field(default_factory=dict)  # handle -> raw seat token
    operator_token: str = ""
    clock: datetime | None = None  # None = real time; steps that age data set it
    notes: dict = field(default_factory=dict)

    def heading(self, text: str) -> None:
        self.out.write(self.style.MIGRATE_HEADING(f"\n== {text}"))

    def line(self, text: str = "") -> None:
        self.out.write(text)
