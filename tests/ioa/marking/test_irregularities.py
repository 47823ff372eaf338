"""Proctors' irregularity reports in the deterministic marker (MRK-I01..I05,
``docs/spec/marking.md`` §5.1): every report sends the session to a human, names what and where,
and never changes a level."""

from __future__ import annotations

import json
from typing import Any

from ioa.canonical import canonical_json
from ioa.marking import ACADEMIC_INTEGRITY, REVIEW_NOTE, TECHNICAL, Level, mark, when_text
from ioa.marking.marker import MarkingResult
from tests.ioa.marking.builders import Log, cs201

CONFIG = cs201()
DIJKSTRA = ("tgt-greedy-choice", "tgt-complexity", "tgt-negative-weights")
SCENARIO = ("tgt-model-graph", "tgt-choose-algorithm")


def strong(report: tuple[str, dict[str, Any]] | None = None) -> Log:
    """An excellent session (every target positive, strong); ``report`` = (where, kwargs of
    ``Log.irregularity``) adds one report at ``q-dijkstra`` (after its second turn), at the
    scenario, or after the exam ended."""
    log = Log().enter("warmup", "warmup")
    log.say("Welcome. Tell me about yourself.")
    log.turn("I liked graphs.")
    log.enter("q-dijkstra")
    for target in DIJKSTRA:
        log.say(f"Question on {target}?")
        log.turn(f"good answer on {target}")
        log.signal(target, "positive", 0.9)
        if report and report[0] == "dijkstra" and target == "tgt-complexity":
            log.irregularity(**report[1])
    log.enter("scn-delivery-routes", "scenario")
    for target in SCENARIO:
        log.turn(f"good answer on {target}")
        log.signal(target, "positive", 0.9)
    if report and report[0] == "scenario":
        log.irregularity(**report[1])
    log.complete()
    if report and report[0] == "after":
        log.irregularity(**report[1])
    return log


def irregularity_flags(result: MarkingResult) -> list[dict[str, object]]:
    return [f.to_dict() for f in result.flags if f.code == "irregularity"]


def test_without_a_report_the_session_is_released_and_the_result_has_no_irregularities() -> None:
    result = mark(CONFIG, strong().events)
    assert not result.needs_review and result.scores.exam == 1.0
    assert "irregularities" not in result.to_dict()  # byte-identical to earlier marker versions


def test_a_technical_report_goes_to_review_and_marks_the_node_visit_affected() -> None:
    clean = mark(CONFIG, strong().events)
    log = strong(("dijkstra", {"category": "technical", "reason": "Audio dropped for a minute."}))
    result = mark(CONFIG, log.events)

    # MRK-I01: review although every level is excellent; levels and scores untouched
    assert result.needs_review
    assert result.levels() == clean.levels()
    assert all(level is Level.EXCELLENT for level in result.levels().values())
    assert result.scores == clean.scores

    (flag,) = irregularity_flags(result)
    assert flag["severity"] == "review"
    assert flag["nodeId"] == "q-dijkstra"
    assert flag["targetKeys"] == list(DIJKSTRA)  # MRK-I02: the node's targets only
    message = str(flag["message"])
    for part in (
        "Technical irregularity",
        "proctor user:7",
        "2026-01-05 09:04:05 UTC",
        "during 'Dijkstra's algorithm' (q-dijkstra)",
        '"Audio dropped for a minute."',
        "Affected by a technical irregularity",
    ):
        assert part in message, part

    (report,) = result.to_dict()["irregularities"]
    assert report["route"] == TECHNICAL
    assert report["category"] == "technical" and report["actor"] == "user:7"
    assert report["timestamp"] == "2026-01-05T09:04:05.123Z"
    assert report["afterCompletion"] is False
    # both voices of the q-dijkstra visit, before and after the report; not the warm-up
    transcript = result.to_dict()["transcript"]
    at_node = [row["id"] for row in transcript if row["nodeId"] == "q-dijkstra"]
    assert report["affectedTurnIds"] == at_node
    assert {"turn-002", "turn-003", "turn-004"} <= set(report["affectedTurnIds"])
    assert "turn-001" not in report["affectedTurnIds"]
    assert any(row_id.startswith("utt-") for row_id in report["affectedTurnIds"])
    assert ", ".join(at_node) in message


