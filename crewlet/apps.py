from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _load_sqlite_vec(sender, connection, **kwargs):
    if connection.vendor == "sqlite":
        from crewlet.sqlite_driver import load_vec

        load_vec(connection.connection)


class CrewletConfig(AppConfig):
    name = "crewlet"
    verbose_name = "Organisation"

    def ready(self):
        connection_created.connect(_load_sqlite_vec, dispatch_uid="crewlet-sqlite-vec")
