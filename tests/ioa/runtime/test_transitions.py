"""Transitions: array order, first match, natural completion (LLM proposes, runtime approves),
forced exits through the default edge, question pools drawn with the seeded RNG."""

from __future__ import annotations

from collections import Counter

from ioa.runtime import PromptLlm, texts
from tests.ioa.builders import example, node, put
from tests.ioa.runtime.harness import Harness, signal

GREEDY = signal("tgt-greedy-choice", excerpt="settles the nearest unvisited vertex")
HEAP = signal("tgt-complexity", excerpt="binary heap")


def _answer(h: Harness) -> None:
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=20)
    h.say("With a binary heap it is O((V+E) log V).", at=30)


def test_natural_completion_takes_the_first_matching_edge_in_array_order(h: Harness) -> None:
    h.to_q1()
    _answer(h)
    h.observe(at=31, done=True, signals=[GREEDY, HEAP], spoken="Thank you.")
    decision = h.of("transition_decision")[-1]
    assert decision.edgeId == "e-q1-pool"
    assert decision.reason == "natural_completion"
    assert decision.poolId == "pool-scenario"
    assert decision.toNodeId in ("scn-delivery-routes", "scn-network-latency")
    assert h.of("node_exited")[-1].reason == "completed"


def test_evidence_satisfied_edge_is_skipped_when_its_targets_are_missing(h: Harness) -> None:
    h.to_q1()
    _answer(h)
    h.observe(at=31, done=True, signals=[GREEDY])
    assert h.of("transition_decision")[-1].edgeId == "e-q1-pool-default"


def test_llm_claiming_sufficiency_without_required_evidence_is_not_approved(h: Harness) -> None:
    h.to_q1()
    _answer(h)
    decision = h.observe(at=31, done=True, signals=[HEAP], spoken="Great, let's move on.")
    assert h.node == "q-dijkstra"
    assert h.of("transition_decision")[-1].fromNodeId == "warmup"
    refused = [g for g in h.of("guardrail_triggered") if "not approved" in g.description]
    assert refused and "tgt-greedy-choice" in refused[0].description
    assert refused[0].actionTaken == "event_only"
    assert "Great, let's move on." not in h.texts()
    # The runtime makes the move itself (§16): its probe, not another LLM run.
    assert not any(isinstance(e, PromptLlm) for e in decision.effects)
    assert h.spoken[-1].text in texts.ENGLISH.probes()
    assert decision.result["approved"] is False


def test_min_turns_must_be_reached_before_natural_completion(h: Harness) -> None:
    h.to_q1()
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=20)
    h.observe(at=21, done=True, signals=[GREEDY])
    assert h.node == "q-dijkstra"
    assert "1 more candidate turn" in h.of("guardrail_triggered")[-1].description
    h.say("That is all.", at=25)
    h.observe(at=26, done=True)
    assert h.node != "q-dijkstra"


def test_evidence_alone_never_moves_the_node_without_the_llm_proposal(h: Harness) -> None:
    h.to_q1()
    _answer(h)
    h.observe(at=31, done=False, signals=[GREEDY, HEAP])
    assert h.node == "q-dijkstra"


def test_turn_count_edge_is_checked_on_every_turn() -> None:
    document = example()  # answers without evidence spend follow-ups (§16): room for eight
    put(document, "nodes[q-dijkstra].followUpPolicy.maxFollowUps", 10)
    h = Harness(document).to_q1()
    for index in range(8):
        h.say(f"Part {index} of my answer about vertices.", at=20 + index * 5)
        h.observe(at=21 + index * 5, done=False)
    decision = h.of("transition_decision")[-1]
    assert decision.edgeId == "e-q1-pool-turns"
    assert decision.reason == "condition_met"
    assert decision.conditionEvaluated == "turn_count_reached(8)"


def test_forced_exit_uses_the_always_edge_even_when_it_is_not_first() -> None:
    document = example()
    put(document, "nodes[q-dijkstra].followUpPolicy.maxFollowUps", 0)
    h = Harness(document).to_q1()
    h.say("It uses a priority queue.", at=20)
    h.observe(at=21, follow_up=True, spoken="What is the running time?")
    assert h.of("transition_decision")[-1].edgeId == "e-q1-pool-default"
    assert h.of("node_exited")[-1].reason == "follow_ups_exhausted"


def test_forced_exit_without_an_always_edge_takes_the_first_edge() -> None:
    document = example()
    transitions = node(document, "q-dijkstra")["transitions"]
    node(document, "q-dijkstra")["transitions"] = transitions[:2]
    put(document, "nodes[q-dijkstra].followUpPolicy.maxFollowUps", 0)
    h = Harness(document).to_q1()
    h.say("It uses a priority queue.", at=20)
    h.observe(at=21, follow_up=True, spoken="And then?")
    assert h.of("transition_decision")[-1].edgeId == "e-q1-pool"
    assert h.of("transition_decision")[-1].reason == "follow_ups_exhausted"


def test_pool_draw_is_seeded_by_the_session_id() -> None:
    def drawn(session_id: str) -> str:
        h = Harness(session_id=session_id).to_q1()
        _answer(h)
        h.observe(at=31, done=True, signals=[GREEDY, HEAP])
        return str(h.node)

    assert drawn("candidate-a") == drawn("candidate-a")
    counts = Counter(drawn(f"candidate-{n}") for n in range(24))
    assert set(counts) == {"scn-delivery-routes", "scn-network-latency"}


def test_time_elapsed_edge_fires_from_the_clock() -> None:
    document = example()
    node(document, "q-dijkstra")["transitions"].insert(
        0,
        {
            "id": "e-q1-slow",
            "targetNodeId": "wrapup",
            "condition": {"type": "time_elapsed", "seconds": 100},
        },
    )
    node(document, "q-dijkstra")["recoveryHandlers"] = []  # no silence prompts meanwhile
    h = Harness(document).to_q1()
    assert h.controller.next_deadline_ms() is not None
    h.tick(110)
    decision = h.of("transition_decision")[-1]
    assert decision.edgeId == "e-q1-slow" and decision.reason == "condition_met"
    assert h.node == "wrapup"


def test_natural_completion_speaks_the_llm_bridge_then_the_opening(h: Harness) -> None:
    h.to_q1()
    texts = h.texts()
    assert texts[-2] == "Thank you, let us begin."
    assert texts[-1].startswith("Could you walk me through")
    assert [s.purpose for s in h.spoken[-2:]] == ["bridge", "question"]


def test_transition_events_share_a_correlation_id(h: Harness) -> None:
    h.to_q1()
    trio = [e for e in h.events if e.type.value in ("node_exited", "transition_decision")]
    entered = [e for e in h.events if e.type.value == "node_entered"][-1]
    assert {e.correlationId for e in trio} == {entered.correlationId}
