"""A broker outage while an exam starts (a real child process whose Celery broker is a closed
port; Postgres): ``bot_start`` reports it within seconds (``BotServiceUnavailable``, never a
hang) and leaves the start request claimable, so the supervisor retries the start as soon as a
worker runs; nothing waits for the two-minute start grace."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from bot.lease import claim_expired
from bot.models import BotLease
from tests.support.processes import ROOT, child_environment, free_port

pytestmark = [pytest.mark.services("postgres"), pytest.mark.django_db(transaction=True)]

START = """
import time, uuid
from bot.services import BotServiceUnavailable, bot_start
started = time.monotonic()
try:
    bot_start(session=uuid.UUID("{session}"))
    print("started")
except BotServiceUnavailable as exc:
    print("unavailable", round(time.monotonic() - started, 2))
"""


def test_a_start_during_a_broker_outage_fails_fast_and_is_retried_by_the_supervisor(
    exam_session: Any,
) -> None:
    env = child_environment(
        CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0",
        VIVA_BOT_RUNNER="celery",
        VIVA_LLM_PROVIDER="offline",
        VIVA_OFFLINE_EXAMINER_ALLOWED="true",
    )
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", START.format(session=exam_session.pk)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout.strip().splitlines()
    assert output and output[-1].startswith("unavailable"), done.stdout + done.stderr
    assert float(output[-1].split()[1]) < 3.0  # not the 19 s of kombu's default retries
    assert time.monotonic() - began < 60
    lease = BotLease.objects.get(pk=exam_session.pk)
    assert lease.state == "starting"
    # Claimable at once: any worker's supervisor launches it once the broker is back.
    assert claim_expired(grace_seconds=120) == [exam_session.pk]
