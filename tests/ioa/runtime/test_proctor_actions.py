"""Proctor actions as ``proctor_action`` events, and the structured fields the controller fills
instead of quoting them in descriptions (intercepted texts, evidence, recovery attempts,
command details), none of which reaches the candidate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ioa.errors import InvalidInputError
from ioa.events import Audience, EventEnvelope, project, validate_event
from ioa.events import payloads as p
from ioa.runtime import ProctorAction, rebuild_state
from tests.ioa.builders import example, put
from tests.ioa.runtime.harness import Harness, signal

C = Audience.CANDIDATE
REASON = "Fire alarm in building B; candidate left the room for 4 minutes."
PERSONA_BREAK = "As an AI language model I cannot grade this. What is the running time?"
NEVER_FOR_CANDIDATES = {
    "originalText",
    "replacementText",
    "excerpt",
    "rubricLevel",
    "details",
    "actor",
    "reason",
}


def _quiet(document: dict[str, Any]) -> dict[str, Any]:
    """No silence handlers, so only budgets fire."""
    for item in document["nodes"]:
        item["recoveryHandlers"] = [
            h for h in item.get("recoveryHandlers", []) if h["scenario"] != "silence"
        ]
    return document


def _candidate_view(events: list[EventEnvelope]) -> list[dict[str, Any]]:
    """What the candidate's exam room receives of ``events`` (through the stored wire form)."""
    seen = []
    for event in events:
        wire = validate_event(event.to_wire()).to_wire()
        projected = project(wire, C)
        if projected is not None:
            seen.append(projected)
    return seen


def _actions(h: Harness) -> list[Any]:
    return h.of("proctor_action")


# --- intercepted texts ----------------------------------------------------------------------


def test_a_persona_break_interception_carries_original_and_replacement_text(h: Harness) -> None:
    h.to_q1()
    h.say("It picks the closest vertex.", at=20)
    h.observe(at=21, spoken=PERSONA_BREAK)
    (guard,) = [g for g in h.of("guardrail_triggered") if g.guardrailType == "persona_break"]
    assert guard.actionTaken == "output_replaced"
    assert guard.originalText == PERSONA_BREAK
    assert guard.replacementText == "What is the running time?"
    assert "As an AI" not in guard.description
    view = json.dumps(_candidate_view(h.events))
    assert "As an AI language model" not in view
    assert "originalText" not in view and "replacementText" not in view


def test_a_refused_completion_keeps_the_unspoken_text_in_its_fields(h: Harness) -> None:
    h.to_q1()
    h.say("It uses a queue.", at=20)
    h.observe(at=21, done=True, spoken="Great, let's move on to the next topic.")
    (guard,) = [g for g in h.of("guardrail_triggered") if g.guardrailType == "blocked_action"]
    assert guard.originalText == "Great, let's move on to the next topic."
    assert guard.replacementText == ""
    assert "move on" not in guard.description


# --- evidence, recoveries, command details --------------------------------------------------


def test_evidence_carries_excerpt_rubric_level_and_scaffolding(h: Harness) -> None:
    h.to_q1()
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=20)
    h.observe(
        at=21,
        signals=[
            signal(
                "tgt-greedy-choice",
                excerpt="settles the nearest unvisited vertex",
                rubricLevel="excellent",
                scaffoldingIntensity=1,
                scaffoldingEffective=False,
            )
        ],
    )
    (evidence,) = h.of("evidence_signal")
    assert evidence.excerpt == "settles the nearest unvisited vertex"
    assert evidence.rubricLevel == "excellent"
    assert (evidence.scaffoldingIntensity, evidence.scaffoldingEffective) == (1, False)
    assert "nearest" not in evidence.description and "excellent" not in evidence.description
    assert h.replayed_equal()


def test_recovery_attempts_are_numbered_with_their_action() -> None:
    h = Harness().to_q1()
    h.tick(6 + 15)
    h.tick(6 + 30)
    first, second = h.of("recovery_started")
    assert first.recoveryId == second.recoveryId
    assert (first.attempt, second.attempt) == (1, 2)
    assert first.action == second.action and first.action is not None
    assert first.maxAttempts is not None and first.maxAttempts >= 2
    assert "attempt" not in first.triggerDescription
    view = _candidate_view(h.events)
    started = [e["payload"] for e in view if e["type"] == "recovery_started"]
    assert started and all(set(s) == {"type", "recoveryId", "nodeId"} for s in started)


