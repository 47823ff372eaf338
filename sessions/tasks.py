"""Celery tasks of the sessions app: the outbox relay (``sessions.outbox``), on the queue each
topic was registered with."""

from __future__ import annotations

from celery import shared_task

from sessions import outbox


@shared_task(name="sessions.tasks.deliver_outbox_message", acks_late=True, ignore_result=True)
def deliver_outbox_message(message_id: int) -> str:
    """Carry one outbox message out (``sessions.outbox.deliver``); asked for once the fact's
    transaction committed. Idempotent: a delivered or dead message is skipped."""
    return outbox.deliver(message_id)


@shared_task(name="sessions.tasks.relay_outbox", acks_late=True, ignore_result=True)
def relay_outbox() -> dict[str, int]:
    """One pass of ``sessions.outbox.relay_due`` (sweeps, then every due message)."""
    done = outbox.relay_due()
    return {"swept": done.swept, **done.outcomes}


def hand_over(message_id: int, queue: str) -> None:
    """Ask a worker of ``queue`` to deliver ``message_id`` now (inline where Celery is eager)."""
    deliver_outbox_message.apply_async((message_id,), queue=queue)
