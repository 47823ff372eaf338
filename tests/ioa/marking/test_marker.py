"""The deterministic marker on realistic logs (the runtime controller driven by a scripted
candidate, tests/marking/exams.py): determinism, scores, pools, overrides' rescoring."""

from __future__ import annotations

import json

import pytest

from ioa.canonical import canonical_json
from ioa.marking import MINIMUM_STREAM, Level, compute_scores, mark
from tests.ioa.builders import example
from tests.ioa.marking.builders import cs201, dijkstra
from tests.marking.exams import PROFILES, drive

CONFIG = cs201()
SID = "0192f3a0-0000-7000-8000-0000000000b1"


def log(profile: str, session_id: str = SID) -> list[dict]:
    return [e.to_wire() for e in drive(example(), session_id, PROFILES[profile]())]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_marking_the_same_log_twice_gives_identical_bytes(profile: str) -> None:
    events = log(profile)
    first = canonical_json(mark(CONFIG, events).to_dict())
    second = canonical_json(mark(CONFIG, json.loads(json.dumps(events))).to_dict())
    assert first == second


def with_irregularities(events: list[dict]) -> list[dict]:
    """``events`` with two proctor reports re-sequenced in: a technical one at the first
    assessed question and a candidate one after the exam ended (as a late report is stored)."""
    entered = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "node_entered" and e["payload"]["nodeId"] == "q-dijkstra"
    )

    def report(category: str, reason: str, node: str | None) -> dict:
        payload = {"type": "proctor_action", "actor": "user:3", "action": "flag_irregularity"}
        payload |= {"category": category, "reason": reason}
        if node:
            payload["nodeId"] = node
        return {
            **events[entered],
            "eventId": f"irr-{category}",
            "type": "proctor_action",
            "source": "system",
            "payload": payload,
        }

    out = [
        *events[: entered + 3],
        report("technical", "Audio dropped.", "q-dijkstra"),
        *events[entered + 3 :],
        report("candidate", "Phone on the desk.", None),
    ]
    return [{**e, "seq": seq} for seq, e in enumerate(out, start=1)]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_irregularities_send_to_review_deterministically_and_never_change_a_level(
    profile: str,
) -> None:
    events = log(profile)
    reported = with_irregularities(events)
    first = mark(CONFIG, reported)
    again = mark(CONFIG, json.loads(json.dumps(reported)))
    assert canonical_json(first.to_dict()) == canonical_json(again.to_dict())
    clean = mark(CONFIG, events)
    assert first.levels() == clean.levels() and first.scores == clean.scores
    assert first.needs_review
    codes = [(f.code, f.severity) for f in first.flags if f.code == "irregularity"]
    assert codes == [("irregularity", "review")] * 2
    technical, candidate = first.to_dict()["irregularities"]
    assert technical["route"] == "technical" and technical["affectedTurnIds"]
    assert candidate["afterCompletion"] and candidate["route"] == "academic_integrity"


def test_the_minimum_stream_alone_decides_the_levels() -> None:
    events = log("mixed")
    full = mark(CONFIG, events)
    minimum = mark(CONFIG, [e for e in events if e["type"] in MINIMUM_STREAM])
    assert minimum.levels() == full.levels()
    assert minimum.scores == full.scores


def test_profiles_are_ordered_and_weighted() -> None:
    strong, mixed, weak = (mark(CONFIG, log(p)) for p in ("strong", "mixed", "weak"))
    assert strong.scores.exam == 1.0
    assert strong.scores.exam > mixed.scores.exam > weak.scores.exam > 0
    levels = mixed.levels()
    assert levels["tgt-greedy-choice"] is Level.SATISFACTORY  # misconception, self-corrected
    assert levels["tgt-complexity"] is Level.SATISFACTORY  # low STT and scaffolding
    assert levels["tgt-negative-weights"] is Level.ABSENT
    # q-dijkstra: 0.5 * 2/3 + 0.3 * 2/3 + 0.2 * 0
    assert mixed.scores.nodes["q-dijkstra"] == pytest.approx(0.8 * 2 / 3, abs=1e-6)
    assert mixed.scores.outcomes["LO2"] == pytest.approx(mixed.scores.nodes["q-dijkstra"], abs=1e-6)


