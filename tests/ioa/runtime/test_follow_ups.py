"""Follow-up counting, follow_up_used, and the follow-up budget running out."""

from __future__ import annotations

from tests.ioa.builders import example, put
from tests.ioa.runtime.harness import Harness, signal


def test_each_approved_follow_up_is_counted_with_its_index(h: Harness) -> None:
    h.to_q1()
    h.say("It picks the closest vertex.", at=20)
    h.observe(at=21, follow_up=True, followUpType="probe", spoken="Which data structure helps?")
    h.say("A priority queue.", at=30)
    h.observe(at=31, follow_up=True, followUpType="scaffold", spoken="What does it store?")
    used = h.of("follow_up_used")
    assert [u.followUpIndex for u in used] == [1, 2]
    assert [u.maxFollowUps for u in used] == [3, 3]
    assert used[0].reason == "evidence_gap"  # the required target is still missing
    assert used[0].triggerTurnId == "turn-002" and used[1].triggerTurnId == "turn-003"
    assert h.spoken[-1].purpose == "follow_up"


def test_follow_up_budget_running_out_forces_the_exit(h: Harness) -> None:
    h.to_q1()
    for index in range(3):
        h.say(f"Answer number {index} about the vertices.", at=20 + 10 * index)
        h.observe(at=21 + 10 * index, follow_up=True, spoken=f"Follow-up {index}?")
    assert len(h.of("follow_up_used")) == 3
    h.say("Another answer about vertices.", at=60)
    h.observe(at=61, follow_up=True, spoken="One more question?")
    assert len(h.of("follow_up_used")) == 3
    guard = [g for g in h.of("guardrail_triggered") if g.guardrailType == "max_follow_ups"]
    assert guard and guard[0].actionTaken == "forced_transition" and guard[0].severity == "block"
    assert h.of("node_exited")[-1].reason == "follow_ups_exhausted"
    assert h.of("node_exited")[-1].followUpsUsed == 3
    assert h.of("transition_decision")[-1].reason == "follow_ups_exhausted"
    assert "One more question?" not in h.texts()
    assert h.node in ("scn-delivery-routes", "scn-network-latency")


def test_follow_up_window_limits_the_follow_up_phase() -> None:
    document = example()
    put(document, "nodes[q-dijkstra].followUpPolicy.maxFollowUpDurationSec", 30)
    h = Harness(document).to_q1()
    h.say("It picks the closest vertex.", at=20)
    h.observe(at=21, follow_up=True, spoken="Why?")
    h.say("Because it is greedy.", at=40)
    h.observe(at=60, follow_up=True, spoken="And the running time?")
    assert len(h.of("follow_up_used")) == 1
    assert h.of("node_exited")[-1].reason == "follow_ups_exhausted"


def test_rapport_moves_do_not_count_as_follow_ups(h: Harness) -> None:
    """After an answer that added evidence (after one that added nothing, any reply is a
    follow-up: test_refusals)."""
    h.to_q1()
    h.say("It settles the closest unvisited vertex, then relaxes its edges.", at=20)
    h.observe(
        at=21,
        rapportMove="acknowledgement",
        signals=[signal("tgt-greedy-choice", excerpt="settles the closest unvisited vertex")],
        spoken="Thank you. Please go on.",
    )
    assert h.of("follow_up_used") == []


def test_a_candidate_asking_for_time_spends_no_follow_up(h: Harness) -> None:
    h.to_q1()
    h.say("Hmm, let me think about it.", at=20)
    h.observe(at=21, rapportMove="acknowledgement", spoken="Take your time.")
    h.say("Um...", at=30)
    h.observe(at=31, spoken="Take your time.")
    assert h.of("follow_up_used") == []
    assert h.texts()[-1] == "Take your time."


def test_misconceptions_make_the_follow_up_a_misconception_probe(h: Harness) -> None:
    h.to_q1()
    h.say("Dijkstra works with negative edges too.", at=20)
    h.observe(
        at=21,
        follow_up=True,
        misconceptions=[
            {
                "concept": "negative weights",
                "misconception": "Dijkstra handles negative edges",
                "correction": "a negative edge can invalidate a settled distance",
            }
        ],
        signals=[signal("tgt-negative-weights", "misconception", "negative edges too")],
        spoken="What happens to a vertex that was already settled?",
    )
    assert h.of("follow_up_used")[-1].reason == "misconception_probe"
    misconception = h.of("misconception_detected")[0]
    assert misconception.turnIds == ["turn-002"]
    assert misconception.signalId == h.of("evidence_signal")[0].signalId
    assert misconception.targetIds == ["tgt-negative-weights"]
