"""``manage.py probe_model ROLE [--seat HANDLE] [--provider ALIAS ...] [--purpose NAME ...]``.

Sends every purpose its known made-up cases (``learning.purposes.probe.CASES``) through the auxiliary seam
(charged to the seat, stage ``operator``) and prints, per purpose, how many cases the model decided
correctly, wrongly, were rejected for meaning, unparseable or failed, and a verdict; then the role's
verdict: which purposes its chain can back. Exits non-zero when any purpose cannot be backed.
"""

from __future__ import annotations

from django.core.management import BaseCommand, CommandError

from core import purposes
from crewlet import config
from crewlet.models import Role, Seat
from learning.purposes.probe import probe

COLUMNS = ("purpose", "correct", "wrong", "rejected", "unparseable", "failed", "ms", "in", "out", "provider")


class Command(BaseCommand):
    help = "Probe a role's auxiliary models with one small charged request per purpose."

    def add_arguments(self, parser):
        parser.add_argument("role", help="the role whose auxiliary chain is probed")
        parser.add_argument("--seat", metavar="HANDLE", help="the seat charged (default: the role's first active seat)")
        parser.add_argument("--provider", metavar="ALIAS", action="append", help="probe this alias alone (repeatable)")
        parser.add_argument("--purpose", metavar="NAME", action="append", help="only this purpose (repeatable)")

    def handle(self, *args, role, seat: str | None = None, provider=None, purpose=None, **options):
        seat_row = self._seat(role, seat)
        known = config.current().providers.llm
        for alias in provider or []:
            if alias not in known:
                raise CommandError(f"--provider {alias}: no providers.llm.{alias} in the config (known: {', '.join(known)})")
        for name in purpose or []:
            try:
                purposes.get(name)
            except purposes.UnknownPurpose as exc:
                raise CommandError(f"--purpose: {exc}") from None
        results = probe(seat=seat_row, aliases=provider, names=purpose)
        rows = [(r.purpose, *(str(r.count(o)) for o in ("correct", "wrong", "rejected", "unparseable", "failed")),
                 str(r.latency_ms), str(r.input_tokens), str(r.output_tokens), r.provider or "-") for r in results]
        widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(COLUMNS)]
        self.stdout.write("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)).rstrip())
        for row, result in zip(rows, results, strict=True):
            self.stdout.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
            for case in result.cases:
                if case.outcome != "correct":
                    self.stdout.write(f"    {case.what}: {case.outcome}" + (f" ({case.detail})" if case.detail else ""))
            self.stdout.write(f"    verdict: {result.verdict}")
        unbacked = [r.purpose for r in results if not r.backs]
        self.stdout.write(f"role {role}: {len(results) - len(unbacked)} of {len(results)} purposes can be backed by "
                          f"this chain (charged to {seat_row.handle}, stage operator)")
        if unbacked:
            raise CommandError(f"this chain cannot back {', '.join(unbacked)}; use offline or a larger model for them")

    def _seat(self, role: str, handle: str | None) -> Seat:
        if handle:
            found = Seat.objects.filter(handle=handle).select_related("role").first()
            if found is None:
                raise CommandError(f"--seat {handle}: no such seat")
            if found.role is None or found.role.name != role:
                raise CommandError(f"--seat {handle}: the seat's role is not {role!r}")
            return found
        if not Role.objects.filter(name=role).exists():
            raise CommandError(f"role {role!r}: no such role (known: {', '.join(Role.objects.values_list('name', flat=True))})")
        found = Seat.objects.filter(role__name=role, active=True).select_related("role").order_by("id").first()
        if found is None:
            raise CommandError(f"role {role!r} has no active seat to charge the probe to; name one with --seat")
        return found
