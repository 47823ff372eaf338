"""Every REST API route, method, role and party (docs/permissions.md), in the NetBox style.

One table (:data:`ROUTES`) lists every operation of ``/api/v1/``; the expectations are written out
per party, not derived from the code:

* ``ok``: the request is authorised (any answer but 401, 403, 404 or a server error);
* ``401`` anonymous, ``403`` a role outside the endpoint's area;
* ``404`` another party's object (it does not exist for them), with the API's error body;
* ``refused``: another party's object named in the body (400 or 404).

Every refused request must change nothing (:func:`footprint` compares every row of our apps).
Party "A" owns the world's objects (its author owns the draft, its proctor proctors the sitting,
its candidate sits the session); party "B" is a second user of the same role.
:func:`test_the_table_covers_every_api_operation` fails when an operation has no row.
The tests of a class share one world, built once; each test's changes are rolled back.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from django.apps import apps
from django.test import Client, TestCase
from django.urls import URLPattern, URLResolver, get_resolver
from pytest_django import DjangoDbBlocker

from tests.factories import AdminFactory, AuthorFactory, CandidateFactory, ProctorFactory
from tests.support.shared_world import reloaded, rolled_back_world

pytestmark = pytest.mark.django_db

PARTIES = [
    "anonymous",
    "candidate A",
    "candidate B",
    "author A",
    "author B",
    "proctor A",
    "proctor B",
    "admin",
]
ROLES = ("candidate", "author", "proctor", "admin")
OURS = ("accounts", "authoring", "publishing", "exam_sessions", "marking", "bot")
VOLATILE = {"last_login", "updated_at"}


def expect(area: set[str], *, scoped: bool = True, **overrides: str) -> dict[str, str]:
    """The default rule: anonymous 401; outside the area 403; inside, party A and the admin
    get through and party B gets 404 (``scoped``) or through (collection routes)."""
    table: dict[str, str] = {"anonymous": "401"}
    for party in PARTIES[1:]:
        role = party.split()[0]
        if role not in area:
            table[party] = "403"
        elif party.endswith("B") and scoped:
            table[party] = "404"
        else:
            table[party] = "ok"
    for key, value in overrides.items():
        table[key.replace("_", " ")] = value
    return table


STUDIO = {"author", "admin"}
PROCTORING = {"author", "proctor", "admin"}
MARKING = {"author", "admin"}
EVERYONE = set(ROLES)
ACTION = {"action": "flag_irregularity", "category": "staff", "reason": "Permission walk."}


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    path: str
    expected: dict[str, str]
    data: Any = None
    multipart: bool = False
    marked: bool = False
    """The world needs a completed, marked session (marking routes)."""


ROUTES = [
    Route("api-me", "get", "/api/v1/me/", expect(EVERYONE, scoped=False)),
    Route(
        "api-invitation-create",
        "post",
        "/api/v1/invitations/",
        expect(PROCTORING),
        data={"email": "{candidate_email}"},
    ),
    Route("api-package-list", "get", "/api/v1/packages/", expect(STUDIO, scoped=False)),
    Route("api-package-list", "post", "/api/v1/packages/", expect(STUDIO, scoped=False), {}),
    Route("api-package-detail", "get", "/api/v1/packages/{draft}/", expect(STUDIO)),
    Route(
        "api-package-detail",
        "put",
        "/api/v1/packages/{draft}/",
        expect(STUDIO),
        {"document": {}},
    ),
    Route("api-package-detail", "delete", "/api/v1/packages/{draft}/", expect(STUDIO)),
    Route("api-package-validate", "post", "/api/v1/packages/{draft}/validate/", expect(STUDIO)),
    Route("api-validate", "post", "/api/v1/validate/", expect(STUDIO, scoped=False), {}),
    # The package format itself is public (editors and API clients fetch it).
    Route("api-package-schema", "get", "/api/v1/schema/package/", {p: "ok" for p in PARTIES}),
    Route("api-package-preview", "post", "/api/v1/packages/{draft}/preview/", expect(STUDIO)),
    Route("api-package-publish", "post", "/api/v1/packages/{draft}/publish/", expect(STUDIO)),
    Route("api-package-dry-run", "post", "/api/v1/packages/{draft}/dry-run/", expect(STUDIO)),
    Route("api-package-presence", "post", "/api/v1/packages/{draft}/presence/", expect(STUDIO)),
    Route(
        "api-package-bank-insert",
        "post",
        "/api/v1/packages/{draft}/bank-insert/",
        expect(STUDIO),
        {"templateId": "explain-concept"},
    ),
    Route("api-package-comments", "get", "/api/v1/packages/{draft}/comments/", expect(STUDIO)),
    Route(
        "api-package-comments",
        "post",
        "/api/v1/packages/{draft}/comments/",
        expect(STUDIO),
        {"nodeId": "q-dijkstra", "text": "Permission walk."},
    ),
    Route(
        "api-package-comment-detail",
        "patch",
        "/api/v1/packages/{draft}/comments/{comment}/",
        expect(STUDIO),
        {"resolved": True},
    ),
    Route("api-package-review", "get", "/api/v1/packages/{draft}/review/", expect(STUDIO)),
    Route(
        "api-package-review",
        "patch",
        "/api/v1/packages/{draft}/review/",
        expect(STUDIO),
        {"approvalRequired": True},
    ),
    Route(
        "api-package-approve",
        "post",
        "/api/v1/packages/{draft}/review/approve/",
        expect(STUDIO),
        {"revision": 1},
    ),
    Route("api-bank-list", "get", "/api/v1/question-bank/", expect(STUDIO, scoped=False)),
    Route(
        "api-bank-list",
        "post",
        "/api/v1/question-bank/",
        # A draft is named in the body: another author's is refused.
        expect(STUDIO, scoped=False, author_B="refused"),
        {"draftId": "{draft}", "nodeId": "q-dijkstra"},
    ),
    Route(
        "api-bank-templates",
        "get",
        "/api/v1/question-bank/templates/",
        expect(STUDIO, scoped=False),
    ),
    # Author A's private entry: another author's does not exist for author B.
    Route("api-bank-detail", "get", "/api/v1/question-bank/{bank}/", expect(STUDIO)),
    Route(
        "api-bank-detail",
        "patch",
        "/api/v1/question-bank/{bank}/",
        expect(STUDIO),
        {"shared": True},
    ),
    Route("api-bank-detail", "delete", "/api/v1/question-bank/{bank}/", expect(STUDIO)),
    # Author A's shared entry: author B may read it, not change or delete it (404, as if absent).
    Route(
        "api-bank-detail",
        "get",
        "/api/v1/question-bank/{bank_shared}/",
        expect(STUDIO, author_B="ok"),
    ),
    Route(
        "api-bank-detail",
        "patch",
        "/api/v1/question-bank/{bank_shared}/",
        expect(STUDIO),
        {"title": "Renamed by the walk", "tags": ["walk"]},
    ),
    Route("api-bank-detail", "delete", "/api/v1/question-bank/{bank_shared}/", expect(STUDIO)),
    Route("api-version-list", "get", "/api/v1/versions/", expect(EVERYONE, scoped=False)),
    *[
        Route(
            name,
            "get",
            f"/api/v1/versions/{{version}}/{suffix}",
            # Proctors see every published version (they schedule sittings from them);
            # candidates none.
            expect(EVERYONE, proctor_B="ok", candidate_A="404", candidate_B="404"),
        )
        for name, suffix in (
            ("api-version-detail", ""),
            ("api-version-report", "report/"),
            ("api-version-dry-run", "dry-run/"),
            ("api-version-compiled", "compiled/"),
        )
    ],
    Route("api-marking-list", "get", "/api/v1/marking/sessions/", expect(MARKING, scoped=False)),
    *[
        Route(
            name,
            method,
            f"/api/v1/marking/sessions/{{session}}/{suffix}",
            expect(MARKING),
            data,
            marked=True,
        )
        for name, method, suffix, data in (
            ("api-marking-detail", "get", "", None),
            ("api-marking-decisions", "get", "decisions/", None),
            (
                "api-marking-override",
                "post",
                "overrides/",
                {"targetKey": "x", "level": "secure", "rationale": "A long enough reason here."},
            ),
            ("api-marking-lock", "post", "lock/", {}),
            ("api-marking-appeal", "post", "appeals/", {"reason": "A long enough reason here."}),
            ("api-marking-second-marking", "post", "second-marking/", {"required": True}),
            ("api-marking-second-marks", "post", "second-marks/", {"marks": []}),
            ("api-marking-release", "post", "release/", {}),
            ("api-marking-report", "get", "report/", None),
            ("api-marking-session-csv", "get", "export.csv", None),
        )
    ],
    *[
        Route(
            name,
            "get",
            f"/api/v1/marking/versions/{{version}}/{suffix}",
            expect(MARKING),
            marked=True,
        )
        for name, suffix in (
            ("api-marking-cohort", "cohort/"),
            ("api-marking-cohort-csv", "export.csv"),
            ("api-marking-scheme", "scheme/"),
        )
    ],
    Route("api-sitting-list", "get", "/api/v1/sittings/", expect(PROCTORING, scoped=False)),
    Route(
        "api-sitting-list",
        "post",
        "/api/v1/sittings/",
        # A version is named in the body: another author's is refused; proctors see them all.
        expect(PROCTORING, scoped=False, author_B="refused"),
        {"versionId": "{version}"},
    ),
    Route("api-sitting", "get", "/api/v1/sittings/{sitting}/", expect(PROCTORING)),
    Route(
        "api-sitting-overview", "get", "/api/v1/sittings/{sitting}/overview/", expect(PROCTORING)
    ),
    Route(
        "api-sitting-candidates",
        "post",
        "/api/v1/sittings/{sitting}/candidates/",
        expect(PROCTORING),
        {"email": "walk-added@example.test"},
    ),
    Route(
        "api-sitting-import",
        "post",
        "/api/v1/sittings/{sitting}/candidates/import/",
        expect(PROCTORING),
        multipart=True,
    ),
    Route(
        "api-sitting-invitations",
        "post",
        "/api/v1/sittings/{sitting}/invitations/",
        expect(PROCTORING),
        {},
    ),
    Route("api-session-list", "get", "/api/v1/sessions/", expect(PROCTORING, scoped=False)),
    Route("api-session", "get", "/api/v1/sessions/{session}/", expect(PROCTORING)),
    Route(
        "api-session-accommodations",
        "patch",
        "/api/v1/sessions/{session}/accommodations/",
        expect(PROCTORING),
        {"extraTimeMultiplier": "1.25"},
    ),
    *[
        Route(name, "get", f"/api/v1/sessions/{{session}}/{suffix}/", expect(PROCTORING))
        for name, suffix in (
            ("api-session-timeline", "timeline"),
            ("api-session-transcript", "transcript"),
            ("api-session-ledger", "ledger"),
            ("api-session-interceptions", "interceptions"),
            ("api-session-actions", "actions"),
        )
    ],
    Route(
        "api-session-actions",
        "post",
        "/api/v1/sessions/{session}/actions/",
        expect(PROCTORING),
        ACTION,
    ),
    Route(
        "api-session-materials",
        "post",
        "/api/v1/sessions/{session}/materials/",
        expect(PROCTORING),
        multipart=True,
    ),
]


@dataclass
class World:
    users: dict[str, Any]
    ids: dict[str, str] = field(default_factory=dict)

    def fresh(self) -> World:
        """The same world with fresh copies of its users (see :func:`reloaded`)."""
        return World({party: reloaded(user) for party, user in self.users.items()}, dict(self.ids))

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return value.format(**self.ids)
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value


def build_world(*, marked: bool) -> World:
    from authoring.services import bank_entry_save, comment_create
    from publishing.services import version_publish
    from sessions.models import ExamSession
    from tests.factories import DraftPackageFactory, example_document
    from tests.sessions.factories import SittingFactory

    users = {
        "candidate A": CandidateFactory(),
        "candidate B": CandidateFactory(),
        "author A": AuthorFactory(),
        "author B": AuthorFactory(),
        "proctor A": ProctorFactory(),
        "proctor B": ProctorFactory(),
        "admin": AdminFactory(),
    }
    draft = DraftPackageFactory(owner=users["author A"], document=example_document())
    version = version_publish(draft=draft, user=users["author A"]).version
    other = DraftPackageFactory(owner=users["author B"], document=example_document())
    other_version = version_publish(draft=other, user=users["author B"]).version
    sitting = SittingFactory(version=version, proctors=[users["proctor A"]])
    other_sitting = SittingFactory(version=other_version, proctors=[users["proctor B"]])
    ExamSession.objects.create(sitting=other_sitting, candidate=users["candidate B"])
    if marked:
        from config.celery import app
        from tests.marking.exams import completed_session

        eager, app.conf.task_always_eager = app.conf.task_always_eager, True
        try:
            with TestCase.captureOnCommitCallbacks(execute=True):  # marking runs on commit
                session = completed_session(
                    version=version, candidate=users["candidate A"], sitting=sitting
                )
        finally:
            app.conf.task_always_eager = eager
    else:
        session = ExamSession.objects.create(sitting=sitting, candidate=users["candidate A"])
    world = World(users)
    world.ids = {
        "draft": str(draft.pk),
        "bank": str(bank_entry_save(owner=users["author A"], draft=draft, node_id="q-dijkstra").pk),
        "bank_shared": str(
            bank_entry_save(
                owner=users["author A"], draft=draft, node_id="scn-delivery-routes", shared=True
            ).pk
        ),
        "comment": str(
            comment_create(draft=draft, author=users["author A"], node_id="", text="Walk.").pk
        ),
        "version": str(version.pk),
        "sitting": str(sitting.pk),
        "session": str(session.pk),
        "candidate_email": users["candidate A"].email or users["candidate A"].username,
    }
    return world


def footprint() -> str:
    """A digest of every row of our apps (what a refused request must not change)."""
    digest = hashlib.sha256()
    for model in apps.get_models():
        if model._meta.app_label not in OURS:
            continue
        names = [f.attname for f in model._meta.concrete_fields if f.attname not in VOLATILE]
        for row in model.objects.order_by("pk").values_list(*names):
            digest.update(repr((model._meta.label, row)).encode())
    return digest.hexdigest()


def call(route: Route, world: World, party: str) -> Any:
    client = Client()
    if party != "anonymous":
        client.force_login(world.users[party])
    url = world.fill(route.path)
    if route.method == "get":
        return client.get(url)
    if route.multipart:
        upload = io.BytesIO(b"email,name\nwalk-imported@example.test,Walk Imported\n")
        upload.name = "candidates.csv"
        return client.post(url, {"file": upload})
    return getattr(client, route.method)(
        url, world.fill(route.data or {}), content_type="application/json"
    )


def check(route: Route, party: str, response: Any) -> None:
    expected = route.expected[party]
    status = response.status_code
    where = f"{route.method.upper()} {route.path} as {party}: {status} {response.content[:300]!r}"
    assert status < 500, where
    if expected == "ok":
        assert status not in (401, 403, 404), where
        return
    if expected == "refused":
        assert status in (400, 404), where
    else:
        assert status == int(expected), where
    assert set(response.json()["error"]) == {"code", "message", "details"}, where


def refused_parties_change_nothing(route: Route, world: World) -> None:
    # Each party's "before" is the previous party's "after", asserted equal to the first.
    before = footprint()
    for party in PARTIES:
        if route.expected[party] == "ok":
            continue
        check(route, party, call(route, world, party))
        assert footprint() == before, f"{route.method} {route.path} as {party} changed data"


OWNERS = ["author A", "proctor A", "admin", "candidate A", "author B", "proctor B", "candidate B"]


def authorised(routes: list[Route]) -> list[tuple[Route, str]]:
    return [(r, p) for r in routes for p in OWNERS if r.expected[p] == "ok"]


def route_id(value: Route | str) -> str:
    return value if isinstance(value, str) else f"{value.method} {value.name}"


UNMARKED = [r for r in ROUTES if not r.marked]
MARKED = [r for r in ROUTES if r.marked]


# Each class builds its world once (publishing two packages, and for the marking routes a
# completed, marked session, is most of a test's cost); every test starts from it as built and
# its changes are rolled back (tests/support/shared_world.py).


class SharedWorld:
    """One world for the class's tests (with a completed, marked session if ``marked``)."""

    marked: bool

    @pytest.fixture(scope="class")
    @classmethod
    def shared_world(
        cls, django_db_setup: None, django_db_blocker: DjangoDbBlocker
    ) -> Iterator[World]:
        build = partial(build_world, marked=cls.marked)
        with rolled_back_world(django_db_blocker, build, run_on_commit=False) as world:
            yield world

    @pytest.fixture
    def world(self, shared_world: World) -> World:
        return shared_world.fresh()


