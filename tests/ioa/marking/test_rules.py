"""The level rules of docs/spec/marking.md §3, rule by rule (pure: logs built by hand)."""

from __future__ import annotations

import pytest

from ioa.marking import Level, decide_level, mark, read_log
from tests.ioa.marking.builders import Log, cs201, dijkstra

CONFIG = cs201()
GREEDY = CONFIG.target("tgt-greedy-choice")
assert GREEDY is not None


def decide(log: Log) -> tuple[Level, list[str]]:
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    return decision.level, [h.rule_id for h in decision.rules]


@pytest.mark.parametrize(
    ("kind", "level", "rule"),
    [
        ("positive", Level.EXCELLENT, "MRK-L02"),
        ("self_correction", Level.SATISFACTORY, "MRK-L03"),
        ("partial", Level.PARTIAL, "MRK-L04"),
        ("flawed_reasoning", Level.PARTIAL, "MRK-L05"),
        ("misconception", Level.ABSENT, "MRK-L06"),
        ("absent", Level.ABSENT, "MRK-L07"),
        ("process_positive", Level.EXCELLENT, "MRK-L08"),
        ("process_negative", Level.PARTIAL, "MRK-L08"),
    ],
)
def test_each_signal_kind_alone_gives_its_level(kind: str, level: Level, rule: str) -> None:
    log = dijkstra()
    log.turn("an answer")
    log.signal("tgt-greedy-choice", kind, 0.9)
    got, rules = decide(log)
    assert got is level
    assert rule in rules


def test_no_signal_is_absent() -> None:
    log = dijkstra()
    log.turn("something unrelated")
    assert decide(log) == (Level.ABSENT, ["MRK-L01"])


def test_a_node_never_reached_is_absent_and_says_so() -> None:
    log = Log().enter("warmup", "warmup")
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    assert decision.level is Level.ABSENT
    assert [h.rule_id for h in decision.rules] == ["MRK-L10"]
    assert "not_reached" in decision.review


def test_the_highest_content_level_wins() -> None:
    log = dijkstra()
    log.turn("first try")
    log.signal("tgt-greedy-choice", "partial", 0.9)
    log.turn("complete answer")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    level, rules = decide(log)
    assert level is Level.EXCELLENT and "MRK-A01" in rules


# --- confidence (MRK-C01) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidence", "level"),
    [
        (0.95, Level.EXCELLENT),
        (0.7, Level.EXCELLENT),
        (0.69, Level.SATISFACTORY),
        (0.5, Level.SATISFACTORY),
        (0.49, Level.PARTIAL),
    ],
)
def test_confidence_caps_a_positive_signal(confidence: float, level: Level) -> None:
    log = dijkstra()
    log.turn("answer")
    log.signal("tgt-greedy-choice", "positive", confidence)
    got, rules = decide(log)
    assert got is level
    assert ("MRK-C01" in rules) is (confidence < 0.7)


def test_a_weak_self_correction_counts_as_partial() -> None:
    log = dijkstra()
    log.turn("answer")
    log.signal("tgt-greedy-choice", "self_correction", 0.3)
    assert decide(log)[0] is Level.PARTIAL


def test_a_weak_negative_signal_caps_nothing_and_asks_for_review() -> None:
    log = dijkstra()
    log.turn("answer")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    log.turn("a doubtful slip")
    log.signal("tgt-greedy-choice", "misconception", 0.3)
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    assert decision.level is Level.EXCELLENT
    assert "weak_negative_signal" in decision.review
    assert any(u.role == "not_applied" for u in decision.signals)


# --- STT confidence (MRK-C02) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("stt", "level"),
    [
        (0.93, Level.EXCELLENT),
        (0.6, Level.EXCELLENT),
        (0.59, Level.SATISFACTORY),
        (0.5, Level.SATISFACTORY),
    ],
)
def test_stt_confidence_caps_at_satisfactory_below_the_marginal_threshold(
    stt: float, level: Level
) -> None:
    log = dijkstra()
    log.turn("answer", confidence=stt)
    log.signal("tgt-greedy-choice", "positive", 0.9, stt=stt)
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    assert decision.level is level
    assert ("low_stt_evidence" in decision.review) is (stt < 0.6)


def test_stt_cap_does_not_touch_a_level_already_below_it() -> None:
    log = dijkstra()
    log.turn("answer", confidence=0.55)
    log.signal("tgt-greedy-choice", "partial", 0.9, stt=0.55)
    assert decide(log)[0] is Level.PARTIAL


# --- scaffolding (MRK-C03) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intensity", "level"),
    [(0, Level.EXCELLENT), (1, Level.EXCELLENT), (2, Level.SATISFACTORY), (3, Level.PARTIAL)],
)
def test_reported_scaffolding_intensity_caps(intensity: int, level: Level) -> None:
    log = dijkstra()
    log.turn("answer")
    log.signal(
        "tgt-greedy-choice",
        "positive",
        0.9,
        scaffoldingIntensity=intensity,
        scaffoldingEffective=True,
    )
    got, rules = decide(log)
    assert got is level
    assert ("MRK-C03" in rules) is (intensity >= 2)


def test_scaffolding_read_from_an_older_description() -> None:
    log = dijkstra()
    log.turn("answer")
    sid = log.signal("tgt-greedy-choice", "positive", 0.9)
    log.events[-1]["payload"]["description"] = (
        "Positive evidence for 'x': \"answer\" (scaffolding intensity: 3, effective)"
    )
    assert read_log(log.events).signals[sid].scaffolding == 3
    assert decide(log)[0] is Level.PARTIAL


