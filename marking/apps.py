from django.apps import AppConfig


class MarkingConfig(AppConfig):
    name = "marking"
    verbose_name = "Marking"

    def ready(self) -> None:
        from marking import receivers

        receivers.connect()  # sessions.signals: completed sessions, irregularity reports
