"""The verifier and erased values (issue #32): an erasure keeps each personal field's seal and
replaces its value by the erasure marker (``ioa.events.personal``). The kept seal vouches for
the marker only: an erased value rewritten to anything else in the database (new words, another
marker, a null), or an erased event whose marker fields are altered, fails
``verify_session_log`` with the session and sequence number named; an untouched erased log
still verifies intact. Runs on Postgres and SQLite."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import TestCase

from ioa.events import payloads as p
from sessions.event_store import append_events
from sessions.models import ExamSession, SessionEvent
from sessions.selectors import verify_log
from tests.sessions.factories import event_factory
from tests.sessions.tampering import tamper
from tests.sessions.test_erasure import erase, exam

pytestmark = pytest.mark.django_db

REWRITTEN = "I confess I copied every answer from my neighbour"

SET_PAYLOAD = (
    "UPDATE exam_sessions_sessionevent SET payload = %s WHERE session_id = %s AND seq = %s"
)
SET_ERASED = "UPDATE exam_sessions_sessionevent SET erased = %s WHERE session_id = %s AND seq = %s"


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> Path:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40
    return tmp_path / "anchors"


def verify(session: ExamSession) -> tuple[bool, str]:
    """``verify_session_log``'s verdict (intact?) and everything it wrote."""
    out, err = StringIO(), StringIO()
    try:
        call_command("verify_session_log", str(session.pk), stdout=out, stderr=err)
    except CommandError as exc:
        return False, f"{out.getvalue()}{err.getvalue()}{exc}"
    return True, out.getvalue() + err.getvalue()


def rewrite(session: ExamSession, seq: int, **fields: Any) -> None:
    row = SessionEvent.objects.get(session=session, seq=seq)
    tamper(SET_PAYLOAD, [json.dumps({**row.payload, **fields}), session.pk, seq])


@pytest.mark.parametrize("version", [2, 1])
def test_an_untouched_erased_log_verifies_intact(version: int) -> None:
    session = exam(chain_version=version)
    erase(session)
    intact, said = verify(session)
    assert intact and "chain intact" in said, said
    assert verify_log(session_id=session.pk) == []


@pytest.mark.parametrize("version", [2, 1])
def test_an_erased_transcript_rewritten_to_other_words_fails(version: int) -> None:
    session = exam(chain_version=version)
    erase(session)
    rewrite(session, 2, text=REWRITTEN)  # the erasure mark and its seal are kept

    intact, said = verify(session)

    assert not intact, said
    assert str(session.pk) in said and "seq 2" in said
    assert "erasure marker" in said
    problems = verify_log(session_id=session.pk)
    assert [(p.kind, p.seq) for p in problems if p.kind == "erased_rewritten"] == [
        ("erased_rewritten", 2)
    ]
    assert REWRITTEN not in said  # the message does not repeat what was written


@pytest.mark.parametrize(
    "value",
    [
        "[erased] but also: I copied",
        "[ERASED]",
        {},
        [],
        None,
        {"text": "[erased]"},
    ],
)
def test_any_value_but_the_exact_marker_fails(value: Any) -> None:
    session = exam()
    erase(session)
    rewrite(session, 3, excerpt=value)

    intact, said = verify(session)

    assert not intact, said
    assert str(session.pk) in said and "seq 3" in said and "excerpt" in said


def test_altered_marker_fields_fail() -> None:
    session = exam()
    erase(session)
    row = SessionEvent.objects.get(session=session, seq=2)
    # the kept seals claim a field the event type has no personal meaning for
    forged = {**row.erased, "seals": {**row.erased["seals"], "nodeId": row.erased["seals"]["text"]}}
    tamper(SET_ERASED, [json.dumps(forged), session.pk, 2])
    intact, said = verify(session)
    assert not intact and "seq 2" in said and str(session.pk) in said, said

    other = exam()
    erase(other)
    row = SessionEvent.objects.get(session=other, seq=4)
    # the erasure mark without its erasure id: no record can account for it
    tamper(SET_ERASED, [json.dumps({"seals": row.erased["seals"]}), other.pk, 4])
    intact, said = verify(other)
    assert not intact and "seq 4" in said and str(other.pk) in said, said


def test_a_rewritten_erased_value_is_caught_even_with_a_matching_erasure_record() -> None:
    """The marker stays a marker only: writing the words back (with or without the kept seal)
    is caught, whichever way the row is edited."""
    session = exam()
    erase(session)
    row = SessionEvent.objects.get(session=session, seq=5)
    tamper(
        "UPDATE exam_sessions_sessionevent SET payload = %s, erased = %s "
        "WHERE session_id = %s AND seq = 5",
        [json.dumps({**row.payload, "text": REWRITTEN}), json.dumps(row.erased), session.pk],
    )
    intact, said = verify(session)
    assert not intact and "seq 5" in said, said


def test_an_erasure_undone_with_the_original_words_fails() -> None:
    """The original words put back and the erasure mark removed: the chain links exactly these
    words, so only the erasure's record can tell that they should not be there."""
    session = exam()
    original = SessionEvent.objects.get(session=session, seq=2).payload
    erase(session)
    tamper(
        "UPDATE exam_sessions_sessionevent SET payload = %s, erased = NULL "
        "WHERE session_id = %s AND seq = 2",
        [json.dumps(original), session.pk],
    )

    intact, said = verify(session)

    assert not intact and "erasure_undone" in said and "seq 2" in said, said
    assert [(p.kind, p.seq) for p in verify_log(session_id=session.pk)] == [("erasure_undone", 2)]


def test_an_event_stored_after_the_erasure_is_not_an_undone_erasure() -> None:
    """A proctor's late irregularity report (stored after the erasure, never erased) is no
    undone erasure."""
    session = exam()
    erase(session)
    late = p.ProctorActionTaken(
        actor="user:7", action="flag_irregularity", reason="late note", category="candidate"
    )
    with TestCase.captureOnCommitCallbacks(execute=True):
        append_events(session=session, events=[event_factory(session)(late)])
    assert verify_log(session_id=session.pk) == []
