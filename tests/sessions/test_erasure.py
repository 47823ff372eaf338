"""Personal data erasure (``sessions.erasure``, docs/privacy.md): pseudonymised on request or
after the retention period, while ``verify_session_log`` still passes and later tampering is
still caught; the event-log triggers let nothing else through. Runs on Postgres and SQLite."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.test import TestCase
from django.utils import timezone
from lti_tool.models import LtiRegistration, LtiUser

from accounts.models import Invitation
from ioa.events import payloads as p
from ioa.events.personal import ERASED_TEXT
from sessions.erasure import (
    ErasureRefused,
    _erasing,
    erase_candidate,
    erase_session,
    expired_sessions,
)
from sessions.event_store import append_events
from sessions.models import CandidateInput, ExamSession, PersonalDataErasure, SessionEvent
from sessions.selectors import export_lines, verify_log
from tests.factories import AdminFactory, CandidateFactory
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    evidence_signal,
    node_entered,
    transcript_final,
)
from tests.sessions.tampering import tamper

pytestmark = pytest.mark.django_db

SAID = "My name is Ada Lovelace and I live at 12 Byron Road"
EXCERPT = "Ada Lovelace, 12 Byron Road"
NOTE = "Ada's sister was whispering answers"


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> Path:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40
    return tmp_path / "anchors"


def candidate() -> Any:
    return CandidateFactory(
        username="ada.lovelace@example.test",
        email="ada.lovelace@example.test",
        first_name="Ada",
        last_name="Lovelace",
        display_name="Ada Lovelace",
    )


def exam(who: Any = None, **fields: Any) -> ExamSession:
    """A finished session whose log holds the candidate's words in three personal fields."""
    who = who or CandidateFactory(first_name="Ada", last_name="Lovelace")
    session = ExamSessionFactory(candidate=who, **fields)
    make = event_factory(session)
    irregularity = p.ProctorActionTaken(
        actor="user:7", action="flag_irregularity", reason=NOTE, nodeId="q1", category="candidate"
    )
    events = [
        make(node_entered("q1")),
        make(transcript_final("q1", turn=1, text=SAID)),
        make(evidence_signal("q1", excerpt=EXCERPT, description=f"Quoted: {EXCERPT}")),
        make(irregularity),
        make(transcript_final("q1", turn=2, speaker="examiner", text="Thank you, Ada.")),
    ]
    with TestCase.captureOnCommitCallbacks(execute=True):
        append_events(session=session, events=events[:2])
        for event in events[2:]:
            append_events(session=session, events=[event])
    CandidateInput.objects.create(
        session=session, input_id="in-1", kind="answer", payload={"text": SAID}
    )
    ExamSession.objects.filter(pk=session.pk).update(state="completed")
    session.refresh_from_db()
    return session


def erase(session: ExamSession, **kwargs: Any) -> PersonalDataErasure:
    return erase_session(
        session=session,
        kind=kwargs.get("kind", "request"),
        requested_by=kwargs.get("by"),
        reason=kwargs.get("reason", "the candidate asked (GDPR art. 17)"),
    )


def payload(session: ExamSession, seq: int) -> dict[str, Any]:
    return SessionEvent.objects.get(session=session, seq=seq).payload


def test_erasure_pseudonymises_the_log_and_the_chain_still_verifies() -> None:
    session = exam()
    before = list(SessionEvent.objects.filter(session=session).values("seq", "type", "hash"))
    assert verify_log(session_id=session.pk) == []
    admin = AdminFactory()

    erasure = erase(session, by=admin)

    assert verify_log(session_id=session.pk) == []
    out = StringIO()
    call_command("verify_session_log", str(session.pk), stdout=out)
    assert "chain intact" in out.getvalue()
    after = list(SessionEvent.objects.filter(session=session).values("seq", "type", "hash"))
    assert after == before  # structure and chain untouched
    said, signal, report = payload(session, 2), payload(session, 3), payload(session, 4)
    assert said["text"] == ERASED_TEXT and said["turnId"] == "turn-1"
    assert said["confidence"] == 0.93 and said["nodeId"] == "q1"
    assert signal["excerpt"] == ERASED_TEXT and signal["description"] == ERASED_TEXT
    assert signal["signalKind"] == "positive" and signal["targetIds"] == ["tgt-1"]
    assert report["reason"] == ERASED_TEXT and report["category"] == "candidate"
    assert payload(session, 5)["text"] == ERASED_TEXT
    assert CandidateInput.objects.get(session=session).payload == {}
    stored = PersonalDataErasure.objects.get(session=session)
    assert stored == erasure and stored.requested_by == admin and "art. 17" in stored.reason
    assert stored.counts == {
        "events": 4,
        "fields": 5,
        "inputs": 1,
        "proctorRequests": 0,
        "coverage": 2,  # sessions.erasure.COVERAGE (issue #32)
    }
    exported = "\n".join(export_lines(session_id=session.pk))
    assert "Lovelace" not in exported and "Byron" not in exported and "sister" not in exported


