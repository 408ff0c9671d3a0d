"""``manage.py create_lead USERNAME [--password P]``: a staff user in the ``leads`` group."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from learning.review import leads


class Command(BaseCommand):
    help = "Create (or promote) a lead: a staff user in the 'leads' group, who can publish auto-drafted pages."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", default=None, help="Set this password (omit to keep the current one).")
        parser.add_argument("--email", default="")

    def handle(self, *args, username, password, email, **options):
        try:
            user = leads.create_lead(username=username, password=password, email=email)
        except ValidationError as exc:
            raise CommandError(f"--password refused: {' '.join(exc.messages)}") from None
        self.stdout.write(f"{user.get_username()} is a lead (staff, group {leads.LEADS_GROUP!r}).")
