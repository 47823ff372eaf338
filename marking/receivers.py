"""Marking's subscriptions to the sessions app (``sessions.signals``), connected by
``MarkingConfig.ready()``; sessions never imports marking.

* a stored ``exam_completed`` enqueues ``marking.tasks.mark_session``;
* every newly stored irregularity report (``proctor_action`` with ``action:
  flag_irregularity``), from the bot's journal or the proctor service's direct recording alike,
  enqueues ``marking.tasks.irregularity_reported``;
* a personal-data erasure pseudonymises the session's marking records in the erasure's own
  transaction (``marking.erasure``);
* a fresh mark's ``marking.signals.panel_requested`` enqueues ``marking.tasks.run_marking_panel``.

Both signals arrive after the storing transaction committed, once per stored event (never for a
re-delivered duplicate), so each task is asked for once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from ioa.events import EventType
from marking import signals as marking_signals
from marking import tasks
from marking.erasure import on_personal_data_erased
from sessions import signals
from sessions.event_store import StoredEvent


def irregularity_report(event: StoredEvent) -> bool:
    """Whether a stored event is a proctor's irregularity report (marking must hear of it)."""
    if event.type != EventType.PROCTOR_ACTION:
        return False
    payload = event.wire.get("payload")
    return isinstance(payload, Mapping) and payload.get("action") == "flag_irregularity"


def on_session_completed(*, session_id: uuid.UUID, **_: object) -> None:
    """Ask for the session's marks."""
    tasks.mark_session.delay_on_commit(str(session_id))


def on_events_appended(
    *, session_id: uuid.UUID, events: Sequence[StoredEvent], **_: object
) -> None:
    """Ask marking to review each newly stored irregularity report."""
    for event in events:
        if irregularity_report(event):
            tasks.irregularity_reported.delay_on_commit(str(session_id), event.event_id)


def on_panel_requested(*, mark_id: int, **_: object) -> None:
    """Ask for the LLM marking panel once the mark has committed."""
    tasks.run_marking_panel.delay_on_commit(mark_id)


def connect() -> None:
    """Subscribe (idempotent: the dispatch uids keep one connection each)."""
    signals.session_completed.connect(on_session_completed, dispatch_uid="marking.mark_session")
    signals.events_appended.connect(on_events_appended, dispatch_uid="marking.irregularities")
    signals.personal_data_erased.connect(
        on_personal_data_erased, dispatch_uid="marking.personal_data_erased"
    )
    marking_signals.panel_requested.connect(on_panel_requested, dispatch_uid="marking.panel")
