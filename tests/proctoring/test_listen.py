"""*Listen in* on the proctor's session page (``proctoring.listen``): offered only for a
voice session carried by a configured LiveKit, to proctors and admins, with the reason shown
otherwise; and the token the page's player asks for, through the real view, is listen-only."""

from __future__ import annotations

import re
from typing import Any

import jwt
import pytest
from django.test import Client

from sessions.models import ExamSession
from tests.bot.conftest import new_session, publish_example
from tests.factories import AdminFactory, ProctorFactory

pytestmark = pytest.mark.django_db

KEY = "devkey"
SECRET = "secret-for-tests-only-0123456789abcdef"
URL = "ws://127.0.0.1:7880"


@pytest.fixture
def livekit(settings: Any) -> Any:
    settings.VIVA_VOICE_TRANSPORT = "livekit"
    settings.VIVA_LIVEKIT_URL = URL
    settings.LIVEKIT_API_KEY = KEY
    settings.LIVEKIT_API_SECRET = SECRET
    return settings


@pytest.fixture
def session() -> ExamSession:
    session = new_session(publish_example())
    session.exam_mode = "voice"
    session.save(update_fields=["exam_mode"])
    return session


def page_of(user: Any, session: ExamSession) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/proctor/sessions/{session.pk}/")
    assert response.status_code == 200
    return re.sub(r"\s+", " ", response.content.decode())


def proctor_of(session: ExamSession) -> Any:
    proctor = ProctorFactory()
    session.sitting.proctors.add(proctor)
    return proctor


def offered(html: str) -> bool:
    """The control and its scripts are on the page (and nothing else says it is not)."""
    has_button = 'id="listen-start"' in html
    has_scripts = "vendor/proctor-listen.js" in html and "js/proctor-listen.js" in html
    assert has_button == has_scripts
    assert has_button != ('id="listen-unavailable"' in html)
    return has_button


def test_offered_for_a_voice_session_over_livekit(livekit: Any, session: ExamSession) -> None:
    html = page_of(proctor_of(session), session)
    assert offered(html)
    token_url = f"/voice/sessions/{session.pk}/livekit/token"
    assert f'data-token-url="{token_url}"' in html
    assert ">Listen in</button>" in html and ">Stop listening</button>" in html
    assert 'role="status" aria-label="Listening"' in html
    assert 'aria-label="Who is speaking"' in html
    assert f"{session.candidate.name} (candidate)" in html
    assert "<script>" not in html  # no inline script (CSP)
    assert offered(page_of(AdminFactory(), session))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"exam_mode": "text"}, "This candidate answers in writing"),
        ({"exam_mode": ""}, "The candidate has not chosen voice yet"),
        ({"state": "completed"}, "The exam is over"),
    ],
)
def test_hidden_with_the_reason_for_the_session(
    livekit: Any, session: ExamSession, change: dict[str, str], reason: str
) -> None:
    ExamSession.objects.filter(pk=session.pk).update(**change)
    html = page_of(proctor_of(session), session)
    assert not offered(html)
    assert reason in html


@pytest.mark.parametrize(
    ("settings_change", "reason"),
    [
        ({"VIVA_VOICE_TRANSPORT": "smallwebrtc"}, "Listening in needs LiveKit"),
        ({"LIVEKIT_API_SECRET": ""}, "LiveKit is not configured on this server"),
        ({"VIVA_LIVEKIT_URL": ""}, "LiveKit is not configured on this server"),
    ],
)
def test_hidden_with_the_reason_for_the_server(
    livekit: Any, session: ExamSession, settings_change: dict[str, str], reason: str
) -> None:
    for name, value in settings_change.items():
        setattr(livekit, name, value)
    html = page_of(proctor_of(session), session)
    assert not offered(html)
    assert reason in html


def test_hidden_for_an_author_who_may_see_the_session(livekit: Any, session: ExamSession) -> None:
    author = session.sitting.version.draft.owner
    html = page_of(author, session)
    assert not offered(html)
    assert "Listening in is for proctors and admins." in html
    # The endpoint agrees: an author gets no token.
    client = Client()
    client.force_login(author)
    assert client.post(f"/voice/sessions/{session.pk}/livekit/token").status_code == 404


def test_the_players_token_request_gets_a_listen_only_token(
    livekit: Any, session: ExamSession
) -> None:
    proctor = proctor_of(session)
    html = page_of(proctor, session)
    token_url = re.search(r'data-token-url="([^"]+)"', html).group(1)  # type: ignore[union-attr]
    client = Client(enforce_csrf_checks=True)
    client.force_login(proctor)
    client.get(f"/proctor/sessions/{session.pk}/")  # sets the CSRF cookie, as the page does
    csrf = client.cookies["csrftoken"].value
    # As the player sends it: JSON, same origin, the CSRF header.
    response = client.post(
        token_url, "{}", content_type="application/json", headers={"X-CSRFToken": csrf}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["url"] == URL
    assert body["role"] == "proctor"
    assert body["identity"] == f"proctor-{proctor.pk}"
    assert body["room"] == f"viva-session-{session.pk}"
    claims = jwt.decode(body["token"], SECRET, algorithms=["HS256"], issuer=KEY)
    assert claims["sub"] == f"proctor-{proctor.pk}"
    assert claims["video"] == {
        "roomJoin": True,
        "room": f"viva-session-{session.pk}",
        "canPublish": False,
        "canSubscribe": True,
        "canPublishData": False,
        "canUpdateOwnMetadata": False,
    }
    # Without the CSRF header the request is refused.
    refused = client.post(token_url, "{}", content_type="application/json")
    assert refused.status_code == 403
