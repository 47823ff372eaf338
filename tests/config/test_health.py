"""/healthz over HTTP and ws/healthz/ over a real socket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets
from django.test import Client

from tests.support.processes import asgi_server, celery_worker


@pytest.mark.django_db
def test_healthz_reports_each_component() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["components"]["database"]["status"] == "ok"
    assert body["components"]["channelLayer"]["status"] == "ok"
    assert body["status"] in {"ok", "degraded"}
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_healthz_fails_with_503_when_the_database_is_down(settings, monkeypatch) -> None:
    from config import health

    def broken() -> dict:
        raise ConnectionError("connection refused")

    monkeypatch.setitem(health.PROBES, "database", broken)
    response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["components"]["database"] == {
        "status": "error",
        "error": "ConnectionError: connection refused",
        "latencyMs": body["components"]["database"]["latencyMs"],
    }


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db
def test_healthz_on_services_reports_postgres_redis_and_a_live_celery_worker() -> None:
    before = Client().get("/healthz").json()
    assert before["components"]["database"]["vendor"] == "postgresql"
    assert before["components"]["redis"]["status"] == "ok"
    assert before["components"]["channelLayer"]["backend"] == "RedisChannelLayer"
    with celery_worker(queues="default") as worker:
        during = Client().get("/healthz").json()
        assert during["components"]["celery"]["status"] == "ok"
        assert worker in during["components"]["celery"]["workers"]
        assert during["status"] == "ok"


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    """One daphne for both socket tests: a server process costs seconds to start (issue #36)."""
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


@pytest.mark.django_db(transaction=True)
def test_websocket_health_over_a_real_socket(server: str) -> None:
    async def talk(address: str) -> dict:
        async with websockets.connect(
            f"ws://{address}/ws/healthz/", origin=f"http://{address}", open_timeout=10
        ) as ws:
            return json.loads(await asyncio.wait_for(ws.recv(), 10))

    message = asyncio.run(talk(server))
    assert message["type"] == "healthz"
    assert message["channelLayer"]["status"] == "ok"


@pytest.mark.django_db(transaction=True)
def test_websocket_from_a_foreign_origin_is_refused_at_the_handshake(server: str) -> None:
    async def talk(address: str) -> None:
        async with websockets.connect(
            f"ws://{address}/ws/healthz/", origin="https://evil.example", open_timeout=10
        ):
            pass

    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        asyncio.run(talk(server))
    assert refused.value.response.status_code == 403
