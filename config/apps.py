from django.apps import AppConfig


class ConfigAppConfig(AppConfig):
    """Registers the project-wide system checks (see config.checks)."""

    name = "config"
    label = "viva_config"
    verbose_name = "Platform configuration"

    def ready(self) -> None:
        from config import checks  # noqa: F401  (registers the checks)
