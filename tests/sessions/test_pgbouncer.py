"""The event store behind a transaction-pooling PgBouncer (issue #33; docs/operations.md
"PgBouncer"): a real ``pgbouncer`` (Debian's, 1.18) with two server connections, and a child
process appending from six threads at once through it. With ``VIVA_DB_TRANSACTION_POOLING=1``
every append is stored, gap-free, and every chain verifies. Left with prepared statements on
(as before this setting existed), the same run fails: a statement prepared on one server
connection is missing on the next one PgBouncer hands out."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from django.conf import settings

from sessions.event_store import append_event
from sessions.models import SessionEvent
from sessions.selectors import verify_log
from tests.sessions.factories import ExamSessionFactory, event_factory, node_entered
from tests.support.pgbouncer import pgbouncer
from tests.support.pooled_appends import BATCHES, SINGLES
from tests.support.processes import ROOT, VENV_BIN, child_environment

pytestmark = [pytest.mark.services("postgres"), pytest.mark.django_db(transaction=True)]


def sessions_entered(count: int) -> list[Any]:
    made = []
    for _ in range(count):
        session = ExamSessionFactory()
        append_event(session=session, event=event_factory(session)(node_entered()))
        made.append(session)
    return made


def appends_through(
    port: int, session_ids: list[str], **env: str
) -> subprocess.CompletedProcess[str]:
    db = settings.DATABASES["default"]
    url = f"postgres://{db.get('USER') or 'postgres'}@127.0.0.1:{port}/{db['NAME']}"
    return subprocess.run(
        [str(VENV_BIN / "python"), "-m", "tests.support.pooled_appends", *session_ids],
        cwd=ROOT,
        env=child_environment(DATABASE_URL=url, **env),
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_appends_through_a_transaction_pooler_are_all_stored_and_verify() -> None:
    db = settings.DATABASES["default"]
    sessions = sessions_entered(3)
    ids = [str(s.pk) for s in sessions]
    with pgbouncer(
        host=db.get("HOST") or "127.0.0.1", port=int(db.get("PORT") or 5432), user="postgres"
    ) as port:
        run = appends_through(port, ids, VIVA_DB_TRANSACTION_POOLING="1")
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    each = 1 + 2 * (SINGLES + 2 * BATCHES)
    for session in sessions:
        seqs = list(
            SessionEvent.objects.filter(session=session)
            .order_by("seq")
            .values_list("seq", flat=True)
        )
        assert seqs == list(range(1, each + 1))
        assert verify_log(session_id=session.pk) == []


def test_prepared_statements_through_an_old_transaction_pooler_fail() -> None:
    """The reason for the setting: the same run with prepared statements on breaks."""
    db = settings.DATABASES["default"]
    ids = [str(s.pk) for s in sessions_entered(3)]
    with pgbouncer(
        host=db.get("HOST") or "127.0.0.1", port=int(db.get("PORT") or 5432), user="postgres"
    ) as port:
        run = appends_through(
            port, ids, VIVA_DB_TRANSACTION_POOLING="1", VIVA_DB_PREPARED_STATEMENTS="1"
        )
    assert run.returncode == 1, run.stdout
    assert "prepared statement" in run.stdout
