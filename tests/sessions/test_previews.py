"""An author's preview of a draft in the real exam room (``sessions.previews``, issue #20): a
sandbox session that the author alone may enter, that is never marked, listed or exported, and
whose controller decisions the author reads beside the room."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from config.celery import app
from marking.models import MarkingRequest, SessionMark
from publishing.models import PublishedVersion
from publishing.services import version_publish
from sessions.models import ExamSession, Sitting
from sessions.previews import preview_start
from tests.factories import (
    AdminFactory,
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)
from tests.marking.exams import PROFILES, completed_session, drive, store_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager() -> Iterator[None]:
    """Tasks in-process (the embedded shape): marking would run on exam_completed's commit."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.fixture
def author() -> Any:
    return AuthorFactory()


@pytest.fixture
def draft(author: Any) -> Any:
    return DraftPackageFactory(owner=author, document=example_document())


@pytest.fixture
def preview(draft: Any, author: Any) -> ExamSession:
    return preview_start(draft=draft, user=author)


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_try_in_the_exam_room_creates_a_sandbox_session_and_leads_to_the_mode_choice(
    draft: Any, author: Any
) -> None:
    response = signed_in(author).post(reverse("exam_sessions:preview-start", args=[draft.pk]))
    session = ExamSession.objects.get(candidate=author)
    assert response.status_code == 302
    assert response["Location"] == reverse("exam_sessions:exam-setup", args=[session.pk])
    assert session.is_preview and session.sitting.is_preview
    build = session.sitting.version
    assert build.is_preview and build.number == 0 and build.draft_id == draft.pk


def test_a_preview_build_is_reused_and_never_numbered_among_the_versions(
    draft: Any, author: Any
) -> None:
    first = preview_start(draft=draft, user=author)
    second = preview_start(draft=draft, user=author)
    assert first.pk != second.pk
    assert first.sitting.version_id == second.sitting.version_id  # same checksum: same build
    published = version_publish(draft=draft, user=author)
    assert published.created and published.version.number == 1
    assert not published.version.is_preview
    assert list(PublishedVersion.objects.visible_to(author)) == [published.version]
    page = signed_in(author).get(reverse("publishing:package-versions", args=[draft.pk]))
    assert page.status_code == 200 and page.context["versions"] == [published.version]


