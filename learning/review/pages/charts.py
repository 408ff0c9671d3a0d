"""Horizontal bar charts as geometry for an inline SVG, computed here so templates only place it.

A bar whose value is unknown is drawn as a hatched stub labelled "unknown", never as a zero bar.
"""

from __future__ import annotations

from dataclasses import dataclass

LABEL_WIDTH = 190
BAR_AREA = 380
CAPTION_WIDTH = 190
ROW_HEIGHT = 30
BAR_HEIGHT = 18
TOP = 6


@dataclass(frozen=True)
class Bar:
    label: str
    y: int
    width: int
    caption: str
    tone: str  # css class: good | warn | bad | muted | info | unknown


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    height: int
    width: int = LABEL_WIDTH + BAR_AREA + CAPTION_WIDTH
    label_width: int = LABEL_WIDTH
    bar_area: int = BAR_AREA
    bar_height: int = BAR_HEIGHT
    marker_x: int | None = None  # a threshold line, when the chart has one
    marker_label: str = ""

    @property
    def caption_x(self) -> int:
        return LABEL_WIDTH + BAR_AREA + 8

    @property
    def view_height(self) -> int:
        return self.height + (16 if self.marker_x is not None else 0)

    @property
    def empty(self) -> bool:
        return not self.bars


def bar_chart(rows, *, scale_max: float, marker: float | None = None, marker_label: str = "") -> Chart:
    """``rows`` are (label, value or None, caption, tone); widths are value / scale_max of the bar area."""
    scale_max = scale_max or 1.0
    bars = []
    for i, (label, value, caption, tone) in enumerate(rows):
        if value is None:
            width, tone = 6, "unknown"
        else:
            width = max(2 if value > 0 else 0, round(min(value, scale_max) / scale_max * BAR_AREA))
        bars.append(Bar(label=label, y=TOP + i * ROW_HEIGHT, width=width, caption=caption, tone=tone))
    marker_x = None if marker is None else LABEL_WIDTH + round(min(marker, scale_max) / scale_max * BAR_AREA)
    return Chart(bars=bars, height=TOP * 2 + len(bars) * ROW_HEIGHT, marker_x=marker_x, marker_label=marker_label)


COLUMN_AREA_WIDTH = 720
COLUMN_AREA_HEIGHT = 120


@dataclass(frozen=True)
class Column:
    x: int
    y: int
    width: int
    height: int
    title: str  # the day and its figure (a tooltip, and the text a screen reader gets)
    tone: str


@dataclass(frozen=True)
class ColumnChart:
    columns: list[Column]
    first_label: str
    last_label: str
    top_label: str
    width: int = COLUMN_AREA_WIDTH
    height: int = COLUMN_AREA_HEIGHT

    @property
    def view_height(self) -> int:
        return self.height + 18

    @property
    def label_y(self) -> int:
        return self.height + 14


def column_chart(points, *, scale_max: float | None = None, fmt=str) -> ColumnChart:
    """``points`` are (day, value or None, detail), oldest first: one column per day; an unknown day is a stub."""
    known = [v for _d, v, _t in points if v is not None]
    top = scale_max if scale_max is not None else max([1.0, *known])
    step = COLUMN_AREA_WIDTH / max(1, len(points))
    width = max(2, int(step) - 2)
    columns = []
    for i, (day, value, detail) in enumerate(points):
        x = round(i * step)
        if value is None:
            columns.append(Column(x, COLUMN_AREA_HEIGHT - 3, width, 3, f"{day:%Y-%m-%d}: {detail}", "unknown"))
            continue
        h = round(min(value, top) / top * COLUMN_AREA_HEIGHT) if top else 0
        h = max(h, 1 if value > 0 else 0)
        columns.append(Column(x, COLUMN_AREA_HEIGHT - h, width, h, f"{day:%Y-%m-%d}: {detail}", "info"))
    first = f"{points[0][0]:%b %d}" if points else ""
    last = f"{points[-1][0]:%b %d}" if points else ""
    return ColumnChart(columns=columns, first_label=first, last_label=last, top_label=fmt(top))
