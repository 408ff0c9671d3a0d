"""Issue an API token for a seat (or an operator token for its company); the raw value is shown once."""

from django.core.management import BaseCommand, CommandError

from crewlet.models import ApiToken, Seat


class Command(BaseCommand):
    help = "Issue a bearer token for seat HANDLE (--operator: an operator token for the seat's company). Only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("handle")
        parser.add_argument("--operator", action="store_true", help="an operator token: reads every seat of the company")
        parser.add_argument("--label", default="", help="a note kept beside the token (who it is for)")

    def handle(self, *args, handle, operator, label, **options):
        seat = Seat.objects.select_related("company").filter(handle=handle).first()
        if seat is None:
            raise CommandError(f"no seat with handle {handle!r}")
        if operator:
            token, raw = ApiToken.issue(company=seat.company, kind=ApiToken.OPERATOR, label=label or f"operator via {handle}")
        else:
            token, raw = ApiToken.issue(company=seat.company, seat=seat, label=label)
        self.stdout.write(raw)
        self.stderr.write(f"{token.kind} token {token.prefix}… for {seat.company.name}"
                          f"{'' if operator else f' / {handle}'}; store it now, it is not shown again")