def test_a_draft_with_errors_cannot_be_previewed(author: Any) -> None:
    broken = DraftPackageFactory(owner=author, document={"metadata": {"title": "Broken"}})
    response = signed_in(author).post(reverse("exam_sessions:preview-start", args=[broken.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("authoring:package-preview", args=[broken.pk])
    assert not ExamSession.objects.filter(candidate=author).exists()


def test_the_author_takes_their_own_preview_with_the_banner(
    preview: ExamSession, author: Any
) -> None:
    client = signed_in(author)
    response = client.get(reverse("exam_sessions:exam-setup", args=[preview.pk]))
    assert response.status_code == 200
    assert "this attempt is not recorded for marking" in response.content.decode()
    response = client.post(reverse("exam_sessions:exam-setup", args=[preview.pk]), {"mode": "text"})
    assert response.status_code == 302
    room = client.get(reverse("exam_sessions:exam-room", args=[preview.pk]))
    assert room.status_code == 200
    html = room.content.decode()
    assert "this attempt is not recorded for marking" in html
    assert 'id="preview-panel"' in html


@pytest.mark.parametrize(
    ("who", "room", "panel"),
    [
        ("other_author", 403, 404),
        ("candidate", 404, 403),
        ("proctor", 403, 403),
        ("admin", 403, 404),
    ],
)
def test_nobody_else_enters_a_preview_or_reads_its_panel(
    preview: ExamSession, who: str, room: int, panel: int
) -> None:
    user = {
        "other_author": AuthorFactory,
        "candidate": CandidateFactory,
        "proctor": ProctorFactory,
        "admin": AdminFactory,
    }[who]()
    client = signed_in(user)
    for name in ("exam-entry", "exam-setup", "exam-room", "exam-done"):
        assert client.get(reverse(f"exam_sessions:{name}", args=[preview.pk])).status_code == room
    url = reverse("exam_sessions:preview-decisions", args=[preview.pk])
    assert client.get(url).status_code == panel


def test_another_author_cannot_start_a_preview_of_a_draft_not_theirs(draft: Any) -> None:
    client = signed_in(AuthorFactory())
    response = client.post(reverse("exam_sessions:preview-start", args=[draft.pk]))
    assert response.status_code == 404
    response = signed_in(CandidateFactory()).post(
        reverse("exam_sessions:preview-start", args=[draft.pk])
    )
    assert response.status_code == 403
    assert not ExamSession.objects.exists()


def _complete(session: ExamSession) -> None:
    document = json.loads(session.sitting.version.canonical_json)
    store_session(session, drive(document, str(session.pk), PROFILES["strong"]()))


@pytest.mark.django_db(transaction=True)
def test_a_completed_preview_is_never_marked_nor_exported(
    preview: ExamSession, author: Any, draft: Any, eager: None
) -> None:
    _complete(preview)
    preview.refresh_from_db()
    assert preview.state == "completed"
    assert preview.events.filter(type="exam_completed").exists()
    assert not MarkingRequest.objects.filter(session=preview).exists()
    assert not SessionMark.objects.filter(session=preview).exists()
    # The same package published and taken by a candidate is marked and exported.
    real = version_publish(draft=draft, user=author).version
    taken = completed_session(version=real, candidate=CandidateFactory(), profile="strong")
    assert SessionMark.objects.filter(session=taken).exists()
    client = signed_in(author)
    csv = "api-marking-session-csv"
    assert client.get(reverse(csv, args=[taken.pk])).status_code == 200
    assert client.get(reverse(csv, args=[preview.pk])).status_code == 404
    cohort = "api-marking-cohort-csv"
    assert client.get(reverse(cohort, args=[real.pk])).status_code == 200
    assert client.get(reverse(cohort, args=[preview.sitting.version_id])).status_code == 404


def test_a_preview_is_listed_nowhere(preview: ExamSession, author: Any, draft: Any) -> None:
    version_publish(draft=draft, user=author)  # a real version beside the preview build
    proctor = ProctorFactory()
    admin = AdminFactory()
    for user in (author, proctor, admin):
        assert preview not in ExamSession.objects.visible_to(user)
        assert preview.sitting not in Sitting.objects.visible_to(user)
    client = signed_in(author)
    sittings = client.get(reverse("api-sitting-list")).json()
    assert all(row["id"] != str(preview.sitting_id) for row in sittings["results"])
    sessions = client.get(reverse("api-session-list")).json()
    assert all(row["id"] != str(preview.pk) for row in sessions["results"])
    assert client.get(reverse("api-session", args=[preview.pk])).status_code == 404
    home = signed_in(admin).get(reverse("exam_sessions:proctor-home")).content.decode()
    assert str(preview.sitting_id) not in home and preview.sitting.title not in home


@pytest.mark.django_db(transaction=True)
def test_the_panel_shows_what_the_controller_decided(
    preview: ExamSession, author: Any, eager: None
) -> None:
    _complete(preview)
    client = signed_in(author)
    url = reverse("exam_sessions:preview-decisions", args=[preview.pk])
    data = client.get(url).json()
    types = [d["type"] for d in data["decisions"]]
    assert {"node_entered", "evidence_signal", "transition_decision", "exam_completed"} <= set(
        types
    )
    assert "transcript_final" not in types  # decisions only; the room shows the conversation
    assert data["state"] == "completed" and data["node"]
    assert data["lastSeq"] == max(d["seq"] for d in data["decisions"])
    later = client.get(url, {"after": data["lastSeq"]}).json()
    assert later["decisions"] == [] and later["lastSeq"] == data["lastSeq"]
    assert client.get(url, {"after": "x"}).status_code == 400


def test_a_voice_preview_over_livekit_gives_the_author_the_candidates_token(
    preview: ExamSession, author: Any, settings: Any
) -> None:
    settings.VIVA_VOICE_TRANSPORT = "livekit"
    settings.VIVA_LIVEKIT_URL = "ws://127.0.0.1:7880"
    settings.LIVEKIT_API_KEY = "devkey"
    settings.LIVEKIT_API_SECRET = "secret-for-tests-only-0123456789abcdef"
    url = f"/voice/sessions/{preview.pk}/livekit/token"
    response = signed_in(author).post(url)
    assert response.status_code == 200
    assert response.json()["role"] == "candidate"
    assert response.json()["identity"] == f"candidate-{author.pk}"
    assert signed_in(AuthorFactory()).post(url).status_code == 404
    assert signed_in(AdminFactory()).post(url).status_code == 404
