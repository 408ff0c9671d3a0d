"""Numbers and ages as a lead reads them: clamped (no negative ages), rounded, "never" for no time."""

from __future__ import annotations

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def age_days(value) -> str:
    """A non-negative number of days with one decimal; a clock skew's negative age reads 0."""
    if value is None:
        return "unknown"
    try:
        days = max(0.0, float(value))
    except (TypeError, ValueError):
        return "unknown"
    return f"{days:,.1f}"


@register.filter
def ago(value) -> str:
    """How long ago, never in the future ("just now"), "never" for no time."""
    if not value:
        return "never"
    now = timezone.now()
    if value >= now or (now - value).total_seconds() < 60:
        return "just now"
    return f"{timesince(value, now).split(',')[0]} ago"


@register.filter
def uses(count) -> str:
    return "never used" if not count else f"used {count:,}×"


@register.filter
def texts(items) -> list[str]:
    """The entries of a profile list that hold text: blanks, empty strings and non-text entries dropped."""
    if not isinstance(items, (list, tuple)):
        return []
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]
