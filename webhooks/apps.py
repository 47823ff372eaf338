from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from webhooks import checks, erasure, receivers  # noqa: F401 - checks: the deploy check

        receivers.connect()  # sessions.signals and marking.signals: the events integrators hear of
        erasure.connect()  # sessions.signals.personal_data_erased: integrators' answers
