"""What the proctor dashboard adds to the controller's inputs (issue 9): the proctor authorises
the start of an exam waiting at ``ready``, irregularity reports carry a category, proctor
commands are carried out once however often they are delivered, and instructions carry the
proctor's reason and share one correlation id."""

from __future__ import annotations

import json

import pytest

from ioa.errors import InvalidInputError
from ioa.events import Audience, ExamState, project, validate_event
from ioa.runtime import BotReady, CandidateReady, ProctorAction, ProctorInstruction
from tests.ioa.runtime.harness import Harness

REASON = "The candidate's identity was checked on camera."


def waiting() -> Harness:
    """A session whose candidate is ready while the sitting wants the proctor to start it."""
    h = Harness()
    h.at(0)
    h.send(BotReady())
    decision = h.send(CandidateReady(await_authorisation=True))
    assert decision.result["status"] == "awaiting_authorisation"
    return h


def test_a_start_awaiting_authorisation_stops_at_ready() -> None:
    h = waiting()
    assert h.state.exam_state is ExamState.READY
    assert h.node is None and h.spoken == []
    # A second "ready" from the candidate's page changes nothing.
    assert h.send(CandidateReady(await_authorisation=True)).events == ()
    assert h.replayed_equal()


def test_the_proctor_authorises_the_start() -> None:
    h = waiting()
    h.at(30)
    decision = h.proctor(
        "authorise_start", reason=REASON, proctor_id="user:7", command_id="req-start"
    )
    types = [e.type.value for e in decision.events]
    assert types[:3] == ["proctor_action", "exam_state_changed", "node_entered"]
    action = decision.events[0]
    assert action.correlationId == "req-start"
    assert (action.payload.actor, action.payload.action, action.payload.reason) == (
        "user:7",
        "authorise_start",
        REASON,
    )
    state_change = h.of("exam_state_changed")[-1]
    assert (state_change.fromState, state_change.toState, state_change.reason) == (
        "ready",
        "in_progress",
        "proctor_authorised",
    )
    assert h.node == "warmup" and h.texts()[0].startswith("Hello, and welcome.")
    # The candidate sees that the exam started, never who started it or why.
    seen = project(validate_event(action.to_wire()).to_wire(), Audience.CANDIDATE)
    assert seen is not None and seen["payload"] == {
        "type": "proctor_action",
        "action": "authorise_start",
    }
    assert h.replayed_equal()


@pytest.mark.parametrize("ready", [False, True])
def test_authorising_a_session_not_waiting_records_nothing(ready: bool) -> None:
    h = Harness()
    h.at(0)
    h.send(BotReady())
    if ready:
        h.send(CandidateReady())  # no authorisation needed: already in progress
    decision = h.proctor("authorise_start", reason=REASON)
    assert decision.events == ()
    assert decision.result["status"] == "ignored"
    assert "proctor_action" not in h.types()


def test_an_irregularity_report_carries_its_category_for_staff_only(h: Harness) -> None:
    h.to_q1()
    decision = h.proctor(
        "flag_irregularity", reason="A second voice can be heard.", category="environment"
    )
    (event,) = decision.events
    assert event.payload.category == "environment"
    wire = validate_event(event.to_wire()).to_wire()
    assert wire["payload"]["category"] == "environment"
    assert project(wire, Audience.CANDIDATE) is None
    assert project(wire, Audience.MARKING)["payload"]["category"] == "environment"
    assert h.replayed_equal()


def test_a_category_on_another_action_is_refused(h: Harness) -> None:
    h.to_q1()
    before = len(h.controller.log)
    with pytest.raises(InvalidInputError):
        h.send(ProctorAction("pause", category="staff"))
    assert len(h.controller.log) == before


@pytest.mark.parametrize(
    ("action", "kwargs"),
    [
        ("extend_time", {"seconds": 60, "scope": "node"}),
        ("flag_irregularity", {"category": "technical"}),
        ("skip_node", {}),
    ],
)
def test_a_proctor_command_delivered_twice_is_carried_out_once(
    h: Harness, action: str, kwargs: dict[str, object]
) -> None:
    h.to_q1()
    h.at(20)
    first = h.proctor(action, reason=REASON, command_id="req-1", **kwargs)
    assert first.events and first.events[0].correlationId == "req-1"
    again = h.proctor(action, reason=REASON, command_id="req-1", **kwargs)
    assert again.events == ()
    assert again.result == {"status": "duplicate", "commandId": "req-1"}
    assert [a.action for a in h.of("proctor_action")] == [action]
    # The memory of carried-out commands is rebuilt from the log (a restarted bot keeps it).
    assert h.replayed_equal()
    assert "req-1" in h.state.proctor_commands


def test_an_instructions_events_share_its_id_and_the_issue_carries_the_reason(
    h: Harness,
) -> None:
    h.to_q1()
    h.send(
        ProctorInstruction(
            "queued",
            "Remind the candidate to speak up.",
            proctor_id="user:7",
            instruction_id="req-instr",
            reason="The microphone level is low.",
        )
    )
    h.say("It uses a priority queue.", at=20)
    h.observe(at=21, spoken="Please speak a little louder. How is the queue ordered?")
    events = [e for e in h.events if e.type.value == "proctor_instruction"]
    assert [e.payload.status for e in events] == ["issued", "delivered"]
    assert {e.correlationId for e in events} == {"req-instr"}
    assert events[0].payload.reason == "The microphone level is low."
    assert events[0].payload.proctorId == "user:7"
    seen = [project(validate_event(e.to_wire()).to_wire(), Audience.CANDIDATE) for e in events]
    assert seen == [None, None]
    assert "microphone level" not in json.dumps(
        [project(e.to_wire(), Audience.CANDIDATE) for e in h.events]
    )
    assert h.replayed_equal()
