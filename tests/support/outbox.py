"""Holding the outbox's hand-overs, as a broker outage would (``sessions.outbox``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from celery import Celery

from sessions import outbox
from tests.support.processes import free_port


class HeldRelay:
    """Records each message id the outbox would have handed to the relay, and hands none."""

    def __init__(self) -> None:
        self.handed: list[int] = []

    def __call__(self, message_id: int, queue: str) -> None:
        self.handed.append(message_id)


@contextmanager
def held_relay() -> Iterator[HeldRelay]:
    """While inside, committed outbox messages are not handed over: they wait for
    ``outbox.relay_due`` (or the test delivers them)."""
    relay = HeldRelay()
    previous = outbox.set_kick(relay)
    try:
        yield relay
    finally:
        outbox.set_kick(previous)


@contextmanager
def broker_down() -> Iterator[str]:
    """While inside, committed messages are handed over through a real Celery publish to a
    Redis broker that is down (a free port nobody listens on: connection refused), as when
    Redis is down at the moment a fact commits. Yields the broker's URL."""
    url = f"redis://127.0.0.1:{free_port()}/0"
    own = Celery(broker=url, set_as_current=False)  # never the current app: others keep theirs
    own.conf.broker_connection_timeout = 1
    own.conf.broker_connection_retry = False
    own.conf.task_publish_retry = False

    def kick(message_id: int, queue: str) -> None:
        own.send_task("sessions.tasks.deliver_outbox_message", (message_id,), queue=queue)

    previous = outbox.set_kick(kick)
    try:
        yield url
    finally:
        outbox.set_kick(previous)
