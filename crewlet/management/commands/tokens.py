"""List, revoke and expire API tokens; each line shows when the token was last used."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from django.core.management import BaseCommand, CommandError
from django.utils import timezone

from crewlet import tokens
from crewlet.errors import CrewletError


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "never"


def parse_moment(text: str) -> datetime:
    """``2026-12-31`` (that day's start, UTC), an ISO moment, or ``now``; one-line error otherwise."""
    if text == "now":
        return timezone.now()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--at: {text!r} is not a date (YYYY-MM-DD), an ISO moment or 'now'") from None
    if len(text) == 10:
        moment = datetime.combine(moment.date(), time.min)
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)


class Command(BaseCommand):
    help = "Manage API tokens: list (with last use), revoke PREFIX, expire PREFIX --at DATE | --in-days N."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="every live token (prefix, kind, seat, created, expires, last used)")
        listing.add_argument("--seat", help="only this seat's tokens")
        listing.add_argument("--all", action="store_true", help="include revoked tokens")
        revoke = sub.add_parser("revoke", help="refuse the token from now on")
        revoke.add_argument("prefix", help="the token's prefix as `tokens list` prints it")
        expire = sub.add_parser("expire", help="refuse the token from a moment on")
        expire.add_argument("prefix")
        when = expire.add_mutually_exclusive_group(required=True)
        when.add_argument("--at", help="YYYY-MM-DD (UTC), an ISO moment, or 'now'")
        when.add_argument("--in-days", type=int, help="days from now")

    def handle(self, *args, action, **options):
        try:
            getattr(self, f"_{action}")(**options)
        except CrewletError as exc:
            raise CommandError(exc.message) from None

    def _list(self, *, seat: str | None = None, all=False, **_):
        now = timezone.now()
        rows = list(tokens.listing(seat=seat, include_revoked=all))
        if not rows:
            self.stdout.write("no tokens")
            return
        self.stdout.write(f"{'prefix':<13} {'kind':<9} {'seat':<12} {'state':<8} {'created':<21} "
                          f"{'expires':<21} last used")
        for t in rows:
            self.stdout.write(
                f"{t.prefix:<13} {t.kind:<9} {(t.seat.handle if t.seat else '-'):<12} {tokens.state(t, now):<8} "
                f"{_when(t.created_at):<21} {(_when(t.expires_at) if t.expires_at else '-'):<21} {_when(t.last_used_at)}"
            )

    def _revoke(self, *, prefix, **_):
        token = tokens.revoke(prefix=prefix)
        self.stdout.write(f"revoked {token.prefix}… ({token.kind}{f' / {token.seat.handle}' if token.seat else ''})")

    def _expire(self, *, prefix, at=None, in_days=None, **_):
        if in_days is not None and in_days < 0:
            raise CommandError("--in-days: must be 0 or more")
        moment = timezone.now() + timedelta(days=in_days) if in_days is not None else parse_moment(at)
        token = tokens.expire(prefix=prefix, at=moment)
        self.stdout.write(f"{token.prefix}… expires {_when(token.expires_at)}")
