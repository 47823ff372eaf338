"""The chaos test of issue #33: 50 text exams on two Celery workers while the seeded fault
schedule stops and restarts Redis, kills a worker with SIGKILL, drains one with SIGTERM and
restarts the web process (tests/support/chaos.py; real processes throughout: Postgres, a
``redis-server`` of the test's own, daphne, Celery workers, the outbox relay, an LTI platform
and a webhook receiver; candidates over HTTP and the room's WebSocket). Every exam ends
normally, resumed or not; every completed exam is marked exactly once; every locked mark reaches
the platform and the receiver exactly once; no event is duplicated; every chain verifies; no side
effect is left pending. ``python bench/chaos.py`` runs the same scenario with other seeds and
sizes. About 2.5 minutes on the 2-core development machine (50 exams fit).

One defect found by this run is not fixed (its fix belongs to the bot's pipeline and the
runtime): on a loaded machine an LLM turn of the offline examiner can time out
(``system_error`` ``llm_timeout``) and the examiner then says nothing more, so the exam waits for
ever (``SILENT_AFTER_TURN_FAULT``). When that, and only that, is why exams did not end, the test
is reported as an expected failure (``pytest.xfail``) after every other invariant has been
asserted; it cannot be a strict ``xfail`` mark, as the timeout happens only under load."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.chaos import ChaosOptions, run
from tests.support.chaos_report import SILENT_AFTER_TURN_FAULT

pytestmark = [
    pytest.mark.services("postgres", "redis"),
    pytest.mark.celery,
    pytest.mark.alone,  # after the parallel suite: its load made timing-sensitive tests flaky
    pytest.mark.django_db(transaction=True),
]

SEED = 33
EXAMS = 50


def test_fifty_exams_survive_redis_restarts_worker_kills_and_web_restarts(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]  # the platform's keyset fetch
    result = run(ChaosOptions(exams=EXAMS, workers=2, seed=SEED))
    print(f"chaos run, seed {SEED}:\n{result.text()}")
    assert result.figures["started"] == EXAMS
    assert {kind for _, kind in result.figures["faults"]} == {
        "redis_restart",
        "worker_sigkill",
        "worker_sigterm",
        "web_restart",
    }
    assert not result.failures, "\n".join(result.failures)
    if result.known:
        pytest.xfail(f"{len(result.known)} exam(s): {SILENT_AFTER_TURN_FAULT}")
