from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    label = "core"
    verbose_name = "Shared infrastructure"

    def ready(self):
        from django_q.signals import post_spawn

        from core.providers.embeddings import warm

        # queue workers load the embedder when they start (web processes: crewlet/wsgi.py)
        post_spawn.connect(warm.on_worker_spawn, dispatch_uid="core-embedder-warm-up")
