"""Redis Sentinel (issue #33): every Redis user finds the master through Sentinel.

* settings: unset, the Redis settings are exactly those of a plain ``REDIS_URL``; set, the channel
  layer, the cache, the Celery broker and result backend all name the Sentinels and the master;
  a malformed ``VIVA_REDIS_SENTINELS`` is a configuration error naming the variable;
* with real processes (a ``redis-server`` master and replica and one Sentinel on free ports,
  none of them the machine's Redis): a Django process whose settings name only the Sentinel
  uses the cache, the channel layer, the Celery broker and result backend, and reports a healthy
  Redis; the master is killed (SIGKILL), the Sentinel promotes the replica, and the same
  process's cache and channel layer work again with unchanged settings.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import LOGS, free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("DJANGO_", "DATABASE_URL", "REDIS_URL", "CELERY_", "VIVA_"))
}
SETTINGS = """
import json, django
from django.conf import settings
django.setup()
print(json.dumps({
    name: getattr(settings, name)
    for name in ("REDIS_URL", "CHANNEL_LAYERS", "CACHES", "CELERY_BROKER_URL",
                 "CELERY_RESULT_BACKEND", "CELERY_BROKER_TRANSPORT_OPTIONS",
                 "CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS")
}))
"""


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**CLEAN, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def redis_settings(**env: str) -> dict[str, Any]:
    result = run(["-c", SETTINGS], **env)
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_without_sentinels_the_redis_settings_are_those_of_redis_url() -> None:
    url = "redis://:pw@cache:6379/2"
    assert redis_settings(REDIS_URL=url) == {
        "REDIS_URL": url,
        "CHANNEL_LAYERS": {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {
                    "hosts": [{"address": url, "socket_timeout": 30, "max_connections": 100}],
                    "capacity": 1500,
                    "expiry": 60,
                },
            }
        },
        "CACHES": {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "viva",
            }
        },
        "CELERY_BROKER_URL": url,
        "CELERY_RESULT_BACKEND": url,
        "CELERY_BROKER_TRANSPORT_OPTIONS": {
            "visibility_timeout": 10800,
            "socket_connect_timeout": 2,
        },
        "CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS": {
            "retry_policy": {
                "max_retries": 2,
                "interval_start": 0,
                "interval_step": 0.5,
                "interval_max": 1,
            }
        },
    }


def test_with_sentinels_every_redis_user_names_them_and_the_master() -> None:
    s = redis_settings(
        REDIS_URL="redis://:s3cr%40t@unused:6379/3",
        VIVA_REDIS_SENTINELS="10.0.0.5:26379, 10.0.0.6:26380,[fd00::7]:26381,sentinel-c",
        VIVA_REDIS_SENTINEL_MASTER="viva",
        VIVA_REDIS_SENTINEL_PASSWORD="sentinel-pw",
    )
    sentinels = [
        ["10.0.0.5", 26379],
        ["10.0.0.6", 26380],
        ["fd00::7", 26381],
        ["sentinel-c", 26379],
    ]
    sentinel_kwargs = {"socket_timeout": 2, "socket_connect_timeout": 2, "password": "sentinel-pw"}
    assert s["CHANNEL_LAYERS"]["default"]["CONFIG"]["hosts"] == [
        {
            "sentinels": sentinels,
            "master_name": "viva",
            "sentinel_kwargs": sentinel_kwargs,
            "db": 3,
            "password": "s3cr@t",
            "socket_timeout": 30,
            "max_connections": 100,
        }
    ]
    assert s["CACHES"]["default"]["BACKEND"] == "config.redis_sentinel_cache.SentinelRedisCache"
    assert s["CACHES"]["default"]["OPTIONS"] == {
        "sentinels": sentinels,
        "master_name": "viva",
        "sentinel_kwargs": sentinel_kwargs,
    }
    celery_url = (
        "sentinel://:s3cr%40t@10.0.0.5:26379/3;sentinel://:s3cr%40t@10.0.0.6:26380/3;"
        "sentinel://:s3cr%40t@[fd00::7]:26381/3;sentinel://:s3cr%40t@sentinel-c:26379/3"
    )
    assert s["CELERY_BROKER_URL"] == s["CELERY_RESULT_BACKEND"] == celery_url
    for options in ("CELERY_BROKER_TRANSPORT_OPTIONS", "CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS"):
        assert s[options]["master_name"] == "viva"
        assert s[options]["sentinel_kwargs"] == sentinel_kwargs
    # Without REDIS_URL: the master's database 0, no password.
    s = redis_settings(VIVA_REDIS_SENTINELS="127.0.0.1:26379", VIVA_REDIS_SENTINEL_MASTER="viva")
    assert s["REDIS_URL"] == "redis://viva/0"
    assert s["CELERY_BROKER_URL"] == "sentinel://127.0.0.1:26379/0"


def test_malformed_sentinels_are_a_configuration_error_naming_the_variable() -> None:
    result = run(
        ["manage.py", "check"],
        VIVA_REDIS_SENTINELS="10.0.0.5:26379,10.0.0.6;26379",
        VIVA_REDIS_SENTINEL_MASTER="viva",
    )
    assert result.returncode == 1
    assert "viva.E022" in result.stderr
    assert "VIVA_REDIS_SENTINELS" in result.stderr and "'10.0.0.6;26379'" in result.stderr

    result = run(["manage.py", "check"], VIVA_REDIS_SENTINELS="10.0.0.5:26379")
    assert result.returncode == 1
    assert "viva.E023" in result.stderr and "VIVA_REDIS_SENTINEL_MASTER" in result.stderr

    # Nothing usable at all: refused when the settings load, in every process.
    result = run(["-c", SETTINGS], VIVA_REDIS_SENTINELS="sentinel:port")
    assert result.returncode != 0
    assert "VIVA_REDIS_SENTINELS='sentinel:port' names no Sentinel" in result.stderr


# --- Real processes: master, replica, Sentinel, and a Django process ---------------------------

MASTER_NAME = "viva"

CLIENT = r"""
import asyncio, json, sys, time, uuid
import django
django.setup()
from channels.layers import get_channel_layer
from django.core.cache import cache
from config.celery import app
from config.health import health_report

