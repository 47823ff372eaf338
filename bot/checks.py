"""System checks of the bot's configuration: a misconfigured speech provider stops
``manage.py check``/``runserver``/``migrate`` and a Celery worker's start with a message naming
the variable (``bot.speech_providers``)."""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.core import checks

from bot.speech_providers import configuration_problems


@checks.register()
def check_speech_providers(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """``VIVA_STT_PROVIDER`` / ``VIVA_TTS_PROVIDER`` and their settings can build a service."""
    return [
        checks.Error(problem, hint="See docs/voice.md, 'Speech providers'.", id="bot.E001")
        for problem in configuration_problems()
    ]
