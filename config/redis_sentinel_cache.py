"""Django's Redis cache on a master found through Redis Sentinel (issue #33).

Django's ``RedisCache`` connects to the addresses in ``LOCATION`` only. With Sentinels
(``VIVA_REDIS_SENTINELS``, config/settings.py) the cache is :class:`SentinelRedisCache`: the same
backend, whose client sends every command to the master the Sentinels name. Its connections come
from redis-py's ``SentinelConnectionPool``, which asks the Sentinels for the master's address
whenever it opens a connection, so after a failover the next commands reach the promoted
replica; no restart and no change of settings.

``LOCATION`` is ``REDIS_URL``: its user, password and database number are the master's, its host
and port are not used. ``OPTIONS``: ``sentinels`` (``[(host, port), ...]``), ``master_name``,
optional ``sentinel_kwargs`` (how to connect to the Sentinels: password, timeouts), and
Django's own options (``serializer``, ``parser_class``; other keys go to the master's
connections, e.g. ``socket_timeout``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import Redis
from redis.connection import parse_url
from redis.sentinel import Sentinel


def sentinel_master(
    sentinels: Sequence[tuple[str, int]],
    master_name: str,
    sentinel_kwargs: Mapping[str, object] | None = None,
    **connection_kwargs: object,
) -> tuple[Sentinel, Redis]:
    """The Sentinels and a client of the master they name: its connections ask them for the
    master's address each time one is opened. ``connection_kwargs``: the master's (db,
    password, timeouts); ``sentinel_kwargs``: the Sentinels' (password, timeouts)."""
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        [(str(host), int(port)) for host, port in sentinels],
        sentinel_kwargs=dict(sentinel_kwargs or {}),
    )
    master: Redis = sentinel.master_for(master_name, **connection_kwargs)  # type: ignore[no-untyped-call]
    return sentinel, master


class SentinelRedisCacheClient(RedisCacheClient):
    """A ``RedisCacheClient`` whose reads and writes all go to the Sentinels' current master."""

    def __init__(
        self,
        servers: list[str],
        *,
        sentinels: Sequence[tuple[str, int]],
        master_name: str,
        sentinel_kwargs: Mapping[str, object] | None = None,
        serializer: str | None = None,
        pool_class: str | None = None,
        parser_class: str | None = None,
        **options: object,
    ) -> None:
        super().__init__(
            servers, serializer=serializer, pool_class=pool_class, parser_class=parser_class
        )
        url: dict[str, object] = parse_url(servers[0])  # type: ignore[no-untyped-call]
        master_kwargs: dict[str, object] = {
            k: url[k] for k in ("db", "username", "password") if k in url
        }
        master_kwargs.update(options)
        self.sentinel, self._master = sentinel_master(
            sentinels, master_name, sentinel_kwargs, **master_kwargs
        )

    def get_client(self, key: object = None, *, write: bool = False) -> Redis:
        """The master's client, for reads as well: replicas may lag behind a write."""
        return self._master


class SentinelRedisCache(RedisCache):
    """``django.core.cache.backends.redis.RedisCache`` through Redis Sentinel."""

    def __init__(self, server: str | list[str], params: dict[str, object]) -> None:
        super().__init__(server, params)
        self._class = SentinelRedisCacheClient