def test_a_candidate_erasure_pseudonymises_the_account() -> None:
    ada = candidate()
    first, second = exam(ada), exam(ada)
    platform = LtiRegistration.objects.create(
        name="Moodle",
        issuer="https://lms.example.test",
        client_id="c-1",
        auth_url="https://lms.example.test/auth",
        token_url="https://lms.example.test/token",
        keyset_url="https://lms.example.test/keys",
    )
    LtiUser.objects.create(
        registration=platform,
        sub="p-123",
        given_name="Ada",
        family_name="Lovelace",
        name="Ada Lovelace",
        email="ada@lms.example.test",
        picture_url="https://lms.example.test/ada.png",
        auth_user=ada,
    )
    Invitation.objects.create(
        candidate=ada,
        expires_at=timezone.now(),
        used_from="192.0.2.7",
        note="Ada's second attempt",
    )
    done = erase_candidate(candidate=ada, requested_by=None, reason="on request")
    assert {e.session_id for e in done} == {first.pk, second.pk}
    ada.refresh_from_db()
    assert ada.username.startswith("erased-") and not ada.is_active
    assert (ada.email, ada.first_name, ada.last_name, ada.display_name) == ("", "", "", "")
    assert not ada.has_usable_password()
    lti = LtiUser.objects.get(auth_user=ada)
    assert (lti.given_name, lti.family_name, lti.name, lti.email, lti.picture_url) == ("",) * 5
    assert lti.sub == "p-123"  # the platform's opaque id: a later launch is still recognised
    invitation = Invitation.objects.get(candidate=ada)
    assert (invitation.note, invitation.used_from) == ("", None)
    for session in (first, second):
        assert verify_log(session_id=session.pk) == []
        assert payload(session, 2)["text"] == ERASED_TEXT


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        # the kept seal edited
        (
            "UPDATE exam_sessions_sessionevent SET erased = %s WHERE session_id = %s AND seq = 2",
            "altered",
        ),
        # a non-personal field of an erased event edited
        (
            "UPDATE exam_sessions_sessionevent SET payload = %s WHERE session_id = %s AND seq = 3",
            "altered",
        ),
        # other words put back in place of the pseudonym, the erasure removed
        (
            "UPDATE exam_sessions_sessionevent SET payload = %s, erased = NULL "
            "WHERE session_id = %s AND seq = 2",
            "altered erasure_undone",
        ),
    ],
)
def test_tampering_after_erasure_is_still_caught(sql: str, kind: str) -> None:
    session = exam()
    erase(session)
    said = SessionEvent.objects.get(session=session, seq=2)
    signal = payload(session, 3)
    values = {
        2: {**said.erased, "seals": {"text": "hmac-sha256:" + "0" * 64}},
        3: {**signal, "confidence": 0.11},
    }
    if "erased = NULL" in sql:
        value: Any = {**said.payload, "text": "I never said anything about Byron Road"}
    else:
        value = values[2] if "erased = %s" in sql else values[3]
    tamper(sql, [json.dumps(value), session.pk])
    kinds = [problem.kind for problem in verify_log(session_id=session.pk)]
    assert kinds == kind.split(), kinds


def test_an_erasure_nobody_recorded_is_caught() -> None:
    session = exam()
    erasure = erase(session)
    other = exam()
    tamper(
        "UPDATE exam_sessions_personaldataerasure SET session_id = %s WHERE id = %s",
        [other.pk, erasure.pk],
    )
    kinds = {problem.kind for problem in verify_log(session_id=session.pk)}
    assert kinds == {"unrecorded_erasure"}


def raw_update(sql: str, params: list[Any]) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def db(value: Any) -> Any:
    return ExamSession._meta.pk.get_db_prep_value(value, connection)


