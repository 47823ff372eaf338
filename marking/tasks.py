"""Celery tasks of the marking pipeline (queue ``marking``)."""

from __future__ import annotations

from celery import shared_task

from marking import services


@shared_task(name="marking.tasks.mark_session", acks_late=True)
def mark_session(session_id: str) -> int | None:
    """Mark a completed session with the deterministic marker; returns the mark's id (None when
    the version cannot be compiled for marking; the request records why).

    The same service runs as the ``marking.mark_session`` outbox message written with
    ``exam_completed`` (``marking.receivers``); this task is for marking a session again by hand
    (``mark_session.delay(id)``). Idempotent: a re-delivered task finds the existing marks,
    counts the delivery and changes nothing. A preview session (``sessions.previews``) is never
    marked: None, and no marking request is stored.
    """
    outcome = services.session_mark(session_id=session_id)
    return outcome.mark.pk if outcome.mark is not None else None


@shared_task(name="marking.tasks.run_marking_panel", acks_late=True)
def run_marking_panel(mark_id: int) -> str:
    """Run the configured LLM marking panel for one session's marks (idempotent)."""
    return str(services.panel_run(mark_id=mark_id).status)


@shared_task(name="marking.tasks.irregularity_reported", acks_late=True)
def irregularity_reported(session_id: str, event_id: str) -> str:
    """Take a proctor's irregularity report into the session's marks; returns what was done
    (``marking.services.IrregularityOutcome.status``).

    The same service runs as the ``marking.irregularity`` outbox message written with every
    stored ``proctor_action`` with ``action: flag_irregularity`` (``marking.receivers``) — from
    the bot (``bot.journal``) and from the proctor service's direct recording alike. Before
    marking it does nothing (the
    marker reads the report from the log); after marking the marks need review again, or, when
    locked, the report is recorded beside them unchanged. Idempotent per event.
    """
    return services.irregularity_record(session_id=session_id, event_id=event_id).status
