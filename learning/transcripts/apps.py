from django.apps import AppConfig


class TranscriptsConfig(AppConfig):
    name = "learning.transcripts"
    label = "transcripts"
    verbose_name = "Transcript lessons"

    def ready(self):
        from learning.transcripts import events  # noqa: F401  (registers the app's event classes)