loop = asyncio.new_event_loop()  # one loop all along: the channel layer keeps its pools
layer = get_channel_layer()


def attempt(check):
    try:
        return check()
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def cache_check():
    token = uuid.uuid4().hex
    cache.set("sentinel-test", token, 60)
    return "ok" if cache.get("sentinel-test") == token else "mismatch"


async def group_round_trip():
    channel = await layer.new_channel()
    await layer.group_add("sentinel-test", channel)
    token = uuid.uuid4().hex
    await layer.group_send("sentinel-test", {"type": "sentinel.test", "token": token})
    message = await asyncio.wait_for(layer.receive(channel), 5)
    await layer.group_discard("sentinel-test", channel)
    return "ok" if message.get("token") == token else "mismatch"


def broker_check():
    token = uuid.uuid4().hex
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=2)
        queue = connection.SimpleQueue("viva-sentinel-test")
        try:
            queue.put({"token": token})
            message = queue.get(timeout=5)
            message.ack()
        finally:
            queue.close()
    return "ok" if message.payload == {"token": token} else "mismatch"


def result_backend_check():
    task_id = uuid.uuid4().hex
    app.backend.store_result(task_id, {"answer": 42}, "SUCCESS")
    return "ok" if app.backend.get_task_meta(task_id)["result"] == {"answer": 42} else "mismatch"


def health_check():
    code, body = health_report()
    return {"code": code, **{k: body["components"][k] for k in ("redis", "channelLayer")}}


for line in sys.stdin:
    result = {
        "cache": attempt(cache_check),
        "channelLayer": attempt(lambda: loop.run_until_complete(group_round_trip())),
    }
    if line.strip() == "full":
        result["broker"] = attempt(broker_check)
        result["resultBackend"] = attempt(result_backend_check)
        result["health"] = attempt(health_check)
    print(json.dumps(result), flush=True)
"""


def redis_cli(port: int, *args: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=10
    ).stdout.strip()


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Processes:
    """Every process the test starts, stopped (killed if need be) at the end."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[Any]] = []

    def start(self, argv: list[str], name: str, **kwargs: Any) -> subprocess.Popen[Any]:
        LOGS.mkdir(parents=True, exist_ok=True)
        log = (LOGS / f"sentinel-test-{name}.log").open("wb")
        kwargs.setdefault("stdout", log)
        process = subprocess.Popen(argv, stderr=log, **kwargs)
        log.close()
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            stop_process(process)


@pytest.fixture
def processes() -> Iterator[Processes]:
    started = Processes()
    try:
        yield started
    finally:
        started.stop_all()


