"""Erasure leaves none of the person's words anywhere (issue #32). A real exam (the runtime
controller drives it, the marker marks it) is moderated, locked, released and appealed through
the public services and pages, with the person's name, email and words reaching every table
that can hold them (the audit log quoting the appeal, overrides and lock notes quoting the
answers, a window override, proctor requests, typed inputs, the bot's last error, the admin's
log, LTI records, signed-in sessions, webhook deliveries). ``erase_personal_data --apply`` then
runs, and every text and JSON column of every table, every signed-in session's data and the
files kept beside the chain are searched for them: nothing is found, the marks stay and both
the chain and the marks still verify."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.db import connection, models
from django.test import Client, TestCase
from lti_tool.models import (
    LtiContext,
    LtiDeployment,
    LtiRegistration,
    LtiResourceLink,
    LtiUser,
)

from accounts.models import Invitation, User
from bot.models import BotLease
from lti.models import GradePassback, SittingLink
from marking import services
from marking.models import (
    Appeal,
    MarkingAuditEntry,
    MarkingRequest,
    SessionMark,
    TargetDecision,
)
from marking.selectors import verify_marks
from sessions.inbox import parse_frame, store_input
from sessions.models import ExamSession, ProctorActionRequest, WindowOverride
from sessions.selectors import verify_log
from tests.factories import AuthorFactory, CandidateFactory
from webhooks import tasks as webhook_tasks
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

NAME, SURNAME = "Philippa", "Quackenbush"
EMAIL = "philippa.quackenbush@example.test"
USERNAME = "pquackenbush"
SAID = "I enjoyed the graph algorithms part"
"""The candidate's first answer in the driven exam (no package or rubric text)."""
APPEAL = "My microphone hissed like a kettle while I explained the frontier; please listen again"
TYPED = "Zanzibar quokkas relax the edges greedily"
NEEDLES = (NAME, SURNAME, EMAIL, USERNAME, "quackenbush", SAID, "hissed like a kettle")
TYPED_NEEDLES = (TYPED,)


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> Path:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40
    return tmp_path / "anchors"


@pytest.fixture(autouse=True)
def no_webhook_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliveries are stored (their bodies are searched); nothing is sent: no delivery task is
    enqueued (webhooks.services enqueues the first attempt with ``delay`` from a robust
    on-commit hook since d0dc317; the test stores an attempt of its own)."""
    monkeypatch.setattr(webhook_tasks.deliver, "delay", lambda *a, **k: None)


def text_columns() -> Iterator[tuple[type[models.Model], models.Field[Any, Any]]]:
    """Every stored column that can hold text: char, text, email, URL, IP, JSON (any model)."""
    kinds = (models.CharField, models.TextField, models.JSONField, models.GenericIPAddressField)
    for model in apps.get_models(include_auto_created=True):
        for field in model._meta.concrete_fields:
            if isinstance(field, kinds):
                yield model, field


def found_in_database(*needles: str) -> list[str]:
    """``table.column: needle`` for every needle found (case-insensitive) in any text or JSON
    column of any table, by raw SQL over the column's text."""
    found = []
    quote = connection.ops.quote_name
    like = "ILIKE" if connection.vendor == "postgresql" else "LIKE"
    with connection.cursor() as cursor:
        for model, field in text_columns():
            table, column = quote(model._meta.db_table), quote(field.column)
            for needle in needles:
                # the table and column are our models' own names, quoted; the needle a parameter
                sql = f"SELECT 1 FROM {table} WHERE CAST({column} AS TEXT) {like} %s LIMIT 1"  # noqa: S608
                cursor.execute(sql, [f"%{needle}%"])
                if cursor.fetchone():
                    found.append(f"{model._meta.db_table}.{field.column}: {needle}")
    return found


def found_in_signed_in_sessions(user_id: int, *needles: str) -> list[str]:
    """Signed-in sessions (stored encoded) that belong to the user or hold a needle."""
    found = []
    for row in Session.objects.all():
        data = row.get_decoded()
        text = str(data).lower()
        if str(data.get("_auth_user_id")) == str(user_id):
            found.append(f"session {row.session_key} signs in user {user_id}")
        found += [f"session {row.session_key}: {n}" for n in needles if n.lower() in text]
    return found