def test_command_details_record_the_confidence_level_and_the_revise_target(h: Harness) -> None:
    h.to_q1()
    h.command("signal_confidence", "cmd-conf", nodeId="q-dijkstra", confidenceLevel="uncertain")
    ack = h.of("candidate_command_received")[-1]
    assert ack.details == {"nodeId": "q-dijkstra", "confidenceLevel": "uncertain"}
    h.command("revise_earlier_answer", "cmd-rev")
    ack = h.of("candidate_command_received")[-1]
    assert ack.accepted and ack.details == {"targetNodeId": "warmup"}
    h.command("revise_earlier_answer", "cmd-rev2", targetNodeId="wrapup", reason="typo")
    ack = h.of("candidate_command_received")[-1]
    assert not ack.accepted and ack.details == {"targetNodeId": "wrapup", "reason": "typo"}
    h.command("repeat_question", "cmd-rep")
    assert h.of("candidate_command_received")[-1].details is None
    view = json.dumps(_candidate_view(h.events))
    assert "details" not in view and "uncertain" not in view


# --- proctor actions ------------------------------------------------------------------------


def test_proctor_extends_node_time_with_a_proctor_action() -> None:
    h = Harness(_quiet(example())).to_q1()
    h.at(100)
    decision = h.proctor("extend_time", seconds=120, scope="node", reason=REASON, proctor_id="p-7")
    remaining = (360 - 94 + 120) * 1000
    assert decision.result["remainingMs"] == remaining
    action, warning = decision.events
    assert isinstance(action.payload, p.ProctorActionTaken)
    assert isinstance(warning.payload, p.TimeWarning)
    assert action.correlationId == warning.correlationId is not None
    payload = action.payload
    assert (payload.actor, payload.action, payload.reason) == ("p-7", "extend_time", REASON)
    assert (payload.seconds, payload.scope, payload.nodeId) == (120, "node", "q-dijkstra")
    assert (payload.remainingMs, payload.remainingSec) == (remaining, 386)
    assert warning.payload.remainingMs == remaining
    # The candidate sees the new remaining time, never the reason or who acted.
    seen = {e["type"]: e["payload"] for e in _candidate_view(list(decision.events))}
    assert seen["proctor_action"] == {
        "type": "proctor_action",
        "action": "extend_time",
        "seconds": 120,
        "scope": "node",
        "remainingSec": 386,
        "remainingMs": remaining,
        "nodeId": "q-dijkstra",
    }
    assert seen["time_warning"]["remainingMs"] == remaining
    assert REASON not in json.dumps(_candidate_view(h.events))
    # The budget really moved: the node now ends at 6 + 360 + 120 s.
    h.tick(6 + 479)
    assert h.node == "q-dijkstra"
    h.tick(6 + 480)
    assert h.node != "q-dijkstra"
    assert h.replayed_equal()


def test_the_proctor_action_alone_re_anchors_the_clock_on_replay() -> None:
    h = Harness(_quiet(example())).to_q1()
    h.at(100)
    h.proctor("extend_time", seconds=120, scope="node", reason=REASON)
    without_warning = [e for e in h.events if e.type != "time_warning"]
    rebuilt = rebuild_state(h.controller.plan, h.session_id, without_warning)
    assert rebuilt.node is not None and h.state.node is not None
    assert rebuilt.node.clock.extension_ms == h.state.node.clock.extension_ms == 120_000


def test_proctor_extends_exam_time() -> None:
    document = _quiet(example())
    put(document, "metadata.totalTimeBudgetSec", 1200)
    h = Harness(document).to_q1()
    h.at(500)
    h.proctor("extend_time", seconds=300, reason=REASON)
    action = _actions(h)[-1]
    assert (action.scope, action.seconds, action.reason) == ("exam", 300, REASON)
    assert action.remainingMs == (1200 - 500 + 300) * 1000
    assert h.of("time_warning")[-1].remainingMs == action.remainingMs
    assert h.replayed_equal()


def test_pause_and_resume_are_proctor_actions() -> None:
    h = Harness(_quiet(example())).to_q1()
    h.at(30)
    decision = h.proctor("pause", reason="Candidate's microphone is muted.")
    assert [e.type for e in decision.events][:2] == ["proctor_action", "exam_state_changed"]
    pause = _actions(h)[-1]
    assert (pause.action, pause.reason, pause.nodeId) == (
        "pause",
        "Candidate's microphone is muted.",
        "q-dijkstra",
    )
    assert pause.seconds is None and pause.scope is None
    h.command("resume", "cmd-proctor-resume", source="proctor")
    resume = _actions(h)[-1]
    assert resume.action == "resume"
    event = next(e for e in h.events if e.type == "proctor_action" and e.payload is resume)
    assert event.correlationId == "cmd-proctor-resume"
    assert h.of("exam_state_changed")[-1].reason == "proctor_resume"
    view = _candidate_view(h.events)
    assert all("reason" not in e["payload"] for e in view if e["type"] != "exam_completed")
    assert h.replayed_equal()


def test_due_timers_still_fire_before_the_action(h: Harness) -> None:
    h.to_q1()
    h.at(6 + 25)  # the silence prompt is due (20 s after the examiner finished)
    decision = h.proctor("pause")
    types = [e.type.value for e in decision.events]
    assert types.index("recovery_started") < types.index("proctor_action")
    assert types[types.index("proctor_action") + 1] == "exam_state_changed"


