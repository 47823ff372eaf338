"""System checks for configuration invariants.

``manage.py check --deploy`` fails (exit 1) on any of the errors tagged ``deploy``, so a
production start-up script that runs it refuses an insecure configuration.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def check_production_secrets(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A deployment needs a real secret key and DEBUG off."""
    errors: list[checks.CheckMessage] = []
    key = settings.SECRET_KEY or ""
    if key.startswith(settings.INSECURE_SECRET_KEY_PREFIX) or len(key) < 50 or len(set(key)) < 5:
        errors.append(
            checks.Error(
                "DJANGO_SECRET_KEY is the built-in development key or too weak.",
                hint="Set DJANGO_SECRET_KEY to 50+ random characters, e.g. the output of "
                "`python -c 'import secrets; print(secrets.token_urlsafe(64))'`.",
                id="viva.E001",
            )
        )
    if settings.DEBUG:
        errors.append(
            checks.Error(
                "DEBUG is on in a deployment.",
                hint="Set DJANGO_DEBUG=false.",
                id="viva.E002",
            )
        )
    return errors


@checks.register(checks.Tags.security, deploy=True)
def check_production_services(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A deployment runs on Postgres and Redis; SQLite and in-memory layers are for one machine."""
    errors: list[checks.CheckMessage] = []
    if not settings.DATABASE_URL:
        errors.append(
            checks.Error(
                "No DATABASE_URL: the embedded SQLite database is not for deployments.",
                hint="Set DATABASE_URL=postgres://user:password@host:5432/dbname.",
                id="viva.E003",
            )
        )
    if not settings.REDIS_URL:
        errors.append(
            checks.Error(
                "No REDIS_URL: the in-memory channel layer cannot span processes.",
                hint="Set REDIS_URL=redis://host:6379/0.",
                id="viva.E004",
            )
        )
    return errors


@checks.register()
def check_bot_runner(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The Celery bot runner needs a broker that other processes can reach."""
    if settings.VIVA_BOT_RUNNER not in {"inline", "celery"}:
        return [
            checks.Error(
                f"VIVA_BOT_RUNNER={settings.VIVA_BOT_RUNNER!r} is not a runner.",
                hint="Use 'inline' or 'celery'.",
                id="viva.E005",
            )
        ]
    if settings.VIVA_BOT_RUNNER == "celery" and settings.CELERY_TASK_ALWAYS_EAGER:
        return [
            checks.Error(
                "VIVA_BOT_RUNNER=celery but no broker is configured, so no worker could run bots.",
                hint="Set REDIS_URL, or use VIVA_BOT_RUNNER=inline.",
                id="viva.E006",
            )
        ]
    return []
