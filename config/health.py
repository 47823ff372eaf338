"""Health reporting: ``GET /healthz`` and the ``ws/healthz/`` socket.

Each component reports ``{"status": "ok" | "error" | "unavailable" | "not_configured", ...}``.
The HTTP status is 503 when anything the web tier itself needs (database, channel layer, Redis)
fails; Celery without a live worker is reported as ``unavailable`` with an overall status of
``degraded`` (the site works; bots on the Celery runner and queued marking wait for a worker).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping

from asgiref.sync import async_to_sync
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from web.ws_input import BoundedJsonConsumerMixin

Probe = dict[str, object]


def _timed(check: Callable[[], Probe]) -> Probe:
    started = time.perf_counter()
    try:
        result = check()
    except Exception as exc:  # a probe reports any failure as data, never raises
        result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    result["latencyMs"] = round((time.perf_counter() - started) * 1000, 2)
    return result


def probe_database() -> Probe:
    """Runs ``SELECT 1`` on the default database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"status": "ok", "vendor": connection.vendor}


async def _channel_round_trip() -> Probe:
    layer = get_channel_layer()
    if layer is None:
        return {"status": "error", "error": "no channel layer configured"}
    channel = await layer.new_channel("healthz.")
    token = uuid.uuid4().hex
    await layer.send(channel, {"type": "healthz.ping", "token": token})
    message = await layer.receive(channel)
    ok = message.get("token") == token
    return {"status": "ok" if ok else "error", "backend": type(layer).__name__}


def probe_channel_layer() -> Probe:
    """Sends a message to a fresh channel and reads it back."""
    return async_to_sync(_channel_round_trip)()


def probe_redis() -> Probe:
    """Pings Redis when REDIS_URL is set: the master the Sentinels name, with Sentinels
    (VIVA_REDIS_SENTINELS; the report then gives the master's address)."""
    if not settings.REDIS_URL:
        return {"status": "not_configured"}
    import redis

    if settings.REDIS_SENTINELS:
        from config.redis_sentinel_cache import sentinel_master

        sentinel, client = sentinel_master(
            settings.REDIS_SENTINELS,
            settings.VIVA_REDIS_SENTINEL_MASTER,
            settings.REDIS_SENTINEL_KWARGS,
            socket_timeout=2,
            socket_connect_timeout=2,
            **settings.REDIS_MASTER_CREDENTIALS,
        )
        try:
            client.ping()
            master = settings.VIVA_REDIS_SENTINEL_MASTER
            host, port = sentinel.discover_master(master)  # type: ignore[no-untyped-call]
        finally:
            client.close()
            sentinel.close()
        return {"status": "ok", "sentinelMaster": f"{host}:{port}"}
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return {"status": "ok"}


def probe_celery() -> Probe:
    """Asks the Celery workers to answer a ping (1 s), when a broker is configured."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"status": "not_configured", "mode": "eager (tasks run in-process)"}
    from config.celery import app

    replies = app.control.inspect(timeout=1.0).ping() or {}
    workers = sorted(replies)
    return {"status": "ok" if workers else "unavailable", "workers": workers}


PROBES: dict[str, Callable[[], Probe]] = {
    "database": probe_database,
    "channelLayer": probe_channel_layer,
    "redis": probe_redis,
    "celery": probe_celery,
}
ESSENTIAL = ("database", "channelLayer", "redis")


def health_report() -> tuple[int, dict[str, object]]:
    """Runs every probe; returns the HTTP status and the report body."""
    components = {name: _timed(probe) for name, probe in PROBES.items()}
    failed = [n for n in ESSENTIAL if components[n]["status"] == "error"]
    if failed:
        status = "error"
    elif components["celery"]["status"] in {"error", "unavailable"}:
        status = "degraded"
    else:
        status = "ok"
    body: dict[str, object] = {
        "status": status,
        "mode": settings.SERVICES_MODE,
        "botRunner": settings.VIVA_BOT_RUNNER,
        "components": components,
    }
    return (503 if failed else 200), body


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """``GET /healthz``: the health report as JSON (no authentication, no secrets)."""
    code, body = health_report()
    return JsonResponse(body, status=code)


class HealthSocketConsumer(BoundedJsonConsumerMixin, AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Accepts, sends a message to its own channel through the channel layer, reports whether it
    came back (within 5 s), and closes: proves the WebSocket path and the consumer's layer."""

    async def connect(self) -> None:
        await self.accept()
        self.token = uuid.uuid4().hex
        self.started = time.perf_counter()
        layer = get_channel_layer()
        if layer is None:
            await self._report({"status": "error", "error": "no channel layer configured"})
            return
        await layer.send(self.channel_name, {"type": "healthz.pong", "token": self.token})
        self.timeout = asyncio.get_running_loop().call_later(
            5, lambda: asyncio.ensure_future(self._report({"status": "error", "error": "timeout"}))
        )

    async def healthz_pong(self, message: Mapping[str, object]) -> None:
        self.timeout.cancel()
        ok = message.get("token") == self.token
        await self._report(
            {
                "status": "ok" if ok else "error",
                "backend": type(get_channel_layer()).__name__,
                "latencyMs": round((time.perf_counter() - self.started) * 1000, 2),
            }
        )

    async def _report(self, result: Probe) -> None:
        await self.send_json({"type": "healthz", "channelLayer": result})
        await self.close()
