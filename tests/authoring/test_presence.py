"""Who else has a draft open in the studio (issue #34, "working together"): the presence heartbeat.

``POST /api/v1/packages/<id>/presence/`` says "I have this draft open" (or, with ``left``, that
the page is closing) and answers the other people who have it open now, by display name. Only
people who may edit the draft may ask (a stranger gets the draft endpoints' 404); an entry expires
60 s after its last heartbeat. Kept in Django's cache, never in the database.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from authoring import selectors, services
from authoring.models import DraftPackage
from tests.factories import AuthorFactory, DraftPackageFactory

pytestmark = pytest.mark.django_db


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def beat(client: Client, draft: DraftPackage, **body: object) -> dict[str, object]:
    response = client.post(
        f"/api/v1/packages/{draft.id}/presence/", body, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return dict(response.json())


def names(answer: dict[str, object]) -> list[str]:
    others = answer["others"]
    assert isinstance(others, list)
    return [entry["name"] for entry in others]


def shared_draft() -> tuple[DraftPackage, User]:
    draft = DraftPackageFactory(owner=AuthorFactory(display_name="Maria Lopez"))
    colleague = AuthorFactory(display_name="Lena Berg")
    draft.collaborators.add(colleague)
    return draft, colleague


def test_the_owner_and_a_co_author_each_see_the_other_never_themselves() -> None:
    draft, colleague = shared_draft()
    owner, co_author = _client(draft.owner), _client(colleague)
    alone = beat(owner, draft)
    assert alone == {"others": [], "heartbeatSec": 20, "expiresAfterSec": 60, "revision": 1}
    seen_by_colleague = beat(co_author, draft)
    assert names(seen_by_colleague) == ["Maria Lopez"]
    others = seen_by_colleague["others"]
    assert isinstance(others, list) and set(others[0]) == {"name", "lastSeen", "nodeId"}
    assert names(beat(owner, draft)) == ["Lena Berg"]


def test_with_someone_else_there_the_beats_come_faster_and_tell_their_saves() -> None:
    """Live updates (issue #34): while a co-author has the draft open too, each heartbeat is
    asked for after 5 s instead of 20, and carries the saved revision, so a page learns of the
    other's save within 5 s."""
    draft, colleague = shared_draft()
    owner, co_author = _client(draft.owner), _client(colleague)
    assert beat(owner, draft)["heartbeatSec"] == 20
    assert beat(co_author, draft)["heartbeatSec"] == 5
    services.draft_save(draft=draft, document=draft.document, expected_revision=1)
    answer = beat(owner, draft)
    assert (answer["heartbeatSec"], answer["revision"]) == (5, 2)
    beat(co_author, draft, left=True)
    assert beat(owner, draft)["heartbeatSec"] == 20


def test_a_stranger_gets_404_and_is_not_recorded() -> None:
    draft, _ = shared_draft()
    stranger = _client(AuthorFactory(display_name="Someone Else"))
    url = f"/api/v1/packages/{draft.id}/presence/"
    assert stranger.post(url, {}, content_type="application/json").status_code == 404
    assert stranger.post(url, {"left": True}, content_type="application/json").status_code == 404
    assert names(beat(_client(draft.owner), draft)) == []
    not_a_uuid = stranger.post(
        "/api/v1/packages/nope/presence/", {}, content_type="application/json"
    )
    assert not_a_uuid.status_code == 404


def test_a_co_author_removed_from_the_draft_gets_404() -> None:
    draft, colleague = shared_draft()
    co_author = _client(colleague)
    beat(co_author, draft)
    draft.collaborators.remove(colleague)
    url = f"/api/v1/packages/{draft.id}/presence/"
    assert co_author.post(url, {}, content_type="application/json").status_code == 404


def test_leaving_removes_the_sign_at_once() -> None:
    draft, colleague = shared_draft()
    owner, co_author = _client(draft.owner), _client(colleague)
    beat(owner, draft)
    beat(co_author, draft)
    assert names(beat(co_author, draft, left=True)) == ["Maria Lopez"]
    assert names(beat(owner, draft)) == []


def test_an_entry_expires_sixty_seconds_after_its_last_heartbeat() -> None:
    draft, colleague = shared_draft()
    start = timezone.now()
    services.draft_presence_note(draft=draft, user=colleague, now=start)

    def seen_at(seconds: float) -> list[str]:
        at = start + timedelta(seconds=seconds)
        return [
            e.name for e in selectors.draft_presence_others(draft=draft, user=draft.owner, now=at)
        ]

    assert seen_at(59) == ["Lena Berg"]
    assert seen_at(61) == []
    # A newer heartbeat keeps them here.
    services.draft_presence_note(draft=draft, user=colleague, now=start + timedelta(seconds=40))
    assert seen_at(61) == ["Lena Berg"]
    assert seen_at(101) == []


def test_several_others_most_recently_seen_first() -> None:
    draft, colleague = shared_draft()
    third = AuthorFactory(display_name="", first_name="Tom", last_name="Ruiz")
    draft.collaborators.add(third)
    start = timezone.now()
    services.draft_presence_note(draft=draft, user=colleague, now=start)
    services.draft_presence_note(draft=draft, user=third, now=start + timedelta(seconds=5))
    services.draft_presence_note(draft=draft, user=draft.owner, now=start + timedelta(seconds=6))
    others = selectors.draft_presence_others(
        draft=draft, user=draft.owner, now=start + timedelta(seconds=10)
    )
    assert [e.name for e in others] == ["Tom Ruiz", "Lena Berg"]


def test_presence_is_per_draft() -> None:
    draft, colleague = shared_draft()
    other_draft = DraftPackageFactory(owner=draft.owner)
    other_draft.collaborators.add(colleague)
    beat(_client(colleague), other_draft)
    assert names(beat(_client(draft.owner), draft)) == []
    assert names(beat(_client(draft.owner), other_draft)) == ["Lena Berg"]


def test_each_sees_which_node_the_other_has_open() -> None:
    draft, colleague = shared_draft()
    owner, other = _client(draft.owner), _client(colleague)
    beat(other, draft, nodeId="q-dijkstra")
    [lena] = beat(owner, draft, nodeId="warmup")["others"]
    assert (lena["name"], lena["nodeId"]) == ("Lena Berg", "q-dijkstra")
    [maria] = beat(other, draft, nodeId="")["others"]  # Lena went to the package settings
    assert (maria["name"], maria["nodeId"]) == ("Maria Lopez", "warmup")
    [lena] = beat(owner, draft)["others"]
    assert lena["nodeId"] is None


@pytest.mark.parametrize("node_id", [["q1"], {"id": "q1"}, "x" * 201])
def test_a_node_id_that_is_not_a_short_text_is_refused_by_name(node_id: object) -> None:
    draft, _ = shared_draft()
    response = _client(draft.owner).post(
        f"/api/v1/packages/{draft.id}/presence/",
        {"nodeId": node_id},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "nodeId" in response.content.decode()
