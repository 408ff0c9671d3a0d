from django.apps import AppConfig
from django.conf import settings
from django.db.backends.signals import connection_created


def _load_sqlite_vec(sender, connection, **kwargs):
    if connection.vendor == "postgresql":
        from core.vectors import register_pgvector
        from crewlet.pg_driver import use_c_timestamps

        register_pgvector(connection)
        use_c_timestamps(connection)
        return
    if connection.vendor == "sqlite":
        from core.hybrid import register_sqlite_functions
        from crewlet.sqlite_driver import load_vec

        load_vec(connection.connection)
        register_sqlite_functions(connection.connection)  # the full-text triggers call them
        # WAL lets readers run beside the one writer: API requests and qcluster workers share the file
        name = str(connection.settings_dict.get("NAME") or "")
        if name and ":memory:" not in name and "mode=memory" not in name:
            connection.connection.execute("PRAGMA journal_mode=WAL")
        # FULL unless the operator opted into NORMAL (settings: the durability trade-off)
        connection.connection.execute(f"PRAGMA synchronous={settings.CREWLET_SQLITE_SYNCHRONOUS}")


class CrewletConfig(AppConfig):
    name = "crewlet"
    verbose_name = "Organisation"

    def ready(self):
        connection_created.connect(_load_sqlite_vec, dispatch_uid="crewlet-sqlite-vec")
