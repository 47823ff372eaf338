"""A chain that cannot be cut short: heads anchored outside the event table with a keyed MAC
(``sessions.chain_anchor``), checked by ``verify_session_log``; and every tampering pattern
(edit, delete, reorder, truncate with rewound counters, forged or missing anchors)."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.test import TestCase

from sessions import chain_anchor
from sessions.event_store import append_events
from sessions.models import ExamSession, SessionEvent
from tests.sessions.factories import ExamSessionFactory, event_factory, node_entered, transcripts
from tests.sessions.tampering import tamper
from tests.support.processes import ROOT, child_environment

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> Path:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40
    return tmp_path / "anchors"


def session_with(events: int = 6) -> ExamSession:
    session = ExamSessionFactory()
    entered = event_factory(session)(node_entered("q1"))
    for event in [entered, *transcripts(session, events - 1)]:  # one append, one anchor each
        with TestCase.captureOnCommitCallbacks(execute=True):  # anchors are queued on commit
            append_events(session=session, events=[event])
        chain_anchor.flush()  # and written now, not merged with the next head (anchor_queue)
    session.refresh_from_db()
    return session


def problems(session: ExamSession) -> str:
    err = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("verify_session_log", str(session.pk), stderr=err)
    assert caught.value.returncode == 1
    return err.getvalue()


def rewind(session: ExamSession, keep: int) -> None:
    """Cut the log to ``keep`` events and rewind the session's counters to match."""
    last = SessionEvent.objects.get(session=session, seq=keep)
    tamper(
        "DELETE FROM exam_sessions_sessionevent WHERE session_id = %s AND seq > %s",
        [session.pk, keep],
    )
    ExamSession.objects.filter(pk=session.pk).update(
        last_seq=keep, head_hash=last.hash, prev_head_hash=last.prev_hash
    )


def test_every_append_is_anchored_with_a_mac(anchors: Path) -> None:
    session = session_with(3)
    lines = [json.loads(x) for x in (anchors / f"{session.pk}.jsonl").read_text().splitlines()]
    assert [a["seq"] for a in lines] == [1, 2, 3]
    assert lines[-1]["head"] == session.head_hash
    assert lines[-1]["mac"] == chain_anchor.head_mac(session.pk, 3, session.head_hash)
    out = StringIO()
    call_command("verify_session_log", str(session.pk), stdout=out)
    assert "chain intact" in out.getvalue()


def test_a_truncated_log_with_rewound_counters_is_caught() -> None:
    session = session_with(6)
    rewind(session, keep=4)
    # The chain alone is consistent again: only the anchors tell.
    found = problems(session)
    assert "truncated: seq 5" in found and "truncated: seq 6" in found


def test_a_truncated_and_re_extended_log_is_caught() -> None:
    session = session_with(6)
    rewind(session, keep=4)
    for event in transcripts(session, 2):  # new events 5 and 6 replace the deleted ones
        with TestCase.captureOnCommitCallbacks(execute=True):
            append_events(session=session, events=[event])
        chain_anchor.flush()
    assert "truncated: seq 5" in problems(session)


def test_an_edited_event_is_caught() -> None:
    session = session_with(4)
    payload = SessionEvent.objects.get(session=session, seq=2).payload
    payload["text"] = "I said something else"
    tamper(
        "UPDATE exam_sessions_sessionevent SET payload = %s WHERE session_id = %s AND seq = 2",
        [json.dumps(payload), session.pk],
    )
    assert "altered: seq 2" in problems(session)


def test_a_deleted_event_is_caught() -> None:
    session = session_with(4)
    tamper("DELETE FROM exam_sessions_sessionevent WHERE session_id = %s AND seq = 2", [session.pk])
    assert "missing: seq 2" in problems(session)


def test_reordered_events_are_caught() -> None:
    session = session_with(4)
    for old, new in ((2, 1000), (3, 2), (1000, 3)):
        tamper(
            "UPDATE exam_sessions_sessionevent SET seq = %s WHERE session_id = %s AND seq = %s",
            [new, session.pk, old],
        )
    assert "seq 2" in problems(session)


def test_a_forged_anchor_is_caught(anchors: Path) -> None:
    session = session_with(3)
    forged = {"session": str(session.pk), "seq": 9, "head": "sha256:" + "1" * 64, "mac": "x"}
    with (anchors / f"{session.pk}.jsonl").open("a") as file:
        file.write(json.dumps(forged) + "\n")
    assert "anchor_forged: seq 9" in problems(session)


def test_an_anchor_made_with_another_key_is_caught(settings: Any) -> None:
    session = session_with(3)
    settings.VIVA_CHAIN_KEY = "another-key-" * 4
    assert "anchor_forged" in problems(session)


def test_a_removed_anchor_file_is_caught(anchors: Path) -> None:
    session = session_with(3)
    (anchors / f"{session.pk}.jsonl").unlink()
    assert "unanchored" in problems(session)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE exam_sessions_sessionevent SET type = 'x' WHERE session_id = %s",
        "DELETE FROM exam_sessions_sessionevent WHERE session_id = %s",
    ],
)
def test_the_database_refuses_raw_edits(sql: str) -> None:
    session = session_with(2)
    key = ExamSession._meta.pk.get_db_prep_value(session.pk, connection)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [key])
    assert SessionEvent.objects.filter(session=session).count() == 2


def test_sqlite_refuses_edits_and_still_flushes(tmp_path: Path) -> None:
    """The embedded default (SQLite): the triggers refuse raw UPDATE/DELETE; flush works."""
    env = child_environment(VIVA_SQLITE_PATH=str(tmp_path / "t.sqlite3"))
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env["VIVA_VAR_DIR"] = str(tmp_path)

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert manage("migrate", "--noinput").returncode == 0
    probe = """
from django.db import connection, DatabaseError
from tests.sessions.factories import ExamSessionFactory, event_factory, node_entered, transcripts
from sessions.event_store import append_events
s = ExamSessionFactory()
append_events(session=s, events=transcripts(s, 2))
refused = []
for sql in ("UPDATE exam_sessions_sessionevent SET type = 'x'",
            "DELETE FROM exam_sessions_sessionevent"):
    try:
        with connection.cursor() as c:
            c.execute(sql)
    except DatabaseError as exc:
        refused.append(str(exc))
print(len(refused), refused)
"""
    done = manage("shell", "-c", probe)
    assert "\n2 [" in "\n" + done.stdout, done.stdout + done.stderr
    assert "immutable" in done.stdout
    flushed = manage("flush", "--noinput")
    assert flushed.returncode == 0, flushed.stderr
