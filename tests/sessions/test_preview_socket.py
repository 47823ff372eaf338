"""The session socket of an exam-room preview (``sessions.previews``) over a real daphne: the
author who started it joins as its candidate (candidate projection); nobody else joins."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import websockets

from sessions.models import ExamSession
from sessions.previews import preview_start
from tests.factories import (
    AdminFactory,
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)
from tests.sessions.test_websocket import caught_up, connect, cookie_for, frames_until
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.services("postgres", "redis"), pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


def a_preview() -> ExamSession:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    return preview_start(draft=draft, user=author)


def test_the_author_joins_their_preview_as_its_candidate(server: str) -> None:
    session = a_preview()
    cookie = cookie_for(session.candidate)

    async def join() -> list[dict[str, Any]]:
        async with connect(server, session, cookie, after_seq=0) as ws:
            return await frames_until(ws, caught_up)

    frames = asyncio.run(join())
    assert frames[-1] == {"kind": "caught_up", "lastSeq": 0, "audience": "candidate"}


@pytest.mark.parametrize("who", ["other_author", "admin", "proctor", "candidate"])
def test_nobody_else_joins_a_preview(server: str, who: str) -> None:
    session = a_preview()
    factory = {
        "other_author": AuthorFactory,
        "admin": AdminFactory,
        "proctor": ProctorFactory,
        "candidate": CandidateFactory,
    }[who]
    cookie = cookie_for(factory())

    async def attempt() -> None:
        async with connect(server, session, cookie, after_seq=0):
            pass

    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        asyncio.run(attempt())
    assert refused.value.response.status_code == 403
