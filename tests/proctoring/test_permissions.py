"""Who may reach the proctor dashboard, over every proctor endpoint: the HTML pages, the REST API
and both sockets (docs/proctoring.md, docs/permissions.md).

One table (:data:`ENDPOINTS`) lists every proctor endpoint; every test is parametrised over it:

* the sitting's own proctor gets through (no 403/404);
* a proctor of another sitting gets 404 and changes nothing;
* a candidate gets 403 (even naming their own session), an anonymous visitor the sign-in
  redirect (pages) or 401 (API).

:func:`test_the_table_covers_every_proctor_route` fails when a route is added without a row.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from pytest_django import DjangoDbBlocker

from config.routing import websocket_urlpatterns
from sessions.models import ExamSession, ProctorActionRequest, SessionEvent, Sitting
from tests.factories import AuthorFactory, CandidateFactory, ProctorFactory
from tests.sessions.factories import ExamSessionFactory, SittingFactory
from tests.support.shared_world import CommittingClient, reloaded, rolled_back_world

# The HTTP tests (class TestHttp) share one world and roll their changes back; only the socket
# tests are transactional: a consumer's database calls run in another thread, on another
# connection, which sees committed rows only.
pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str
    """With ``{sitting}`` and ``{session}`` placeholders."""
    data: Any = None
    kind: str = "json"
    """``json`` (API), ``form`` (page POST), ``multipart`` (file upload), ``material`` (a
    candidate's report uploaded), ``page`` (GET)."""

    @property
    def api(self) -> bool:
        return self.path.startswith("/api/")

    def url(self, world: World) -> str:
        return self.path.format(sitting=world.sitting.pk, session=world.session.pk)

    def call(self, client: Client, world: World) -> Any:
        url = self.url(world)
        if self.method == "get":
            return client.get(url)
        if self.kind == "multipart":
            upload = io.BytesIO(b"email,name\nnew-person@example.test,New Person\n")
            upload.name = "candidates.csv"
            return client.post(url, {"file": upload})
        if self.kind == "material":
            report = b"# My report\n\nWe chose a binary heap because it keeps the frontier small.\n"
            upload = io.BytesIO(report)
            upload.name = "report.md"
            return client.post(url, {"file": upload, "kind": "report"})
        if self.kind == "form":
            return client.post(url, self.data or {})
        return getattr(client, self.method)(url, self.data or {}, content_type="application/json")


ACTION = {"action": "flag_irregularity", "category": "staff", "reason": "Permission test."}
ENDPOINTS = [
    # pages
    Endpoint("proctor-sitting", "get", "/proctor/sittings/{sitting}/", kind="page"),
    Endpoint("proctor-candidates", "get", "/proctor/sittings/{sitting}/candidates/", kind="page"),
    Endpoint(
        "proctor-candidates:post",
        "post",
        "/proctor/sittings/{sitting}/candidates/",
        {"email": "added@example.test", "name": "Added"},
        kind="form",
    ),
    Endpoint(
        "proctor-import", "post", "/proctor/sittings/{sitting}/candidates/import/", kind="multipart"
    ),
    Endpoint("proctor-invite", "post", "/proctor/sittings/{sitting}/invitations/", kind="form"),
    Endpoint("proctor-session", "get", "/proctor/sessions/{session}/", kind="page"),
    Endpoint("proctor-action", "post", "/proctor/sessions/{session}/actions/", ACTION, "form"),
    Endpoint(
        "proctor-accommodations",
        "post",
        "/proctor/sessions/{session}/accommodations/",
        {"extra_time": "1.50"},
        kind="form",
    ),
    Endpoint(
        "proctor-window",
        "post",
        "/proctor/sessions/{session}/window/",
        {"reason": "Candidate was unwell"},
        kind="form",
    ),
    Endpoint("proctor-materials", "get", "/proctor/sittings/{sitting}/materials/", kind="page"),
    # REST API
    Endpoint("api-sitting", "get", "/api/v1/sittings/{sitting}/"),
    Endpoint("api-sitting-overview", "get", "/api/v1/sittings/{sitting}/overview/"),
    Endpoint(
        "api-sitting-candidates",
        "post",
        "/api/v1/sittings/{sitting}/candidates/",
        {"email": "api-added@example.test"},
    ),
    Endpoint(
        "api-sitting-import",
        "post",
        "/api/v1/sittings/{sitting}/candidates/import/",
        kind="multipart",
    ),
    Endpoint("api-sitting-invitations", "post", "/api/v1/sittings/{sitting}/invitations/", {}),
    Endpoint("api-session", "get", "/api/v1/sessions/{session}/"),
    Endpoint(
        "api-session-accommodations",
        "patch",
        "/api/v1/sessions/{session}/accommodations/",
        {"extraTimeMultiplier": "1.25"},
    ),
    Endpoint("api-session-timeline", "get", "/api/v1/sessions/{session}/timeline/"),
    Endpoint("api-session-transcript", "get", "/api/v1/sessions/{session}/transcript/"),
    Endpoint("api-session-ledger", "get", "/api/v1/sessions/{session}/ledger/"),
    Endpoint("api-session-interceptions", "get", "/api/v1/sessions/{session}/interceptions/"),
    Endpoint("api-session-actions", "get", "/api/v1/sessions/{session}/actions/"),
    Endpoint(
        "api-session-materials", "post", "/api/v1/sessions/{session}/materials/", kind="material"
    ),
    Endpoint("api-session-actions:post", "post", "/api/v1/sessions/{session}/actions/", ACTION),
]
LISTS = [
    ("api-sitting-list", "/api/v1/sittings/"),
    ("api-session-list", "/api/v1/sessions/"),
    ("proctor-home", "/proctor/"),
]
SOCKETS = ["/ws/proctor/sittings/{sitting}/", "/ws/sessions/{session}/events/?after_seq=0"]


@dataclass
class World:
    sitting: Sitting
    session: ExamSession
    proctor: Any
    stranger: Any
    candidate: Any

    def footprint(self) -> tuple[int, ...]:
        """What a refused request must not change."""
        return (
            ExamSession.objects.count(),
            SessionEvent.objects.count(),
            ProctorActionRequest.objects.count(),
            ExamSession.objects.filter(invitation__isnull=False).count(),
            ExamSession.objects.filter(extra_time_multiplier__gt=1).count(),
        )

    def fresh(self) -> World:
        """The same world with fresh copies of its objects (see :func:`reloaded`)."""
        return World(*(reloaded(obj) for obj in vars(self).values()))


def build_world() -> World:
    from publishing.services import version_publish
    from tests.factories import DraftPackageFactory, example_document

    # The exam asks about the candidate's own report (a grounded node), so a proctor's upload
    # of a candidate's material is an exam's ordinary business here.
    draft = DraftPackageFactory(document=example_document("cs201-own-report"))
    version = version_publish(draft=draft, user=draft.owner).version
    proctor, stranger = ProctorFactory(), ProctorFactory()
    sitting = SittingFactory(version=version, proctors=[proctor])
    SittingFactory(version=version, proctors=[stranger])  # the stranger proctors another one
    session = ExamSessionFactory(sitting=sitting)
    return World(sitting, session, proctor, stranger, session.candidate)


@pytest.fixture
def world() -> World:
    """A world of the test's own (committed: the socket tests)."""
    return build_world()


def client_for(user: Any | None) -> Client:
    client = CommittingClient()
    if user is not None:
        client.force_login(user)
    return client


def names(patterns: list[Any], prefix: str = "") -> set[str]:
    found: set[str] = set()
    for item in patterns:
        if isinstance(item, URLResolver):
            found |= names(item.url_patterns, prefix + str(item.pattern))
        elif isinstance(item, URLPattern) and item.name:
            route = prefix + str(item.pattern)
            if route.startswith(("proctor/", "api/v1/sittings", "api/v1/sessions")):
                found.add(item.name)
    return found


def test_the_table_covers_every_proctor_route() -> None:
    covered = {e.name.split(":")[0] for e in ENDPOINTS} | {name for name, _ in LISTS}
    assert names(get_resolver().url_patterns) == covered


class TestHttp:
    """The pages and the REST API: one world for the class, each test's changes rolled back."""

    @pytest.fixture(scope="class")
    @classmethod
    def shared_world(
        cls, django_db_setup: None, django_db_blocker: DjangoDbBlocker
    ) -> Iterator[World]:
        with rolled_back_world(django_db_blocker, build_world, run_on_commit=True) as world:
            yield world

    @pytest.fixture
    def world(self, shared_world: World) -> World:
        return shared_world.fresh()

    @pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
    def test_the_sittings_proctor_gets_through(self, world: World, endpoint: Endpoint) -> None:
        response = endpoint.call(client_for(world.proctor), world)
        assert response.status_code in (200, 201, 302), response.content[:500]

    @pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
    def test_a_proctor_of_another_sitting_gets_404_and_changes_nothing(
        self, world: World, endpoint: Endpoint
    ) -> None:
        before = world.footprint()
        response = endpoint.call(client_for(world.stranger), world)
        assert response.status_code == 404
        if endpoint.api:
            assert response.json()["error"]["code"] == "not_found"
        assert world.footprint() == before

    @pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
    def test_an_author_of_another_package_gets_404(self, world: World, endpoint: Endpoint) -> None:
        response = endpoint.call(client_for(AuthorFactory()), world)
        assert response.status_code == 404

    @pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
    @pytest.mark.parametrize("who", ["own candidate", "other candidate"])
    def test_a_candidate_gets_403(self, world: World, endpoint: Endpoint, who: str) -> None:
        user = world.candidate if who == "own candidate" else CandidateFactory()
        before = world.footprint()
        response = endpoint.call(client_for(user), world)
        assert response.status_code == 403
        assert world.footprint() == before

    @pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
    def test_anonymous_visitors_are_sent_to_sign_in(self, world: World, endpoint: Endpoint) -> None:
        response = endpoint.call(client_for(None), world)
        if endpoint.api:
            assert response.status_code == 401
        else:
            assert response.status_code == 302 and "login" in response.url

    @pytest.mark.parametrize(("name", "path"), LISTS)
    def test_lists_show_only_ones_own(self, world: World, name: str, path: str) -> None:
        own = client_for(world.proctor).get(path)
        other = client_for(world.stranger).get(path)
        assert own.status_code == other.status_code == 200
        if path.startswith("/api/"):
            own_ids = {str(r.get("id") or r.get("sessionId")) for r in own.json()["results"]}
            other_ids = {str(r.get("id") or r.get("sessionId")) for r in other.json()["results"]}
            mine = str(world.sitting.pk if "sittings" in path else world.session.pk)
            assert mine in own_ids and mine not in other_ids
        else:
            assert world.sitting.title in own.content.decode()
            assert world.sitting.title not in other.content.decode()
        assert client_for(world.candidate).get(path).status_code == 403


# --- sockets -------------------------------------------------------------------------------------


def close_thread_connection() -> None:
    """Close the connection of the thread the consumer's database calls ran in."""
    connection.close()


async def _connect(path: str, user: Any) -> tuple[bool, dict[str, Any] | None]:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    connected, _ = await communicator.connect(timeout=10)
    first = None
    if connected:
        first = await communicator.receive_json_from(timeout=10)
        while path.startswith("/ws/sessions/") and first.get("kind") != "caught_up":
            first = await communicator.receive_json_from(timeout=10)
        await communicator.disconnect()
    await sync_to_async(close_thread_connection, thread_sensitive=True)()
    return connected, first


def connect(path: str, user: Any) -> tuple[bool, dict[str, Any] | None]:
    from django.contrib.auth.models import AnonymousUser

    return asyncio.run(_connect(path, user if user is not None else AnonymousUser()))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("socket", SOCKETS)
def test_sockets_admit_the_sittings_proctor_with_the_proctor_view(
    world: World, socket: str
) -> None:
    connected, first = connect(
        socket.format(sitting=world.sitting.pk, session=world.session.pk), world.proctor
    )
    assert connected and first is not None
    if socket.startswith("/ws/proctor/"):
        assert first["kind"] == "snapshot"
        assert [r["sessionId"] for r in first["rows"]] == [str(world.session.pk)]
    else:
        assert first == {"kind": "caught_up", "lastSeq": 0, "audience": "proctor"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("socket", SOCKETS)
@pytest.mark.parametrize("who", ["stranger", "other candidate", "anonymous", "author"])
def test_sockets_refuse_everyone_else(world: World, socket: str, who: str) -> None:
    user = {
        "stranger": world.stranger,
        "other candidate": CandidateFactory(),
        "anonymous": None,
        "author": AuthorFactory(),
    }[who]
    connected, _ = connect(socket.format(sitting=world.sitting.pk, session=world.session.pk), user)
    assert not connected


@pytest.mark.django_db(transaction=True)
def test_a_candidate_reaches_no_proctor_socket_not_even_for_their_own_sitting(
    world: World,
) -> None:
    connected, _ = connect(f"/ws/proctor/sittings/{world.sitting.pk}/", world.candidate)
    assert not connected
    # Their own session's socket is the exam room's: the candidate view, never the proctor's.
    connected, first = connect(
        f"/ws/sessions/{world.session.pk}/events/?after_seq=0", world.candidate
    )
    assert connected and first is not None and first["audience"] == "candidate"
