"""Print crewlet.toml's JSON Schema (draft 2020-12) for an editor: `manage.py config_schema > crewlet.schema.json`."""

import json

from django.core.management import BaseCommand

from crewlet.config.json_schema import config_schema


class Command(BaseCommand):
    help = "Print the JSON Schema of crewlet.toml (ranges, allowed values, descriptions) for editors such as taplo."

    def handle(self, *args, **options):
        self.stdout.write(json.dumps(config_schema(), indent=2, sort_keys=True))