class TestInAWorldWithoutMarks(SharedWorld):
    marked = False

    @pytest.mark.parametrize("route", UNMARKED, ids=route_id)
    def test_refused_parties_change_nothing(self, world: World, route: Route) -> None:
        refused_parties_change_nothing(route, world)

    @pytest.mark.parametrize(("route", "party"), authorised(UNMARKED), ids=route_id)
    def test_authorised_parties_get_through(self, world: World, route: Route, party: str) -> None:
        check(route, party, call(route, world, party))


class TestInAWorldWithAMarkedSession(SharedWorld):
    marked = True

    @pytest.mark.parametrize("route", MARKED, ids=route_id)
    def test_refused_parties_change_nothing(self, world: World, route: Route) -> None:
        refused_parties_change_nothing(route, world)

    @pytest.mark.parametrize(("route", "party"), authorised(MARKED), ids=route_id)
    def test_authorised_parties_get_through(self, world: World, route: Route, party: str) -> None:
        check(route, party, call(route, world, party))


def api_operations() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for item in patterns:
            if isinstance(item, URLResolver):
                walk(item.url_patterns, prefix + str(item.pattern))
            elif isinstance(item, URLPattern) and (prefix + str(item.pattern)).startswith(
                "api/v1/"
            ):
                view = getattr(item.callback, "view_class", None)
                for method in ("get", "post", "put", "patch", "delete"):
                    if view is not None and hasattr(view, method):
                        found.add((str(item.name), method))

    walk(get_resolver().url_patterns, "")
    return found


def test_the_table_covers_every_api_operation() -> None:
    assert {(r.name, r.method) for r in ROUTES} == api_operations()
    for route in ROUTES:
        assert set(route.expected) == set(PARTIES), route.name
