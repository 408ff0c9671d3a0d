from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Team knowledge"

    def ready(self):
        from knowledge import events  # noqa: F401  (registers the app's event classes)
