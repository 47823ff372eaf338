"""Host settings the controller's deadlines use that are not package policy (our 03 chapter
§6, §11): the bot passes them from Django settings (``VIVA_*``), tests their own."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Timing:
    """Host settings the controller's deadlines use (not package policy)."""

    connection_grace_ms: int = 15_000
    """A lost connection pauses the exam after this long without the candidate."""
    absence_limit_ms: int = 600_000
    """Away this long in all, the exam ends ``aborted`` (``candidate_absent``)."""
    outage_limit_ms: int = 300_000
    """Paused this long for one provider outage, the exam ends at the technical-failure end
    (:mod:`ioa.runtime.outage`); a shorter outage never ends an exam."""
    recogniser_latency_ms: int = 8_000
    """After the candidate stops speaking, the silence clock waits this long for the final
    transcript before it counts."""
    draft_grace_ms: int = 10_000
    """Text mode: after the candidate stops typing, a part that ran out of time waits this
    long for the answer to be sent before it is left."""