def test_evidence_gap_follow_ups_count_as_scaffolding_without_a_report() -> None:
    log = dijkstra()
    log.turn("not sure")
    log.follow_up("evidence_gap")
    log.turn("still not")
    log.follow_up("evidence_gap")
    log.turn("it settles the closest vertex")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    level, rules = decide(log)
    assert level is Level.SATISFACTORY and "MRK-C03" in rules


def test_depth_probes_are_not_scaffolding() -> None:
    log = dijkstra()
    log.turn("answer")
    log.follow_up("depth_probe")
    log.turn("more")
    log.follow_up("depth_probe")
    log.turn("complete")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    assert decide(log)[0] is Level.EXCELLENT


# --- misconceptions and self-corrections (MRK-C04, MRK-C05) -----------------------------------


def test_an_unresolved_misconception_caps_at_partial() -> None:
    log = dijkstra()
    log.turn("right")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    log.turn("largest distance first")
    sid = log.signal("tgt-greedy-choice", "misconception", 0.8)
    log.misconception("tgt-greedy-choice", signal_id=sid)
    level, rules = decide(log)
    assert level is Level.PARTIAL and "MRK-C04" in rules


def test_a_misconception_resolved_later_caps_at_satisfactory() -> None:
    log = dijkstra()
    log.turn("largest distance first")
    log.signal("tgt-greedy-choice", "misconception", 0.8)
    log.turn("no, the smallest, and it relaxes the edges")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    level, rules = decide(log)
    assert level is Level.SATISFACTORY and "MRK-C05" in rules


def test_a_self_correction_after_a_misconception_is_satisfactory() -> None:
    log = dijkstra()
    log.turn("largest distance first")
    log.signal("tgt-greedy-choice", "misconception", 0.8)
    log.turn("sorry, I mean the smallest")
    log.signal("tgt-greedy-choice", "self_correction", 0.85)
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    assert decision.level is Level.SATISFACTORY
    assert decision.turn_ids == ("turn-001", "turn-002")


def test_a_misconception_event_without_a_signal_still_caps() -> None:
    log = dijkstra()
    log.turn("complete but then wrong")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    log.misconception("tgt-greedy-choice", 0.8)
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    assert decision.level is Level.PARTIAL
    assert decision.misconception_ids


# --- process signals (MRK-L08, MRK-L09) -------------------------------------------------------


def test_process_negative_caps_content_at_satisfactory_unless_answered() -> None:
    log = dijkstra()
    log.turn("answer")
    log.signal("tgt-greedy-choice", "positive", 0.9)
    log.signal("tgt-greedy-choice", "process_negative", 0.8)
    assert decide(log)[0] is Level.SATISFACTORY
    log.turn("reasoned it through")
    log.signal("tgt-greedy-choice", "process_positive", 0.8)
    assert decide(log)[0] is Level.EXCELLENT


def test_process_positive_corroborates_but_never_raises_content() -> None:
    log = dijkstra()
    log.turn("half an answer")
    log.signal("tgt-greedy-choice", "partial", 0.9)
    log.signal("tgt-greedy-choice", "process_positive", 0.9)
    decision = decide_level(GREEDY, read_log(log.events), CONFIG.rules)
    assert decision.level is Level.PARTIAL
    assert {u.role for u in decision.signals} == {"decides", "corroborates"}


def test_process_only_mixed_takes_the_latest() -> None:
    log = dijkstra()
    log.turn("muddled")
    log.signal("tgt-greedy-choice", "process_negative", 0.8)
    log.turn("clearer")
    log.signal("tgt-greedy-choice", "process_positive", 0.9)
    assert decide(log)[0] is Level.SATISFACTORY  # contradicted once: not excellent


# --- hesitations (MRK-N01) and explanations ---------------------------------------------------


def test_hesitations_never_change_the_level() -> None:
    log = dijkstra()
    log.turn("answer")
    log.add(
        "hesitation_detected",
        nodeId="q-dijkstra",
        turnId="turn-001",
        durationMs=9000,
        context="after_question",
        followedByResponse=True,
    )
    log.signal("tgt-greedy-choice", "positive", 0.9)
    level, rules = decide(log)
    assert level is Level.EXCELLENT and "MRK-N01" in rules


def test_every_decision_names_its_signals_turns_and_rules() -> None:
    log = dijkstra()
    log.turn("it settles the nearest vertex")
    log.signal("tgt-greedy-choice", "positive", 0.65, excerpt="settles the nearest vertex")
    result = mark(CONFIG, log.complete().events)
    item = result.to_dict()["targets"][0]
    assert item["key"] == "tgt-greedy-choice" and item["level"] == "satisfactory"
    assert item["turnIds"] == ["turn-001"]
    assert item["signals"][0]["signalId"] == "sig-001"
    assert [r["ruleId"] for r in item["rules"]] == ["MRK-L02", "MRK-C01"]
    assert '"settles the nearest vertex"' in item["rationale"]
    assert item["rationale"].startswith("Satisfactory:")


def test_merged_revisions_use_the_latest_payload() -> None:
    log = dijkstra()
    log.turn("partly")
    log.signal("tgt-greedy-choice", "positive", 0.6, signal_id="sig-001")
    log.turn("fully")
    log.signal(
        "tgt-greedy-choice", "positive", 0.9, signal_id="sig-001", turns=["turn-001", "turn-002"]
    )
    signal = read_log(log.events).signals["sig-001"]
    assert signal.revision == 2 and signal.confidence == 0.9
    assert decide(log)[0] is Level.EXCELLENT
