"""Stored turns and replies with chosen times, for the reply-latency tests (issue #33):
``sessions.reply_latency`` and the metrics' ``viva_reply_latency_seconds``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.utils import timezone

from ioa.events import EventEnvelope
from ioa.events import payloads as p
from sessions.event_store import append_events
from sessions.models import ExamSession
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    node_entered,
    transcript_final,
)

Step = tuple[float, p.Payload]
"""Seconds before now the event is stamped, and its payload."""


def candidate(turn: int, end_ms: int) -> p.TranscriptFinal:
    return transcript_final(turn=turn, startTimeMs=max(0, end_ms - 2000), endTimeMs=end_ms)


def examiner_said(turn: int, end_ms: int) -> p.TranscriptFinal:
    return transcript_final(
        turn=turn, speaker="examiner", startTimeMs=max(0, end_ms - 2000), endTimeMs=end_ms
    )


def reply(n: int, at_ms: int | None) -> p.ExaminerUtteranceStarted:
    return p.ExaminerUtteranceStarted(
        utteranceId=f"utt-{n}", nodeId="q1", purpose="follow_up", atMs=at_ms
    )


def store(session: ExamSession, steps: Sequence[Step], *, now: datetime | None = None) -> None:
    """``q1`` entered just before the first step, then ``steps`` in order, in one append."""
    base = now or timezone.now()
    first = max(ago for ago, _ in steps) + 1 if steps else 1

    def at(ago: float) -> datetime:
        return base - timedelta(seconds=ago)

    envelopes: list[EventEnvelope] = [
        event_factory(session, clock=lambda: at(first))(node_entered("q1"))
    ]
    for ago, payload in steps:
        envelopes.append(event_factory(session, clock=lambda ago=ago: at(ago))(payload))
    append_events(session=session, events=envelopes)


def voice_and_text_exams(now: datetime | None = None) -> None:
    """A voice exam with waits of 1.2 s and 2.5 s (a turn in two segments, measured from the
    second), an opening before any turn and a last turn not answered yet; a text exam with
    waits of 0.7 s and 4.0 s (the second reply has no ``atMs``: the events' timestamps, 4 s
    apart); a voice exam whose turns were 20 minutes ago (8 s wait, outside the window) and one
    that ended just before the window's start (10 s, its reply inside); and a
    studio preview (0.3 s, left out)."""
    voice: ExamSession = ExamSessionFactory(exam_mode="voice")
    store(
        voice,
        [
            (300, reply(1, 4_000)),  # the opening: no turn before it
            (290, candidate(1, 10_000)),
            (289, reply(2, 11_200)),
            (280, examiner_said(2, 15_000)),  # the examiner's words are no candidate turn
            (270, candidate(3, 20_000)),
            (266, candidate(4, 24_000)),
            (263, reply(3, 26_500)),
            (10, candidate(5, 290_000)),  # not answered yet
        ],
        now=now,
    )
    text: ExamSession = ExamSessionFactory(exam_mode="text")
    store(
        text,
        [
            (200, candidate(1, 5_000)),
            (199, reply(1, 5_700)),
            (100, candidate(2, 105_000)),
            (96, reply(2, None)),
        ],
        now=now,
    )
    old: ExamSession = ExamSessionFactory(exam_mode="voice")
    store(
        old,
        [
            (1210, candidate(1, 10_000)),
            (1200, reply(1, 18_000)),
            (905, candidate(2, 315_000)),  # its reply is in the window, the turn is not
            (895, reply(2, 325_000)),
        ],
        now=now,
    )
    preview: ExamSession = ExamSessionFactory(exam_mode="voice", is_preview=True)
    store(preview, [(60, candidate(1, 10_000)), (59, reply(1, 10_300))], now=now)
