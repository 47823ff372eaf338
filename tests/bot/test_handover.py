"""Which start of a session's bot is a planned handover (issue #33, ``bot.examiner.handed_over``):
only one after a ``bot_handover`` ``released`` that no bot has ``resumed`` since. A crash leaves
no ``released``, so its successor resumes through a bot fault."""

from __future__ import annotations

from bot.examiner import handed_over
from ioa.events import EventEnvelope, EventFactory, EventSource
from ioa.events import payloads as p

FACTORY = EventFactory(session_id="s-1", source=EventSource.BOT)


def log(*payloads: p.Payload) -> list[EventEnvelope]:
    return [FACTORY(payload).with_seq(seq) for seq, payload in enumerate(payloads, start=1)]


READY = p.BotReady(examId="exam", examVersion="1", nodeCount=3, estimatedDurationSec=600)
ACTIVE = p.CandidateActivity(activity="composing", state="started")


def test_a_released_session_is_handed_over_once() -> None:
    released = p.BotHandover(phase="released")
    assert handed_over(log(READY, released))
    assert not handed_over(log(READY, released, p.BotHandover(phase="resumed")))


def test_no_handover_without_a_released() -> None:
    assert not handed_over(log(READY))
    assert not handed_over([])


def test_a_crash_after_a_handover_is_a_fault() -> None:
    """Drained, resumed on another worker, then killed: the next bot resumes as a fault."""
    events = log(READY, p.BotHandover(phase="released"), p.BotHandover(phase="resumed"), ACTIVE)
    assert not handed_over(events)
