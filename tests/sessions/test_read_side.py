"""Visibility, after_seq reads, the timeline, replay, export and verify_session_log."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import TestCase

from accounts.models import User
from sessions.event_store import append_events
from sessions.models import ExamSession
from sessions.replay import replay_session, session_summary
from sessions.selectors import (
    audience_for,
    events_after,
    export_lines,
    session_for_user,
    session_timeline,
)
from tests.factories import AdminFactory, AuthorFactory, CandidateFactory, ProctorFactory
from tests.sessions.factories import (
    ExamSessionFactory,
    SittingFactory,
    event_factory,
    evidence_signal,
    guardrail,
    node_entered,
    transcript_final,
)
from tests.sessions.tampering import tamper
from tests.support.processes import ROOT, child_environment

pytestmark = pytest.mark.django_db


def fill(session: ExamSession) -> None:
    make = event_factory(session)
    with TestCase.captureOnCommitCallbacks(execute=True):  # head anchors are written on commit
        _append_five(session, make)


def _append_five(session: ExamSession, make: Any) -> None:
    append_events(
        session=session,
        events=[
            make(node_entered("q1"), correlation_id="trans-1"),  # 1
            make(transcript_final("q1")),  # 2
            make(evidence_signal("q1")),  # 3 proctor only
            make(guardrail(), correlation_id="trans-2"),  # 4 proctor only
            make(transcript_final("q1", turn=2), correlation_id="trans-1"),  # 5
        ],
    )


def test_visibility_by_role() -> None:
    proctor, other_proctor = ProctorFactory(), ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    mine = ExamSessionFactory(sitting=sitting)
    elsewhere = ExamSessionFactory()
    collaborator = AuthorFactory()
    sitting.version.draft.collaborators.add(collaborator)
    visible = {
        mine.candidate: {mine},
        elsewhere.candidate: {elsewhere},
        proctor: {mine},
        other_proctor: set(),
        sitting.version.draft.owner: {mine},
        collaborator: {mine},
        AuthorFactory(): set(),
        AdminFactory(): {mine, elsewhere},
    }
    for user, sessions in visible.items():
        assert set(ExamSession.objects.visible_to(user)) == sessions, user.role
    from django.contrib.auth.models import AnonymousUser

    assert not ExamSession.objects.visible_to(AnonymousUser()).exists()
    inactive = CandidateFactory(is_active=False)
    assert not ExamSession.objects.visible_to(inactive).exists()
    assert session_for_user(user=elsewhere.candidate, session_id=mine.pk) is None
    assert session_for_user(user=mine.candidate, session_id="not-a-uuid") is None
    assert session_for_user(user=proctor, session_id=str(mine.pk)) == mine


def test_audiences_by_role() -> None:
    assert audience_for(User(role="candidate")) == "candidate"
    for role in ("proctor", "author", "admin"):
        assert audience_for(User(role=role)) == "proctor"


def test_after_seq_reads_are_projected_for_the_audience() -> None:
    session = ExamSessionFactory()
    fill(session)
    assert [e["seq"] for e in events_after(session_id=session.pk)] == [1, 2, 3, 4, 5]
    candidate = events_after(session_id=session.pk, after_seq=1, audience="candidate")
    assert [e["seq"] for e in candidate] == [2, 5]
    assert all("confidence" not in e["payload"] for e in candidate)
    proctor = events_after(session_id=session.pk, after_seq=2, audience="proctor", until_seq=4)
    assert [e["seq"] for e in proctor] == [3, 4]


def test_reads_page_through_long_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    from sessions import selectors

    monkeypatch.setattr(selectors, "CHUNK", 2)
    session = ExamSessionFactory()
    fill(session)
    assert [e["seq"] for e in events_after(session_id=session.pk, after_seq=0)] == [1, 2, 3, 4, 5]


def test_timeline_groups_by_correlation_id_in_order() -> None:
    session = ExamSessionFactory()
    fill(session)
    timeline = session_timeline(session_id=session.pk)
    assert [(t.correlation_id, [e["seq"] for e in t.events]) for t in timeline] == [
        ("trans-1", [1, 5]),
        (None, [2]),
        (None, [3]),
        ("trans-2", [4]),
    ]
    for_candidate = session_timeline(session_id=session.pk, audience="candidate")
    assert [[e["seq"] for e in t.events] for t in for_candidate] == [[1, 5], [2]]


def test_replay_rebuilds_state_from_the_log() -> None:
    session = ExamSessionFactory()
    fill(session)
    summary = session_summary(session_id=session.pk)
    assert summary.last_seq == 5 and summary.current_node_id == "q1"
    assert summary.evidence_signals == 1 and summary.guardrails_triggered == 1
    count = replay_session(session_id=session.pk, reducer=lambda n, _e: n + 1, initial=0)
    assert count == 5
    assert (
        replay_session(session_id=session.pk, reducer=lambda n, _e: n + 1, initial=0, until_seq=3)
        == 3
    )


def test_export_writes_json_lines_with_hashes(tmp_path) -> None:
    session = ExamSessionFactory()
    fill(session)
    lines = list(export_lines(session_id=session.pk))
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    assert records[1]["prevHash"] == records[0]["hash"]
    out = StringIO()
    call_command("export_session_log", str(session.pk), stdout=out)
    assert out.getvalue().splitlines() == lines
    target = tmp_path / "log.jsonl"
    call_command("export_session_log", str(session.pk), "--output", str(target), stderr=StringIO())
    assert target.read_text(encoding="utf-8").splitlines() == lines


def test_verify_session_log_passes_an_intact_log() -> None:
    session = ExamSessionFactory()
    fill(session)
    out = StringIO()
    call_command("verify_session_log", str(session.pk), stdout=out)
    assert "5 event(s), chain intact" in out.getvalue()


_tamper = tamper


def _verify_fails(session: ExamSession, expected: str) -> None:
    err = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("verify_session_log", str(session.pk), stderr=err)
    assert caught.value.returncode == 1
    assert expected in err.getvalue()


def test_verify_session_log_catches_an_edited_row() -> None:
    session = ExamSessionFactory()
    fill(session)
    payload = session.events.get(seq=2).payload
    payload["text"] = "I said something else"
    _tamper(
        "UPDATE exam_sessions_sessionevent SET payload = %s WHERE session_id = %s AND seq = 2",
        [json.dumps(payload), session.pk],
    )
    _verify_fails(session, "altered: seq 2")


def test_verify_session_log_catches_a_deleted_row() -> None:
    session = ExamSessionFactory()
    fill(session)
    _tamper(
        "DELETE FROM exam_sessions_sessionevent WHERE session_id = %s AND seq = 3", [session.pk]
    )
    _verify_fails(session, "missing: seq 3")


def test_verify_session_log_catches_reordered_rows() -> None:
    session = ExamSessionFactory()
    fill(session)
    for old, new in ((2, 1000), (3, 2), (1000, 3)):
        _tamper(
            "UPDATE exam_sessions_sessionevent SET seq = %s WHERE session_id = %s AND seq = %s",
            [new, session.pk, old],
        )
    _verify_fails(session, "seq 2")


def test_verify_session_log_catches_a_dropped_tail() -> None:
    session = ExamSessionFactory()
    fill(session)
    _tamper(
        "DELETE FROM exam_sessions_sessionevent WHERE session_id = %s AND seq = 5", [session.pk]
    )
    _verify_fails(session, "missing at the end")


def test_verify_session_log_refuses_unknown_sessions() -> None:
    with pytest.raises(CommandError):
        call_command("verify_session_log", "01890a5d-ac96-774b-bcce-b302099a8057")
    with pytest.raises(CommandError):
        call_command("verify_session_log", "nope")


@pytest.mark.django_db(transaction=True)
def test_verify_session_log_exits_with_status_1_on_tampering() -> None:
    session = ExamSessionFactory()
    fill(session)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", "verify_session_log", str(session.pk)],
            cwd=ROOT,
            env=child_environment(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert run().returncode == 0
    _tamper(
        "UPDATE exam_sessions_sessionevent SET source = 'frontend' WHERE session_id = %s "
        "AND seq = 4",
        [session.pk],
    )
    result = run()
    assert result.returncode == 1
    assert "altered: seq 4" in result.stderr