def test_actions_that_do_not_apply_record_nothing(h: Harness) -> None:
    h.to_q1()
    assert h.proctor("resume").events == ()
    h.proctor("pause")
    assert h.proctor("pause").events == ()
    assert h.proctor("skip_node").events == ()
    assert [a.action for a in _actions(h)] == ["pause"]


def test_terminate_records_the_reason_in_the_action_only(h: Harness) -> None:
    h.to_q1()
    decision = h.proctor("terminate", reason=REASON)
    types = [e.type.value for e in decision.events]
    assert types[0] == "proctor_action" and types[-1] == "exam_completed"
    assert _actions(h)[-1].reason == REASON
    assert h.of("transition_decision")[-1].conditionEvaluated == "terminated by the proctor"
    assert all(REASON not in json.dumps(e.payload.model_dump()) for e in decision.events[1:])
    assert h.of("exam_completed")[0].reason == "proctor_ended"
    assert h.proctor("flag_irregularity", reason="late").events == ()


def test_a_proctor_end_request_is_a_terminate_action(h: Harness) -> None:
    h.to_q1()
    h.command(
        "end_exam_requested", "cmd-end", source="proctor", requestedBy="proctor", reason=REASON
    )
    action = _actions(h)[-1]
    assert (action.action, action.reason) == ("terminate", REASON)
    event = next(e for e in h.events if e.type == "proctor_action")
    assert event.correlationId == "cmd-end"
    assert h.of("exam_completed")[0].reason == "proctor_ended"


def test_proctor_skips_the_node() -> None:
    h = Harness(_quiet(example())).to_q1()
    h.at(30)
    decision = h.proctor("skip_node", reason="Question misprinted for this candidate.")
    assert decision.events[0].type == "proctor_action"
    assert _actions(h)[-1].nodeId == "q-dijkstra"
    assert h.node != "q-dijkstra"
    assert h.of("node_exited")[-1].reason == "forced_transition"
    transition = h.of("transition_decision")[-1]
    assert transition.reason == "guardrail_override"
    assert transition.conditionEvaluated == "skipped by the proctor"
    assert h.replayed_equal()


def test_an_irregularity_is_recorded_for_the_proctor_and_marking_only(h: Harness) -> None:
    h.to_q1()
    before = len(h.events)
    decision = h.proctor("flag_irregularity", reason="A second voice can be heard.")
    assert [e.type for e in decision.events] == ["proctor_action"]
    assert decision.result["status"] == "recorded"
    assert len(h.events) == before + 1 and h.node == "q-dijkstra"
    wire = decision.events[0].to_wire()
    assert project(wire, C) is None
    assert project(wire, Audience.PROCTOR) is not None
    assert project(wire, Audience.MARKING) is not None
    assert h.replayed_equal()


@pytest.mark.parametrize(
    "action",
    [
        ProctorAction("extend_time", seconds=0),
        ProctorAction("extend_time", seconds=float("nan")),
        ProctorAction("extend_time"),
        ProctorAction("flag_irregularity", reason="bad\x00text"),
    ],
)
def test_malformed_proctor_actions_are_refused(h: Harness, action: ProctorAction) -> None:
    h.to_q1()
    before = len(h.controller.log)
    with pytest.raises(InvalidInputError):
        h.send(action)
    assert len(h.controller.log) == before


def test_no_event_of_a_full_session_shows_the_candidate_a_protected_field() -> None:
    document = _quiet(example())
    put(document, "metadata.totalTimeBudgetSec", 1200)
    h = Harness(document).to_q1()
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=20)
    h.observe(
        at=21,
        spoken=PERSONA_BREAK,
        signals=[signal("tgt-greedy-choice", excerpt="settles the nearest", rubricLevel="Q9-top")],
    )
    h.command("signal_confidence", "cmd-c", nodeId="q-dijkstra", confidenceLevel="guessing")
    h.at(40)
    h.proctor("extend_time", seconds=60, scope="node", reason=REASON)
    h.proctor("flag_irregularity", reason=REASON)
    h.proctor("pause", reason=REASON)
    h.proctor("resume", reason=REASON)
    h.proctor("terminate", reason=REASON)
    emitted = {e.type.value for e in h.events}
    assert {"guardrail_triggered", "evidence_signal", "proctor_action"} <= emitted
    for seen in _candidate_view(h.events):
        assert not set(seen["payload"]) & (NEVER_FOR_CANDIDATES - {"reason"}), seen
        if seen["type"] != "exam_completed":  # its reason is how the exam ended
            assert "reason" not in seen["payload"], seen
    view = json.dumps(_candidate_view(h.events))
    # (the excerpt is the candidate's own words: their transcript shows them anyway)
    for secret in (REASON, "As an AI language model", "Q9-top", "guessing"):
        assert secret not in view