def test_a_candidate_report_asks_for_an_academic_integrity_review_of_every_target() -> None:
    log = strong(("scenario", {"category": "candidate", "reason": "Notes on the desk."}))
    result = mark(CONFIG, log.events)
    (flag,) = irregularity_flags(result)
    assert flag["severity"] == "review" and result.needs_review
    assert flag["nodeId"] == "scn-delivery-routes"
    assert flag["targetKeys"] == list(DIJKSTRA + SCENARIO)  # MRK-I03: the whole session
    assert "Academic-integrity review" in str(flag["message"])
    assert "Candidate irregularity" in str(flag["message"])
    (report,) = result.to_dict()["irregularities"]
    assert report["route"] == ACADEMIC_INTEGRITY and report["affectedTurnIds"] == []


def test_staff_environment_and_uncategorised_reports_are_review_notes_on_the_node() -> None:
    for category, title in (
        ("staff", "Staff irregularity"),
        ("environment", "Environment irregularity"),
        (None, "Irregularity (no category)"),
    ):
        log = strong(("dijkstra", {"category": category, "reason": "An invigilator spoke."}))
        result = mark(CONFIG, log.events)
        (flag,) = irregularity_flags(result)
        assert flag["severity"] == "review", category
        assert flag["targetKeys"] == list(DIJKSTRA), category  # MRK-I04
        assert str(flag["message"]).startswith(title), category
        assert "Review note" in str(flag["message"])
        (report,) = result.to_dict()["irregularities"]
        assert report["route"] == REVIEW_NOTE and report["affectedTurnIds"] == []


def test_a_report_after_the_exam_ended_concerns_the_whole_session() -> None:
    log = strong(("after", {"category": "technical", "reason": "The recording was faint."}))
    result = mark(CONFIG, log.events)
    (flag,) = irregularity_flags(result)
    assert flag["nodeId"] is None  # MRK-I05: no point in the exam
    assert flag["targetKeys"] == list(DIJKSTRA + SCENARIO)
    assert "after the exam ended" in str(flag["message"])
    assert "No turn could be tied to it" in str(flag["message"])
    (report,) = result.to_dict()["irregularities"]
    assert report["afterCompletion"] is True and report["affectedTurnIds"] == []
    assert result.last_seq == log.events[-1]["seq"]


def test_a_report_without_a_reason_or_in_a_node_without_targets_still_goes_to_review() -> None:
    log = Log().enter("warmup", "warmup")
    log.turn("hello")
    log.irregularity("technical")  # no reason, in the warm-up (no targets)
    log.enter("q-dijkstra")
    for target in DIJKSTRA:
        log.turn(f"good answer on {target}")
        log.signal(target, "positive", 0.9)
    result = mark(CONFIG, log.complete().events)
    (flag,) = irregularity_flags(result)
    assert flag["severity"] == "review" and flag["targetKeys"] == []
    assert "no reason given" in str(flag["message"])
    assert result.to_dict()["irregularities"][0]["affectedTurnIds"] == ["turn-001"]


def test_a_technical_report_affects_only_the_visit_it_was_made_in() -> None:
    log = Log().enter("warmup", "warmup").enter("q-dijkstra")
    first = log.turn("first visit answer")
    log.enter("scn-delivery-routes", "scenario")
    log.turn("scenario answer")
    log.enter("q-dijkstra")  # revisited (revise_earlier_answer)
    second = log.turn("second visit answer")
    log.irregularity("technical", "Echo on the line.")
    report = mark(CONFIG, log.complete().events).to_dict()["irregularities"][0]
    assert report["affectedTurnIds"] == [second]
    assert first not in report["affectedTurnIds"]


def test_several_reports_are_kept_in_order_and_marking_them_twice_gives_identical_bytes() -> None:
    log = strong(("dijkstra", {"category": "technical", "reason": "Audio dropped."}))
    log.irregularity("candidate", "Looked at a second screen.", actor="user:9", node=None)
    events = log.events
    first = mark(CONFIG, events)
    second = mark(CONFIG, json.loads(json.dumps(events)))
    assert canonical_json(first.to_dict()) == canonical_json(second.to_dict())
    reports = first.to_dict()["irregularities"]
    assert [r["category"] for r in reports] == ["technical", "candidate"]
    assert [r["seq"] for r in reports] == sorted(r["seq"] for r in reports)
    assert len(irregularity_flags(first)) == 2


def test_when_text_is_for_people_and_keeps_what_it_cannot_read() -> None:
    assert when_text("2026-05-06T02:00:15.456Z") == "2026-05-06 02:00:15 UTC"
    assert when_text("yesterday") == "yesterday"
    assert when_text("") == "an unknown time"
