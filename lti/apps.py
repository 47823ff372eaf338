from django.apps import AppConfig


class LtiConfig(AppConfig):
    name = "lti"
    verbose_name = "LTI 1.3 (LMS integration)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lti import erasure, receivers  # noqa: F401  (grade passback when marks are locked)

        erasure.connect()  # sessions.signals.personal_data_erased: the passbacks' texts
