"""Settings selection (embedded default vs real services) and the deploy checks.

Settings are module-level, so each shape is loaded in a fresh interpreter with its own environment.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, django
from django.conf import settings
django.setup()
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "db_name": str(settings.DATABASES["default"]["NAME"]),
    "layer": settings.CHANNEL_LAYERS["default"]["BACKEND"],
    "broker": settings.CELERY_BROKER_URL,
    "eager": settings.CELERY_TASK_ALWAYS_EAGER,
    "acks_late": settings.CELERY_TASK_ACKS_LATE,
    "reject_on_lost": settings.CELERY_TASK_REJECT_ON_WORKER_LOST,
    "prefetch": settings.CELERY_WORKER_PREFETCH_MULTIPLIER,
    "routes": settings.CELERY_TASK_ROUTES,
    "runner": settings.VIVA_BOT_RUNNER,
    "mode": settings.SERVICES_MODE,
    "cache": settings.CACHES["default"]["BACKEND"],
}))
"""
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("DJANGO_", "DATABASE_URL", "REDIS_URL", "CELERY_", "VIVA_"))
}


def run(code_or_args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *code_or_args],
        cwd=ROOT,
        env={**CLEAN, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@functools.cache
def _loaded(env: tuple[tuple[str, str], ...]) -> dict[str, object]:
    result = run(["-c", PROBE], **dict(env))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def load(**env: str) -> dict[str, object]:
    """The probe's settings in a fresh interpreter with ``env``; one interpreter per environment
    (a Django process costs seconds to start: issue #36), each test gets its own copy."""
    return copy.deepcopy(_loaded(tuple(sorted(env.items()))))


SERVICES = {
    "DATABASE_URL": "postgres://u:p@db.internal:5432/viva",
    "REDIS_URL": "redis://cache:6379/2",
}


def test_embedded_default_when_nothing_is_set(tmp_path: Path) -> None:
    s = load(VIVA_VAR_DIR=str(tmp_path))
    assert s["engine"] == "django.db.backends.sqlite3"
    assert s["db_name"] == str(tmp_path / "viva.sqlite3")
    assert s["layer"] == "channels.layers.InMemoryChannelLayer"
    assert s["eager"] is True
    assert s["runner"] == "inline"
    assert s["mode"] == "embedded"
    assert s["cache"].endswith("LocMemCache")


def test_real_services_from_database_url_and_redis_url() -> None:
    s = load(**SERVICES)
    assert s["engine"] == "django.db.backends.postgresql"
    assert s["db_name"] == "viva"
    assert s["layer"] == "channels_redis.core.RedisChannelLayer"
    assert s["broker"] == "redis://cache:6379/2"
    assert s["eager"] is False
    assert s["runner"] == "celery"
    assert s["mode"] == "services"
    assert s["cache"].endswith("RedisCache")


def test_celery_is_configured_not_to_lose_work() -> None:
    s = load(**SERVICES)  # the services shape above: one interpreter for both tests
    assert s["acks_late"] is True
    assert s["reject_on_lost"] is True
    assert s["prefetch"] == 1
    assert s["routes"] == {
        "bot.tasks.*": {"queue": "bots"},
        "marking.tasks.*": {"queue": "marking"},
    }


def test_bad_boolean_is_refused_with_its_name() -> None:
    result = run(["-c", PROBE], DJANGO_DEBUG="maybe")
    assert result.returncode != 0
    assert "DJANGO_DEBUG='maybe' is not a boolean" in result.stderr


GOOD_KEY = "k3y-" + "x7Qp9vL2mZ8rT5wY1nB4cF6hJ0dS3gK7aE9uI2oP5" + "Lq8Wz"
PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": GOOD_KEY,
    "DATABASE_URL": "postgres://u:p@db:5432/viva",
    "REDIS_URL": "redis://cache:6379/0",
    "DJANGO_ALLOWED_HOSTS": "viva.example.edu",
    "VIVA_PUBLIC_URL": "https://viva.example.edu",
    "VIVA_CHAIN_KEY": "c" + "hain-anchor-key-" * 3,
}


def deploy_check(**env: str) -> subprocess.CompletedProcess[str]:
    return run(["manage.py", "check", "--deploy", "--fail-level", "ERROR"], **env)


def test_deploy_check_passes_a_real_production_configuration() -> None:
    result = deploy_check(**PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "viva.E" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("override", "error_id"),
    [
        ({"DJANGO_SECRET_KEY": ""}, "viva.E001"),  # empty: the built-in default key
        ({"DJANGO_SECRET_KEY": "short"}, "viva.E001"),
        ({"DJANGO_DEBUG": "true"}, "viva.E002"),
        ({"DATABASE_URL": ""}, "viva.E003"),
        ({"REDIS_URL": ""}, "viva.E004"),
        ({"DJANGO_ALLOWED_HOSTS": "*"}, "viva.E007"),
        ({"DJANGO_ALLOWED_HOSTS": "viva.example.edu,*.example.edu"}, "viva.E007"),
        ({"DJANGO_SECURE_COOKIES": "false"}, "viva.E008"),
        ({"VIVA_PUBLIC_URL": "http://viva.example.edu"}, "viva.E009"),
        ({"VIVA_CHAIN_KEY": ""}, "viva.E010"),
    ],
)
def test_deploy_check_fails_an_insecure_configuration(
    override: dict[str, str], error_id: str
) -> None:
    env = {**PRODUCTION, **override}
    env = {k: v for k, v in env.items() if v != ""}
    result = deploy_check(**env)
    assert result.returncode == 1
    assert error_id in result.stderr


def test_celery_runner_without_a_broker_is_a_configuration_error() -> None:
    result = run(["manage.py", "check"], VIVA_BOT_RUNNER="celery")
    assert result.returncode == 1
    assert "viva.E006" in result.stderr
