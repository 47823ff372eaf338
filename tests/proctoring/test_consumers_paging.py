"""The sitting overview snapshot is paged: a 10,000-candidate sitting over a real daphne socket,
no frame near daphne's 1 MiB limit (``proctoring.consumers``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets
from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts.models import User
from proctoring.consumers import SNAPSHOT_PAGE_BYTES, pages
from sessions.models import ExamSession
from tests.factories import ProctorFactory
from tests.sessions.factories import SittingFactory
from tests.support.processes import asgi_server

DAPHNE_LIMIT = 1024 * 1024
CANDIDATES = 10_000


def test_pages_keep_order_and_budget() -> None:
    items = [{"n": n, "pad": "x" * (n % 50)} for n in range(2000)]
    cut = pages(items, budget=4096)
    assert [i for page in cut for i in page] == items
    assert all(len(json.dumps(page, separators=(",", ":"))) <= 4096 + 64 for page in cut)
    assert pages([]) == [[]]


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
def test_a_10000_candidate_sitting_arrives_in_pages_under_the_frame_limit(server: str) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    password = make_password(None)
    candidates = User.objects.bulk_create(
        User(
            username=f"bulk{n}@example.test",
            email=f"bulk{n}@example.test",
            display_name=f"Candidate with a fairly long display name number {n}",
            role="candidate",
            password=password,
        )
        for n in range(CANDIDATES)
    )
    sessions = ExamSession.objects.bulk_create(
        ExamSession(sitting=sitting, candidate=c) for c in candidates
    )
    client = Client()
    client.force_login(proctor)
    cookie = f"sessionid={client.cookies['sessionid'].value}"

    async def watch() -> tuple[dict[str, Any], set[str], int]:
        seen: set[str] = set()
        largest = 0
        async with websockets.connect(
            f"ws://{server}/ws/proctor/sittings/{sitting.pk}/",
            origin=f"http://{server}",  # type: ignore[arg-type]
            additional_headers={"Cookie": cookie},
            open_timeout=30,
            max_size=None,
        ) as ws:
            raw = await asyncio.wait_for(ws.recv(), timeout=240)
            largest = len(raw)
            snapshot = json.loads(raw)
            seen.update(r["sessionId"] for r in snapshot["rows"])
            while len(seen) < snapshot["totalRows"]:
                raw = await asyncio.wait_for(ws.recv(), timeout=60)
                largest = max(largest, len(raw))
                frame = json.loads(raw)
                if frame["kind"] == "rows":
                    seen.update(r["sessionId"] for r in frame["rows"])
            await ws.send(json.dumps({"kind": "ping"}))
            while json.loads(await asyncio.wait_for(ws.recv(), timeout=30))["kind"] != "pong":
                pass
        return snapshot, seen, largest

    snapshot, seen, largest = asyncio.run(watch())
    assert snapshot["kind"] == "snapshot" and snapshot["totalRows"] == CANDIDATES
    assert seen == {str(s.pk) for s in sessions}
    assert largest < DAPHNE_LIMIT
    assert largest <= SNAPSHOT_PAGE_BYTES * 1.25  # the budget counts compact JSON
    print(f"10,000 rows; largest frame {largest} bytes")
