from django.apps import AppConfig


class TranscriptsConfig(AppConfig):
    name = "learning.transcripts"
    label = "transcripts"
    verbose_name = "Transcript lessons"