def test_the_triggers_refuse_everything_but_the_erasure() -> None:
    session = exam()
    row = SessionEvent.objects.get(session=session, seq=2)
    erased = '{"erasure": "%s", "seals": {"text": "hmac-sha256:00"}}'
    swap = "UPDATE exam_sessions_sessionevent SET payload = %s, erased = %s WHERE id = %s"
    pseudonymised = '{"text": "[erased]"}'
    # Outside an erasure: refused, even with a record.
    record = PersonalDataErasure.objects.create(session=session, kind="request", reason="test")
    with pytest.raises(DatabaseError):
        raw_update(swap, [pseudonymised, erased % record.pk, row.pk])
    with transaction.atomic(), _erasing(str(record.pk)) as cursor:
        for sql, params in [
            # a column other than payload/erased
            ("UPDATE exam_sessions_sessionevent SET type = 'x' WHERE id = %s", [row.pk]),
            # a field whose seal is not kept
            (swap, ['{"nodeId": "q9"}', erased % record.pk, row.pk]),
            # under another erasure than the one in progress
            (swap, [pseudonymised, erased % "00000000-0000-4000-8000-000000000000", row.pk]),
            # a delete
            ("DELETE FROM exam_sessions_sessionevent WHERE id = %s", [row.pk]),
        ]:
            with pytest.raises(DatabaseError), transaction.atomic():
                cursor.execute(sql, params)
    assert SessionEvent.objects.get(pk=row.pk).payload["text"] == SAID
    # Another session's erasure cannot touch this session's events.
    other = exam()
    foreign = PersonalDataErasure.objects.create(session=other, kind="request", reason="test")
    full = {**row.payload, "text": ERASED_TEXT}
    with pytest.raises(DatabaseError), transaction.atomic(), _erasing(str(foreign.pk)) as cursor:
        cursor.execute(swap, [json.dumps(full), erased % foreign.pk, row.pk])
    assert SessionEvent.objects.get(pk=row.pk).erased is None


def test_an_erased_event_cannot_be_erased_again() -> None:
    session = exam()
    erase(session)
    with pytest.raises(ErasureRefused, match="erased already"):
        erase(session)
    record = PersonalDataErasure.objects.create(session=session, kind="request", reason="again")
    row = SessionEvent.objects.get(session=session, seq=2)
    with pytest.raises(DatabaseError), transaction.atomic(), _erasing(str(record.pk)) as cursor:
        cursor.execute(
            "UPDATE exam_sessions_sessionevent SET erased = %s WHERE id = %s",
            [json.dumps({"erasure": str(record.pk), "seals": {}}), row.pk],
        )


def test_a_running_exam_is_refused_untouched() -> None:
    running = exam()
    ExamSession.objects.filter(pk=running.pk).update(state="in_progress")
    running.refresh_from_db()
    with pytest.raises(ErasureRefused, match="running"):
        erase(running)
    assert payload(running, 2)["text"] == SAID
    assert not PersonalDataErasure.objects.exists()


def test_a_version_1_chain_is_erased_with_its_record_outside_the_database(anchors: Path) -> None:
    legacy = exam(chain_version=1)  # stored before chain version 2: clear text in the chain
    assert verify_log(session_id=legacy.pk) == []
    erasure = erase(legacy)
    assert verify_log(session_id=legacy.pk) == []
    assert payload(legacy, 2)["text"] == ERASED_TEXT and payload(legacy, 3)["confidence"] == 0.88
    lines = (anchors / f"{legacy.pk}.erasures.jsonl").read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [2, 3, 4, 5]
    assert all(json.loads(line)["erasure"] == str(erasure.pk) for line in lines)
    assert "Byron" not in "".join(lines)


def test_tampering_with_an_erased_version_1_chain_is_caught(anchors: Path) -> None:
    legacy = exam(chain_version=1)
    erase(legacy)
    signal = payload(legacy, 3)
    tamper(
        "UPDATE exam_sessions_sessionevent SET payload = %s WHERE session_id = %s AND seq = 3",
        [json.dumps({**signal, "confidence": 0.11}), legacy.pk],
    )
    assert [p.kind for p in verify_log(session_id=legacy.pk)] == ["altered"]

    other = exam(chain_version=1)
    erase(other)
    row = SessionEvent.objects.get(session=other, seq=2)
    forged = {**row.erased, "digest": "0" * 64}
    tamper(
        "UPDATE exam_sessions_sessionevent SET erased = %s WHERE session_id = %s AND seq = 2",
        [json.dumps(forged), other.pk],
    )
    assert {p.kind for p in verify_log(session_id=other.pk)} == {"altered", "unrecorded_erasure"}

    third = exam(chain_version=1)
    erase(third)
    (anchors / f"{third.pk}.erasures.jsonl").unlink()
    kinds = [p.kind for p in verify_log(session_id=third.pk)]
    assert kinds == ["unrecorded_erasure"] * 4


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("version", [2, 1])
def test_single_appends_outside_a_transaction_hash_the_same_seals(version: int) -> None:
    """On Postgres, the one-statement append picks the session's chain version's digest in SQL
    (a version 1 session still running when version 2 arrived keeps hashing in clear)."""
    session = ExamSessionFactory(candidate=candidate(), chain_version=version)
    make = event_factory(session)
    append_events(session=session, events=[make(node_entered("q1"))])
    append_events(session=session, events=[make(transcript_final("q1", text=SAID))])
    ExamSession.objects.filter(pk=session.pk).update(state="completed")
    session.refresh_from_db()
    assert verify_log(session_id=session.pk) == []
    erase(session)
    assert verify_log(session_id=session.pk) == []
    assert payload(session, 2)["text"] == ERASED_TEXT


