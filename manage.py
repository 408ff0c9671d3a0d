#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    from django.core.management import execute_from_command_line
    from django.db import DatabaseError

    try:
        execute_from_command_line(sys.argv)
    except DatabaseError as exc:
        from crewlet.unmigrated import advice

        message = advice(exc)
        if message is None:
            raise
        sys.exit(f"CommandError: {message}")
