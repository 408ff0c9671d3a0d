from django.apps import AppConfig


class LearningConfig(AppConfig):
    name = "learning"
    verbose_name = "Agent learning"

    def ready(self):
        from learning import schedules

        schedules.connect()  # a config apply keeps each loop's clock unless its cadence changed