def start_redis(
    processes: Processes, port: int, directory: Path, *extra: str
) -> subprocess.Popen[Any]:
    """A ``redis-server`` without persistence; ``directory`` takes the RDB file that a replica
    writes when it syncs."""
    process = processes.start(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
            *extra,
        ],
        f"redis-{port}",
    )
    wait_until(lambda: redis_cli(port, "ping") == "PONG", 10, f"redis-server on {port}")
    return process


@pytest.mark.services("redis")
def test_failover_through_sentinel_needs_no_restart(processes: Processes, tmp_path: Path) -> None:
    master_port, replica_port, sentinel_port = free_port(), free_port(), free_port()
    master = start_redis(processes, master_port, tmp_path)
    start_redis(processes, replica_port, tmp_path, "--replicaof", "127.0.0.1", str(master_port))
    wait_until(
        lambda: "master_link_status:up" in redis_cli(replica_port, "info", "replication"),
        20,
        "the replica to sync",
    )
    conf = tmp_path / "sentinel.conf"
    conf.write_text(
        f"port {sentinel_port}\nbind 127.0.0.1\ndir {tmp_path}\n"
        f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 1\n"
        f"sentinel down-after-milliseconds {MASTER_NAME} 1000\n"
        f"sentinel failover-timeout {MASTER_NAME} 5000\n"
    )
    processes.start(["redis-server", str(conf), "--sentinel"], f"sentinel-{sentinel_port}")
    wait_until(
        lambda: str(replica_port) in redis_cli(sentinel_port, "sentinel", "replicas", MASTER_NAME),
        30,
        "the Sentinel to know the replica",
    )

    # A Django process whose settings name the Sentinel only (REDIS_URL unset: redis://viva/0).
    client = processes.start(
        [sys.executable, "-c", CLIENT],
        "django-client",
        cwd=ROOT,
        env={
            **CLEAN,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "VIVA_VAR_DIR": str(tmp_path),
            "VIVA_REDIS_SENTINELS": f"127.0.0.1:{sentinel_port}",
            "VIVA_REDIS_SENTINEL_MASTER": MASTER_NAME,
        },
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def check(kind: str = "quick") -> dict[str, Any]:
        assert client.stdin is not None and client.stdout is not None
        client.stdin.write(kind + "\n")
        client.stdin.flush()
        line = client.stdout.readline()
        assert line, f"the Django process exited ({client.poll()}); see {LOGS}"
        result: dict[str, Any] = json.loads(line)
        return result

    before = check("full")
    assert before["cache"] == before["channelLayer"] == "ok", before
    assert before["broker"] == before["resultBackend"] == "ok", before
    assert before["health"]["code"] == 200, before
    assert before["health"]["redis"]["status"] == "ok", before
    assert before["health"]["redis"]["sentinelMaster"] == f"127.0.0.1:{master_port}"
    assert before["health"]["channelLayer"]["status"] == "ok", before

    # The master dies without a word; the Sentinel promotes the replica.
    master.send_signal(signal.SIGKILL)
    master.wait()
    killed = time.monotonic()
    promoted_after: float | None = None
    failures: list[dict[str, Any]] = []
    while True:
        elapsed = time.monotonic() - killed
        assert elapsed < 60, f"no failover after 60 s: {failures[-3:]}"
        if promoted_after is None and redis_cli(
            sentinel_port, "sentinel", "get-master-addr-by-name", MASTER_NAME
        ).splitlines()[-1:] == [str(replica_port)]:
            promoted_after = time.monotonic() - killed
        result = check()
        if result["cache"] == result["channelLayer"] == "ok":
            working_after = time.monotonic() - killed
            break
        failures.append(result)
        time.sleep(0.1)
    if promoted_after is None:
        promoted_after = working_after
    print(
        f"\nSentinel failover: master killed; replica promoted after <= {promoted_after:.1f} s; "
        f"cache and channel layer working again after {working_after:.1f} s "
        f"({len(failures)} failed checks in between)"
    )
    assert promoted_after <= working_after
    assert working_after < 30

    after = check("full")
    assert after["cache"] == after["channelLayer"] == "ok", after
    assert after["broker"] == after["resultBackend"] == "ok", after
    assert after["health"]["code"] == 200, after
    assert after["health"]["redis"]["sentinelMaster"] == f"127.0.0.1:{replica_port}"
    assert after["health"]["channelLayer"]["status"] == "ok", after
    assert redis_cli(replica_port, "role").splitlines()[0] == "master"