def found_in_files(folder: Path, *needles: str) -> list[str]:
    if not folder.exists():
        return []
    return [
        f"{path.name}: {needle}"
        for path in folder.rglob("*")
        if path.is_file()
        for needle in needles
        if needle.lower() in path.read_text(errors="replace").lower()
    ]


def lti_records(session: ExamSession, candidate: User) -> None:
    """The candidate as their LMS knows them, and a grade the LMS refused naming them."""
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
        given_name=NAME,
        family_name=SURNAME,
        name=f"{NAME} {SURNAME}",
        email=EMAIL,
        picture_url=f"https://lms.example.test/{USERNAME}.png",
        auth_user=candidate,
    )
    deployment = LtiDeployment.objects.create(registration=platform, deployment_id="d-1")
    context = LtiContext.objects.create(deployment=deployment, id_on_platform="course-1")
    resource = LtiResourceLink.objects.create(context=context, id_on_platform="link-1")
    link = SittingLink.objects.create(
        resource_link=resource, sitting=session.sitting, registration=platform
    )
    GradePassback.objects.create(
        session=session,
        link=link,
        cycle=1,
        score=0.5,
        status="failed",
        comment=f"Well argued, {NAME}: you said {SAID!r}",
        detail=f"403: {EMAIL} ({NAME} {SURNAME}) is not enrolled",
    )


def staff_records(session: ExamSession, candidate: User, staff: User) -> None:
    """What staff and the machinery wrote about the candidate beside the marks."""
    WindowOverride.objects.create(
        session=session, reason=f"{NAME} {SURNAME} had a hospital appointment", created_by=staff
    )
    ProctorActionRequest.objects.create(
        session=session,
        proctor=staff,
        action="instruct",
        params={"mode": "immediate", "text": f"{NAME}, please face the camera"},
        reason=f"{SURNAME} looked away",
        status="refused",
        message=f"refused: {NAME} is not in the room",
    )
    BotLease.objects.update_or_create(
        session=session,
        defaults={"state": "failed", "last_error": f"ValidationError: input_value='{SAID}'"},
    )
    MarkingRequest.objects.filter(session=session).update(error=f"could not read {SAID!r}")
    Invitation.objects.create(
        candidate=candidate,
        expires_at=session.created_at,
        used_from="192.0.2.7",
        note=f"{NAME}'s resit",
        next_path=f"/exam/?who={USERNAME}",
    )
    WebhookAttempt.objects.create(
        delivery=WebhookDelivery.objects.filter(body__contains=str(session.pk)).first(),
        number=1,
        started_at=session.created_at,
        status_code=422,
        latency_ms=5,
        response_excerpt=f'{{"error": "no learner {EMAIL}"}}',
    )
    for obj in (candidate, session):
        LogEntry.objects.create(
            user=staff,
            content_type=ContentType.objects.get_for_model(obj),
            object_id=str(obj.pk),
            object_repr=f"{obj} ({EMAIL})",
            action_flag=CHANGE,
            change_message=f'[{{"changed": {{"fields": ["note"]}}}}, "{NAME} {SURNAME}"]',
        )


