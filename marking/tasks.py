"""Celery tasks of the marking pipeline (queue ``marking``)."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="marking.tasks.mark_session", acks_late=True)
def mark_session(session_id: str) -> int | None:
    """Mark a completed session with the deterministic marker; returns the mark's id (None when
    the version cannot be compiled for marking; the request records why).

    Enqueued by ``sessions.event_store`` with ``delay_on_commit`` when ``exam_completed`` is
    stored; runs inline in the embedded default (eager Celery). Idempotent: a re-delivered task
    finds the existing marks, counts the delivery and changes nothing.
    """
    from marking.services import mark_session as mark

    outcome = mark(session_id=session_id)
    return outcome.mark.pk if outcome.mark is not None else None


@shared_task(name="marking.tasks.run_marking_panel", acks_late=True)
def run_marking_panel(mark_id: int) -> str:
    """Run the configured LLM marking panel for one session's marks (idempotent)."""
    from marking.services import run_panel_for

    return str(run_panel_for(mark_id=mark_id).status)


@shared_task(name="marking.tasks.irregularity_reported", acks_late=True)
def irregularity_reported(session_id: str, event_id: str) -> str:
    """Take a proctor's irregularity report into the session's marks; returns what was done
    (``marking.services.IrregularityOutcome.status``).

    Enqueued by ``sessions.event_store`` with ``delay_on_commit`` for every stored
    ``proctor_action`` with ``action: flag_irregularity`` — from the bot (``bot.journal``) and
    from the proctor service's direct recording alike. Before marking it does nothing (the
    marker reads the report from the log); after marking the marks need review again, or, when
    locked, the report is recorded beside them unchanged. Idempotent per event.
    """
    from marking.services import record_irregularity

    return record_irregularity(session_id=session_id, event_id=event_id).status
