from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from webhooks import checks, receivers  # noqa: F401 - checks registers the deploy check

        receivers.connect()  # sessions.signals and marking.signals: the events integrators hear of