def moderated_and_appealed(session: ExamSession, candidate: User, staff: User) -> SessionMark:
    """Overridden with a quote, locked, released, appealed by the candidate on their result
    page, second-marked and locked again with an outcome quoting the appeal."""
    mark = SessionMark.objects.get(session=session)
    target = mark.result_json["targets"][0]["key"]
    services.decision_override(
        mark=mark,
        target_key=target,
        level="satisfactory",
        rationale=f'{NAME} said "{SAID}": satisfactory, not excellent',
        user=staff,
    )
    services.marks_lock(mark=mark, user=staff, note=f"Checked {SURNAME}'s recording")
    services.result_release(mark=mark, user=staff)
    page = Client()
    page.force_login(candidate)  # a signed-in session stays stored (searched below)
    answer = page.post(f"/exam/{session.pk}/result/", {"reason": APPEAL})
    assert answer.status_code in (200, 302), answer.status_code
    assert Appeal.objects.filter(mark=mark, reason=APPEAL).exists()
    services.second_marking_set(mark=mark, required=True, user=staff)
    current = TargetDecision.objects.filter(mark=mark).order_by("target_key", "-number")
    levels = {row.target_key: row.level for row in reversed(list(current))}
    services.second_marks_record(
        mark=mark,
        user=AuthorFactory(),
        marks=[
            {"targetKey": key, "level": level, "rationale": f"Agree; {NAME} was clear: {SAID}"}
            for key, level in levels.items()
        ],
    )
    services.marks_lock(
        mark=mark, user=staff, note=f'The recording is clear despite "hissed like a kettle", {NAME}'
    )
    mark.refresh_from_db()
    return mark


def test_erasing_a_marked_appealed_exam_leaves_none_of_the_persons_words(
    make_session: Any, anchors: Path
) -> None:
    WebhookEndpoint.objects.create(
        name="Registry",
        url="https://hooks.example.test/viva",
        secret="whsec_" + "a" * 32,
        events=["exam.completed", "marks.locked", "irregularity.reported"],
    )
    ada = CandidateFactory(
        username=USERNAME,
        email=EMAIL,
        first_name=NAME,
        last_name=SURNAME,
        display_name=f"{NAME} {SURNAME}",
    )
    staff = AuthorFactory()
    with TestCase.captureOnCommitCallbacks(execute=True):  # marked on commit
        session = make_session("strong", candidate=ada)
    store_input(
        session_id=session.pk, item=parse_frame({"kind": "answer", "id": "a-1", "text": TYPED})
    )
    with TestCase.captureOnCommitCallbacks(execute=True):
        mark = moderated_and_appealed(session, ada, staff)
    staff_records(session, ada, staff)
    lti_records(session, ada)
    assert WebhookDelivery.objects.exists()
    before = (mark.final_score, mark.state, mark.cycle, mark.locked_at)
    levels = list(TargetDecision.objects.filter(mark=mark).values_list("target_key", "level"))
    everything = (*NEEDLES, *TYPED_NEEDLES)
    planted = found_in_database(*everything)
    for table in (
        "marking_markingauditentry",
        "marking_appeal",
        "marking_targetdecision",
        "marking_secondmark",
        "exam_sessions_sessionevent",
        "exam_sessions_candidateinput",
        "lti_tool_ltiuser",
        "lti_gradepassback",
        "django_admin_log",
        "bot_botlease",
        "webhooks_webhookattempt",
    ):
        assert any(hit.startswith(table + ".") for hit in planted), (table, planted)

    out = StringIO()
    call_command(
        "erase_personal_data",
        "--candidate",
        EMAIL,
        "--reason",
        "the candidate asked (ticket 4711)",
        "--apply",
        stdout=out,
    )

    assert "erased 1 session(s) and the account" in out.getvalue()
    left = found_in_database(*everything)
    assert left == [], "\n".join(left)
    assert found_in_signed_in_sessions(ada.pk, *everything) == []
    assert found_in_files(anchors, *everything) == []
    mark.refresh_from_db()
    assert (mark.final_score, mark.state, mark.cycle, mark.locked_at) == before
    after = list(TargetDecision.objects.filter(mark=mark).values_list("target_key", "level"))
    assert after == levels
    assert verify_log(session_id=session.pk) == []
    assert verify_marks(mark)
    appeal = Appeal.objects.get(mark=mark)
    assert (appeal.reason, appeal.outcome) == ("[erased]", "[erased]")
    assert appeal.opened_by_id == ada.pk and appeal.closed_at is not None
    actions = list(MarkingAuditEntry.objects.filter(mark=mark).values_list("action", flat=True))
    assert actions.count("appeal_opened") == 1 and actions[-1] == "personal_data_erased"
