"""How long candidates waited for the examiner over the last minutes (issue #33; the metrics'
``viva_reply_latency_seconds``, docs/operations.md "Metrics"). A selector: it only reads.

A **reply latency** is the time from the end of a candidate's turn to the start of the
examiner's reply: the last candidate ``transcript_final`` before an
``examiner_utterance_started`` of the same session (a turn recorded in several segments ends
with its last one), measured from the transcript's ``endTimeMs`` (the end of the speech; a typed
answer's arrival) to the reply's ``atMs`` (its first audio played, or its text sent), both ms
since the session opened. Where either is missing (``atMs`` is optional) the events' own
timestamps are used instead. An examiner utterance with no candidate turn before it (the
opening, a time warning) is no reply; a turn not answered yet is not counted; a reply that
started before the turn ended (overlapping speech) is not a wait and is left out.

Only events stamped within :data:`WINDOW` of ``now`` are read, both ends of a pair included, in
one query through the partial index ``session_event_turn_time`` (``type`` in the two types,
``timestamp``); studio previews are left out.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, TypedDict

from django.db.models import Q

from ioa.events import EventType
from sessions.models import SessionEvent

WINDOW: Final = timedelta(minutes=15)
"""The turns a scrape looks at: those whose events were stamped in the last 15 minutes."""
BUCKETS: Final = (0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 30.0)
"""Upper bounds (seconds) suited to conversation; the ``+Inf`` bucket is added."""
MODES: Final = ("voice", "text")
TURN_END: Final = EventType.TRANSCRIPT_FINAL.value
REPLY_START: Final = EventType.EXAMINER_UTTERANCE_STARTED.value


class _Row(TypedDict):
    session_id: uuid.UUID
    type: str
    timestamp: datetime
    payload__endTimeMs: int | None
    payload__atMs: int | None
    session__exam_mode: str


@dataclass(frozen=True)
class LatencyHistogram:
    """One mode's waits: cumulative counts per upper bound (seconds, ``math.inf`` last) and
    their sum."""

    buckets: list[tuple[float, int]]
    total_seconds: float

    @property
    def count(self) -> int:
        return self.buckets[-1][1]


def recent_reply_latencies(*, now: datetime) -> dict[str, list[float]]:
    """The reply latencies (seconds) of the turns in the window, by exam mode (both modes
    present, possibly empty), in session and log order."""
    rows: Iterable[_Row] = (
        SessionEvent.objects.filter(
            Q(type=REPLY_START) | Q(type=TURN_END, payload__speaker="candidate"),
            type__in=(TURN_END, REPLY_START),  # the index's predicate, as written
            timestamp__gte=now - WINDOW,
            session__is_preview=False,
        )
        .order_by("session_id", "seq")
        .values(
            "session_id",
            "type",
            "timestamp",
            "payload__endTimeMs",
            "payload__atMs",
            "session__exam_mode",
        )
    )
    latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
    turn: _Row | None = None
    for row in rows:
        if turn is not None and turn["session_id"] != row["session_id"]:
            turn = None  # a turn left unanswered at the end of the previous session's rows
        if row["type"] == TURN_END:
            turn = row
            continue
        if turn is None:
            continue
        waited = _seconds(turn, row)
        mode = turn["session__exam_mode"]
        if waited is not None and mode in latencies:
            latencies[mode].append(waited)
        turn = None
    return latencies


def _seconds(turn: _Row, reply: _Row) -> float | None:
    """The wait from ``turn``'s end to ``reply``'s start (module docstring); None if negative."""
    end, start = turn["payload__endTimeMs"], reply["payload__atMs"]
    if isinstance(end, int) and isinstance(start, int):
        waited = (start - end) / 1000
    else:
        waited = (reply["timestamp"] - turn["timestamp"]).total_seconds()
    return waited if waited >= 0 else None


def histogram(latencies: Iterable[float]) -> LatencyHistogram:
    """``latencies`` counted into :data:`BUCKETS` (each bucket counts every value <= its bound)."""
    values = sorted(latencies)
    buckets = [(bound, sum(1 for v in values if v <= bound)) for bound in BUCKETS]
    buckets.append((math.inf, len(values)))
    return LatencyHistogram(buckets=buckets, total_seconds=sum(values))


def reply_latency_histograms(*, now: datetime) -> dict[str, LatencyHistogram]:
    """:func:`histogram` of :func:`recent_reply_latencies` per mode (``voice``, ``text``)."""
    return {mode: histogram(waits) for mode, waits in recent_reply_latencies(now=now).items()}
