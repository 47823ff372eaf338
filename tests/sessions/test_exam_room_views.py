"""The candidate's journey pages (sessions.views, sessions.exam_room): steps, guards, CSRF,
what the page is told about the package, and the accommodations service."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from accounts.services import invitation_create
from publishing.services import version_publish
from sessions import exam_room
from sessions.exam_room import Step
from sessions.models import ExamSession, Sitting
from tests.factories import (
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def session() -> ExamSession:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(version=version, title="CS201 orals", created_by=author)
    return ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())


def url(session: ExamSession, step: str) -> str:
    return reverse(f"exam_sessions:exam-{step}", kwargs={"session_id": session.pk})


@pytest.fixture
def candidate(client: Client, session: ExamSession) -> Client:
    client.force_login(session.candidate)
    return client


def test_invitation_link_signs_in_and_lands_on_identity(
    client: Client, session: ExamSession
) -> None:
    invite = invitation_create(
        candidate=session.candidate, created_by=None, next_path=url(session, "entry")
    )
    assert client.get(invite.path).status_code == 200
    response = client.post(invite.path)
    assert response.status_code == 302 and response["Location"] == url(session, "entry")
    response = client.get(url(session, "entry"))
    assert response["Location"] == url(session, "identity")


def test_steps_in_order_store_what_they_say(candidate: Client, session: ExamSession) -> None:
    # Later steps are not reachable before the earlier ones.
    assert candidate.get(url(session, "room"))["Location"] == url(session, "identity")
    assert candidate.get(url(session, "briefing"))["Location"] == url(session, "identity")

    page = candidate.get(url(session, "identity"))
    assert page.status_code == 200
    assert b"What is recorded" in page.content and b"How it is used" in page.content
    refused = candidate.post(url(session, "identity"), {"identity": "yes"})
    assert refused.status_code == 400
    assert candidate.post(url(session, "identity"), {"identity": "yes", "consent": "yes"})[
        "Location"
    ] == url(session, "briefing")
    session.refresh_from_db()
    assert session.identity_confirmed_at and session.consent_given_at
    assert session.consent_version == exam_room.CONSENT_VERSION

    briefing = candidate.get(url(session, "briefing")).content.decode()
    assert "4 parts" in briefing and "20 minutes" in briefing
    assert candidate.post(url(session, "briefing"))["Location"] == url(session, "setup")
    session.refresh_from_db()
    assert session.briefing_seen_at is not None

    # Voice is not served in this test configuration unless the voice URLs are mounted.
    response = candidate.post(url(session, "setup"), {"mode": "text"})
    assert response["Location"] == url(session, "room")
    session.refresh_from_db()
    assert session.exam_mode == "text"
    assert exam_room.next_step(session) == Step.ROOM


def test_voice_needs_the_audio_check(
    candidate: Client, session: ExamSession, settings: Any
) -> None:
    settings.VIVA_BOT_RUNNER = "inline"  # SmallWebRTC: the bot runs in the web process
    exam_room.identity_confirm(session=session, identity=True, consent=True)
    exam_room.briefing_acknowledge(session=session)
    assert exam_room.voice_available(session)
    response = candidate.post(url(session, "setup"), {"mode": "voice"})
    assert response.status_code == 400
    response = candidate.post(url(session, "setup"), {"mode": "voice", "audio_checked": "yes"})
    assert response["Location"] == url(session, "room")
    session.refresh_from_db()
    assert session.exam_mode == "voice" and session.audio_checked_at is not None


def test_room_config_holds_no_rubric_or_evidence(candidate: Client, session: ExamSession) -> None:
    exam_room.identity_confirm(session=session, identity=True, consent=True)
    exam_room.briefing_acknowledge(session=session)
    exam_room.mode_choose(session=session, mode="text")
    page = candidate.get(url(session, "room")).content.decode()
    match = re.search(r'<script id="exam-room-config" type="application/json">(.*?)</script>', page)
    assert match, "the room's configuration is JSON in the page"
    config = json.loads(match.group(1))
    assert config["mode"] == "text" and config["sessionId"] == str(session.pk)
    assert [p["label"] for p in config["parts"]] == ["Warm-up", "Question", "Scenario", "Wrap-up"]
    assert config["nodeCommands"]["q-dijkstra"] == [
        "repeat_question",
        "request_clarification",
        "request_rephrase",
        "thinking_aloud",
    ]
    assert config["nodeCommands"]["warmup"] == ["repeat_question", "request_clarification"]
    # The room reads which buttons are node-gated from here, not from its own copy.
    assert config["nodeGatedCommands"] == [
        "repeat_question",
        "request_clarification",
        "request_rephrase",
        "thinking_aloud",
    ]
    document = example_document()
    secrets = []
    for node in document["nodes"]:
        for target in node.get("evidenceTargets", []):
            secrets += [target["id"], target["description"], target["label"]]
            for level in target.get("rubricDescriptor", {}).get("levels", {}).values():
                secrets.append(level["description"])
        secrets.append(node.get("promptSeed", ""))
    for secret in filter(None, secrets):
        assert secret not in page, f"the room page leaks {secret!r}"
    assert "<script>" not in page  # no inline script (CSP)


def test_forms_carry_csrf_tokens(session: ExamSession) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(session.candidate)
    assert client.post(url(session, "identity"), {"identity": "yes"}).status_code == 403
    page = client.get(url(session, "identity")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = client.post(
        url(session, "identity"),
        {"identity": "yes", "consent": "yes", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302


def test_other_people_get_404_or_403(client: Client, session: ExamSession) -> None:
    client.force_login(CandidateFactory())
    assert client.get(url(session, "identity")).status_code == 404
    client.force_login(ProctorFactory())
    assert client.get(url(session, "identity")).status_code == 403
    client.logout()
    assert client.get(url(session, "identity")).status_code == 302


def test_done_only_when_over_and_room_once_started(candidate: Client, session: ExamSession) -> None:
    exam_room.identity_confirm(session=session, identity=True, consent=True)
    exam_room.briefing_acknowledge(session=session)
    exam_room.mode_choose(session=session, mode="text")
    assert candidate.get(url(session, "done"))["Location"] == url(session, "room")
    ExamSession.objects.filter(pk=session.pk).update(state="in_progress")
    assert candidate.get(url(session, "setup"))["Location"] == url(session, "room")
    ExamSession.objects.filter(pk=session.pk).update(state="completed")
    assert candidate.get(url(session, "room"))["Location"] == url(session, "done")
    assert b"Your exam is complete" in candidate.get(url(session, "done")).content
    home = candidate.get(reverse("exam_sessions:candidate-home")).content.decode()
    assert "CS201 orals" in home and "This exam has ended" in home


def test_accommodations(session: ExamSession) -> None:
    exam_room.accommodations_set(
        session=session, extra_time_multiplier="1.5", text_mode_required=True, slower_speech=True
    )
    session.refresh_from_db()
    assert session.extra_time_multiplier == Decimal("1.50")
    assert session.text_mode_required and session.slower_speech
    assert not exam_room.voice_available(session)
    config = exam_room.room_config(session)
    assert config["totalBudgetSec"] == 1800  # 1200 s x 1.5
    with pytest.raises(ValidationError):
        exam_room.accommodations_set(session=session, extra_time_multiplier="0.5")
    with pytest.raises(ValidationError):
        exam_room.mode_choose(session=session, mode="voice", audio_checked=True)
    ExamSession.objects.filter(pk=session.pk).update(state="in_progress")
    with pytest.raises(ValidationError):
        exam_room.accommodations_set(session=session, slower_speech=False)


def test_admin_edits_accommodations(client: Client, session: ExamSession) -> None:
    from tests.factories import AdminFactory

    admin = AdminFactory(is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get(reverse("admin:exam_sessions_examsession_change", args=[session.pk]))
    assert page.status_code == 200
    for name in ("extra_time_multiplier", "text_mode_required", "slower_speech"):
        assert f'name="{name}"' in page.content.decode()
    assert 'name="consent_given_at"' not in page.content.decode()  # the journey is not edited


def test_voice_is_offered_only_where_the_deployment_can_carry_it(
    session: ExamSession, settings: Any
) -> None:
    settings.VIVA_VOICE_TRANSPORT = "smallwebrtc"
    settings.VIVA_BOT_RUNNER = "celery"  # a worker cannot own the web process's peer connection
    assert not exam_room.voice_available(session)
    settings.VIVA_BOT_RUNNER = "inline"
    assert exam_room.voice_available(session)

    settings.VIVA_VOICE_TRANSPORT = "livekit"
    settings.VIVA_BOT_RUNNER = "celery"
    settings.VIVA_LIVEKIT_URL = ""
    settings.LIVEKIT_API_KEY = ""
    settings.LIVEKIT_API_SECRET = ""
    assert not exam_room.voice_available(session), "LiveKit without a server is not voice"
    settings.VIVA_LIVEKIT_URL = "ws://127.0.0.1:7880"
    settings.LIVEKIT_API_KEY = "devkey"
    settings.LIVEKIT_API_SECRET = "secret-of-at-least-32-characters-long"
    assert exam_room.voice_available(session)

    session.text_mode_required = True
    assert not exam_room.voice_available(session), "a text-mode accommodation wins"