def test_the_command_is_a_dry_run_unless_applied(settings: Any) -> None:
    ada = candidate()
    session = exam(ada)
    out = StringIO()
    call_command("erase_personal_data", "--candidate", ada.email, "--reason", "asked", stdout=out)
    assert f"session {session.pk}: 4 event(s), 5 personal field(s)" in out.getvalue()
    assert "dry run" in out.getvalue()
    assert payload(session, 2)["text"] == SAID and not PersonalDataErasure.objects.exists()
    with pytest.raises(CommandError, match="--reason"):
        call_command("erase_personal_data", "--candidate", ada.email)
    call_command(
        "erase_personal_data",
        "--candidate",
        ada.email,
        "--reason",
        "asked",
        "--apply",
        stdout=StringIO(),
    )
    assert payload(session, 2)["text"] == ERASED_TEXT
    assert PersonalDataErasure.objects.get().kind == "request"


def test_expired_sessions_are_erased_after_the_retention_period(settings: Any) -> None:
    old, recent = exam(), exam()
    ExamSession.objects.filter(pk=old.pk).update(
        updated_at=timezone.now() - timezone.timedelta(days=400)
    )
    settings.VIVA_RETENTION_DAYS = 0
    assert not expired_sessions().exists()  # 0: kept until erased on request
    settings.VIVA_RETENTION_DAYS = 365
    assert list(expired_sessions()) == [ExamSession.objects.get(pk=old.pk)]
    out = StringIO()
    call_command("erase_personal_data", "--expired", stdout=out)
    assert str(old.pk) in out.getvalue() and str(recent.pk) not in out.getvalue()
    assert payload(old, 2)["text"] == SAID
    call_command("erase_personal_data", "--expired", "--apply", stdout=out)
    assert payload(old, 2)["text"] == ERASED_TEXT and payload(recent, 2)["text"] == SAID
    assert PersonalDataErasure.objects.get().kind == "retention"
    assert verify_log(session_id=old.pk) == []


def traces(*needles: str) -> list[str]:
    """Every stored text, email or JSON column, of every model, holding one of ``needles``."""
    from django.apps import apps
    from django.db import models
    from django.db.models.functions import Cast

    found = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, models.JSONField):
                query = model._default_manager.annotate(_t=Cast(field.name, models.TextField()))
                lookup = "_t__icontains"
            elif isinstance(field, (models.CharField, models.TextField)):
                query, lookup = model._default_manager.all(), f"{field.name}__icontains"
            else:
                continue
            found += [
                f"{model._meta.label}.{field.name}"
                for needle in needles
                if query.filter(**{lookup: needle}).exists()
            ]
    return found


def test_the_admin_action_erases_a_candidate_and_no_row_or_answer_keeps_them(client: Any) -> None:
    session = exam(candidate())
    admin = AdminFactory()
    client.force_login(admin)
    url = "/admin/exam_sessions/examsession/"
    pick = {"action": "erase_candidates", "_selected_action": [str(session.pk)]}
    assert traces("Lovelace", "Byron", "sister")
    page = client.post(url, {**pick, "reason": ""}, follow=True)
    assert "give a reason" in page.content.decode()
    assert payload(session, 2)["text"] == SAID

    page = client.post(url, {**pick, "reason": "candidate's request"}, follow=True)

    assert "Personal data erased: 1." in page.content.decode()
    assert traces("Lovelace", "Byron", "sister", "ada.lovelace") == []
    assert PersonalDataErasure.objects.get().requested_by == admin
    for part in ("", "timeline/", "transcript/"):
        answer = client.get(f"/api/v1/sessions/{session.pk}/{part}")
        assert answer.status_code == 200, (part, answer.status_code)
        assert "Lovelace" not in answer.content.decode()
        assert "Byron" not in answer.content.decode()
    assert verify_log(session_id=session.pk) == []
    assert SessionEvent.objects.filter(session=session).count() == 5


def test_the_session_action_erases_finished_sessions_only_and_keeps_the_account(
    client: Any,
) -> None:
    done, running = exam(), exam()
    ExamSession.objects.filter(pk=running.pk).update(state="in_progress")
    client.force_login(AdminFactory())
    page = client.post(
        "/admin/exam_sessions/examsession/",
        {
            "action": "erase_sessions",
            "_selected_action": [str(done.pk), str(running.pk)],
            "reason": "retention review",
        },
        follow=True,
    )
    text = page.content.decode()
    assert "Personal data erased: 1." in text and "is running (in_progress)" in text
    assert payload(done, 2)["text"] == ERASED_TEXT and payload(running, 2)["text"] == SAID
    done.candidate.refresh_from_db()
    assert done.candidate.last_name == "Lovelace"  # a session's erasure keeps the account
    assert verify_log(session_id=done.pk) == []
