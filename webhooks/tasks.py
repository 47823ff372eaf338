"""The Celery task that delivers webhooks, one attempt per run, rescheduling itself with
exponential back-off (``webhooks.delivery``) until delivered or out of attempts."""

from __future__ import annotations

from celery import shared_task

from webhooks.delivery import attempt


@shared_task(name="webhooks.tasks.deliver")
def deliver(delivery_id: str, number: int = 1) -> str:
    """Attempt ``number`` of a delivery; schedules attempt ``number + 1`` when it failed and
    attempts remain. Returns the attempt's status (``delivered``, ``retry``, ``failed``,
    ``skipped``)."""
    outcome = attempt(delivery_id, number)
    if outcome.retry_in is not None:
        deliver.apply_async((delivery_id, number + 1), countdown=outcome.retry_in)
    return outcome.status
