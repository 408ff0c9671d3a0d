from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _register_pgvector(sender, connection, **kwargs):
    from core.vectors import register_pgvector

    register_pgvector(connection)


class CrewletConfig(AppConfig):
    name = "crewlet"
    verbose_name = "Organisation"

    def ready(self):
        from core.providers import in_force
        from crewlet import config
        from crewlet.config import checks  # noqa: F401  (registers the config file's check)

        connection_created.connect(_register_pgvector, dispatch_uid="crewlet-pgvector")
        in_force.register(lambda: config.current().providers)  # what core's model seams read
