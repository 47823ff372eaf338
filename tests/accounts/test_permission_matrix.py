"""Every role and every area, as documented in docs/permissions.md.

The expected table is written out here (not derived from accounts.roles) so a change to the code
that is not also a deliberate change to this table fails.
"""

from __future__ import annotations

import pytest
from django.test import Client

from authoring.models import DraftPackage
from tests.factories import (
    AdminFactory,
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
)

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "candidate", "author", "proctor", "admin"]
FACTORIES = {
    "candidate": CandidateFactory,
    "author": AuthorFactory,
    "proctor": ProctorFactory,
    "admin": AdminFactory,
}

# area URL → expected status per role (login = redirect to sign-in).
PAGES = {
    "/studio/": {
        "anonymous": "login",
        "candidate": 403,
        "author": 200,
        "proctor": 403,
        "admin": 200,
    },
    "/proctor/": {
        "anonymous": "login",
        "candidate": 403,
        "author": 200,
        "proctor": 200,
        "admin": 200,
    },
    "/exam/": {"anonymous": "login", "candidate": 200, "author": 403, "proctor": 403, "admin": 403},
    "/marking/": {
        "anonymous": "login",
        "candidate": 403,
        "author": 200,
        "proctor": 403,
        "admin": 200,
    },
    "/admin/": {
        "anonymous": "login",
        "candidate": "login",
        "author": "login",
        "proctor": "login",
        "admin": 200,
    },
}
API = {
    ("get", "/api/v1/me/"): {
        "anonymous": 401,
        "candidate": 200,
        "author": 200,
        "proctor": 200,
        "admin": 200,
    },
    ("get", "/api/v1/packages/"): {
        "anonymous": 401,
        "candidate": 403,
        "author": 200,
        "proctor": 403,
        "admin": 200,
    },
    ("post", "/api/v1/invitations/"): {
        "anonymous": 401,
        "candidate": 403,
        "author": 400,
        "proctor": 400,
        "admin": 400,
    },
    ("get", "/api/v1/versions/"): {
        "anonymous": 401,
        "candidate": 200,
        "author": 200,
        "proctor": 200,
        "admin": 200,
    },
}


def client_for(role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(FACTORIES[role]())
    return client


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("url", list(PAGES))
def test_page_areas(role: str, url: str) -> None:
    expected = PAGES[url][role]
    response = client_for(role).get(url)
    if expected == "login":
        assert response.status_code == 302
        assert "login" in response.url
    else:
        assert response.status_code == expected


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "url"), list(API))
def test_api_areas(role: str, method: str, url: str) -> None:
    expected = API[(method, url)][role]
    response = getattr(client_for(role), method)(url, {}, content_type="application/json")
    assert response.status_code == expected, response.content
    if expected in (401, 403):
        assert set(response.json()["error"]) == {"code", "message", "details"}


def test_another_authors_package_answers_404_in_pages_and_api() -> None:
    draft = DraftPackageFactory()
    stranger = client_for("author")
    for url in (
        f"/studio/{draft.id}/",
        f"/studio/{draft.id}/versions/",
        f"/api/v1/packages/{draft.id}/",
    ):
        assert stranger.get(url).status_code == 404, url
    assert (
        stranger.post(
            f"/api/v1/packages/{draft.id}/publish/", {}, content_type="application/json"
        ).status_code
        == 404
    )
    assert (
        stranger.put(
            f"/api/v1/packages/{draft.id}/", {"document": {}}, content_type="application/json"
        ).status_code
        == 404
    )
    assert (
        stranger.post(
            f"/api/v1/packages/{draft.id}/presence/", {}, content_type="application/json"
        ).status_code
        == 404
    )
    assert DraftPackage.objects.get(pk=draft.pk).revision == 1


def test_a_collaborator_sees_the_package() -> None:
    draft = DraftPackageFactory()
    collaborator = AuthorFactory()
    draft.collaborators.add(collaborator)
    client = Client()
    client.force_login(collaborator)
    assert client.get(f"/api/v1/packages/{draft.id}/").status_code == 200
    presence = client.post(
        f"/api/v1/packages/{draft.id}/presence/", {}, content_type="application/json"
    )
    assert presence.status_code == 200


# The studio's presence heartbeat on someone else's draft, per role: the studio area first
# (401/403), then the draft endpoints' 404 for an author who may not edit it; admins edit any.
PRESENCE = {"anonymous": 401, "candidate": 403, "author": 404, "proctor": 403, "admin": 200}


@pytest.mark.parametrize("role", ROLES)
def test_presence_heartbeat_by_role(role: str) -> None:
    draft = DraftPackageFactory()
    response = client_for(role).post(
        f"/api/v1/packages/{draft.id}/presence/", {}, content_type="application/json"
    )
    assert response.status_code == PRESENCE[role], response.content