def test_the_pool_member_drawn_is_the_one_marked() -> None:
    for index in range(6):
        session_id = f"0192f3a0-0000-7000-8000-0000000001{index:02d}"
        result = mark(CONFIG, log("strong", session_id))
        scenario = [n for n in result.visited_nodes if n.startswith("scn-")]
        assert len(scenario) == 1
        assert {t.target.node_id for t in result.targets} == {"q-dijkstra", scenario[0]}
        assert result.scores.slots["pool-scenario"] == 1.0


def test_overrides_rescore_with_the_same_function() -> None:
    result = mark(CONFIG, log("mixed"))
    levels = result.levels()
    assert compute_scores(CONFIG, levels, result.visited_nodes) == result.scores
    levels["tgt-negative-weights"] = Level.EXCELLENT
    raised = compute_scores(CONFIG, levels, result.visited_nodes)
    assert raised.exam == pytest.approx(result.scores.exam + 0.5 * 0.2, abs=1e-6)


def test_metrics_for_fairness() -> None:
    result = mark(CONFIG, log("strong"))
    metrics = result.metrics
    assert metrics["followUpsPerNode"]["q-dijkstra"] == 2
    assert metrics["completionReason"] == "all_nodes_visited"
    assert metrics["totalTimeSec"] > 0 and 0 <= metrics["probingConsistency"] <= 1


def test_an_empty_or_odd_log_does_not_break_the_marker() -> None:
    result = mark(CONFIG, [{"type": "evidence_signal", "seq": 1, "payload": "not an object"}])
    assert result.scores.exam == 0.0
    assert {f.code for f in result.flags} >= {"incomplete_log", "unreadable_events", "not_reached"}


def test_the_transcript_shows_what_the_candidate_heard_of_an_interrupted_utterance() -> None:
    """Issue 15: an utterance cut off by the candidate's speech appears in the marker's
    transcript as far as it was heard, marked interrupted, with the full text kept beside."""
    log = dijkstra()
    full = "How does it choose the next vertex? And what is its running time?"
    log.say("Walk me through the algorithm, please.")
    log.say(full, "follow_up", heard="How does it choose")
    log.turn("it picks the closest one")
    rows = [r for r in mark(cs201(), log.complete().events).transcript if r["text"] != ""]
    cut = next(r for r in rows if r.get("purpose") == "follow_up")
    assert cut["text"] == "How does it choose"
    assert cut["interrupted"] is True and cut["fullText"] == full
    whole = next(r for r in rows if r["text"] == "Walk me through the algorithm, please.")
    assert "interrupted" not in whole and "fullText" not in whole


def test_a_corrected_turn_is_shown_as_heard_and_superseded_by_the_candidates_words() -> None:
    """Issue #30: the marker sees the recogniser's words and the candidate's correction, each
    labelled; only the correction counts as a candidate turn."""
    log = dijkstra()
    log.say("Walk me through the algorithm, please.")
    misheard = log.turn("it settles then ear rest vortex", 0.41)
    said = "It settles the nearest unvisited vertex."
    correction = log.turn(said, 1.0)
    log.add(
        "transcript_corrected",
        nodeId="q-dijkstra",
        turnId=misheard,
        correctionTurnId=correction,
        how="typed",
        originalText="it settles then ear rest vortex",
    )
    result = mark(cs201(), log.complete().events)
    rows = {r["id"]: r for r in result.transcript}
    assert rows[misheard]["correctedBy"] == correction
    assert rows[misheard]["text"] == "it settles then ear rest vortex"
    assert rows[correction]["correction"] == "typed" and rows[correction]["text"] == said
    before = mark(cs201(), [e for e in log.events if e["type"] != "transcript_corrected"])
    assert result.metrics["candidateTurns"] == before.metrics["candidateTurns"] - 1
