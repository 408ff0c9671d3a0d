from django.apps import AppConfig
from django.db.models.signals import post_migrate


class LearningConfig(AppConfig):
    name = "learning"
    verbose_name = "Agent learning"

    def ready(self):
        from learning import events  # noqa: F401  (events: registers the app's event classes)
        from learning.passes import schedules  # noqa: F401  (events: registers the app's event classes)

        schedules.connect()  # a config apply keeps each loop's clock unless its cadence changed
        # the admin's registrations: Django's autodiscovery imports an app's top-level admin module only
        from learning.review import admin  # noqa: F401
        post_migrate.connect(_vector_indexes, sender=self, dispatch_uid="learning_vector_indexes")


def _vector_indexes(sender, using="default", **kwargs) -> None:
    """After ``migrate``: the approximate vector indexes of the configured embedder's width, when it is known."""
    from learning.passes.embed_fill import ensure_vector_indexes

    ensure_vector_indexes(using=using)
