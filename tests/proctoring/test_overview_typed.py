"""The proctor's read models read the log through the typed payload models (issue #36):
``ioa.projections.session_view.SessionView`` and the session page's ledger, transcript and
interceptions (``ioa.projections.session_detail``) over a recorded session log give what a
proctor sees, and a payload that does not validate is skipped (and logged), never a crash of the
page."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioa.events import payloads as p
from ioa.events.reading import on, payload_of, type_name
from ioa.projections import session_detail as projected
from ioa.projections import session_view
from proctoring import session_detail
from tests.ioa.builders import example

LOG = Path(__file__).resolve().parents[2] / "frontend" / "test" / "fixtures" / "session-log.json"
"""A recorded session (``tests/sessions/event_log_fixture.py``: the cs201 example driven through
the runtime controller), as the proctor's projection of its log."""


def recorded() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(LOG.read_text())
    return loaded


def outline() -> list[session_detail.OutlineNode]:
    return [n.copy() for n in session_detail._outline("cs201", json.dumps(example()))]


def test_a_recorded_session_folds_into_the_overview_a_proctor_sees() -> None:
    log = recorded()
    view = session_view.SessionView("s-1")
    for event, after in zip(log["proctor"], log["overview"], strict=True):
        view.apply(event)
        assert view.last_seq == after["lastSeq"]
        assert (view.exam_state, view.node_id) == (after["examState"], after["nodeId"])
        assert (view.follow_ups, view.guardrails) == (after["followUps"], after["guardrails"])
        assert len(view.recoveries) == after["recoveries"]
        assert len(view.open_recoveries) == after["openRecoveries"]
        assert view.exam.budget_ms == after["exam"]["budgetMs"]
        assert view.exam.active_ms == after["exam"]["activeMs"]
        assert view.node.budget_ms == after["node"]["budgetMs"]
    assert view.status(invited=True, journey_started=True) is session_view.Status.COMPLETED
    assert (view.node_kind, view.node_max_follow_ups) == ("end", 0)
    assert view.ended_ms == view.started_ms + 420_000  # type: ignore[operator]
    (silence,) = view.alerts
    assert (silence["kind"], silence["count"]) == ("silence", 2)
    assert silence["detail"] == "The candidate has been silent"


def test_a_recorded_session_gives_the_detail_a_proctor_sees() -> None:
    events = recorded()["proctor"]
    turns = projected.transcript_of(events)
    assert len(turns) == 17
    said = [t for t in turns if t["speaker"] == "candidate"]
    answer = "It always settles the nearest vertex first, with a priority queue."
    assert answer in [t["text"] for t in said]
    assert all(t["purpose"] is None and t["confidence"] == 0.93 for t in said)
    assert all(t["confidence"] is None and t["purpose"] for t in turns if t not in said)

    nodes = projected.ledger_of(events, outline())
    dijkstra = next(n for n in nodes if n["nodeId"] == "q-dijkstra")
    assert dijkstra["entered"] is True
    targets: Any = dijkstra["targets"]
    greedy = next(t for t in targets if t["id"] == "tgt-greedy-choice")
    (found,) = greedy["signals"]
    assert found["excerpt"] == "settles the nearest vertex first"
    assert isinstance(found["kind"], str) and greedy["covered"] is (found["kind"] == "positive")

    caught = projected.interceptions_of(events)
    (guardrail,) = caught["guardrails"]
    assert guardrail["type"] == "command_refused" and guardrail["nodeId"] == "q-dijkstra"
    assert [(r["recoveryId"], r["attempts"], r["resolution"]) for r in caught["recoveries"]] == [
        ("rec-001", 1, "candidate_resumed"),
        ("rec-002", 1, "exam_terminated"),
    ]
    assert caught["recoveries"][0].get("action") == "gentle_reprompt"
    assert json.loads(json.dumps(caught)) == caught  # JSON-ready: no enum objects


def test_every_folded_type_has_a_typed_handler() -> None:
    assert set(session_view.RELEVANT_TYPES) == set(session_view._HANDLERS)
    for name, (model, _handle) in session_view._HANDLERS.items():
        assert type_name(model) == name


def test_a_payload_that_does_not_validate_is_skipped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    view = session_view.SessionView("s-1")
    bad = {"type": "node_entered", "timestamp": "2026-05-06T09:00:00Z", "seq": 3}
    with caplog.at_level(logging.WARNING, logger="proctoring.overview"):
        assert view.apply({**bad, "payload": {"nodeId": 7}}) == []
    assert view.node_id is None and view.last_seq == 3  # the log moved; the event is skipped
    assert "NodeEntered" in caplog.text
    assert projected.ledger_of([{**bad, "payload": None}], outline())


def test_the_reader_fills_in_the_type_and_refuses_another() -> None:
    body = {"recoveryId": "r", "resolution": "re_prompted", "durationSec": 1}
    read = payload_of(p.RecoveryResolved, {"payload": body})
    assert read is not None and read.recoveryId == "r"
    assert payload_of(p.RecoveryResolved, {"payload": {**body, "type": "node_exited"}}) is None
    name, (model, run) = on(p.RecoveryResolved, lambda seen, r, extra: (seen, r.recoveryId, extra))
    assert (name, model) == ("recovery_resolved", p.RecoveryResolved)
    assert run("x", read, 1) == ("x", "r", 1)
    assert run("x", p.Resume(), 1) is None  # another model: ignored


# --- malformed payloads never raise -----------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)

READ_TYPES = sorted({*session_view.RELEVANT_TYPES, "transcript_final", "examiner_utterance_final"})
START = recorded()["proctor"][:20]
"""The recorded exam up to its first question (a running view for the malformed events)."""
SAMPLES: dict[str, Mapping[str, Any]] = {}
for _event in recorded()["proctor"]:
    SAMPLES.setdefault(_event["type"], _event["payload"])


@st.composite
def malformed(draw: st.DrawFn) -> dict[str, Any]:
    """A stored envelope of a type the proctor reads, its payload a recorded one with fields
    dropped or replaced by any JSON value (or no object at all)."""
    kind = draw(st.sampled_from([*READ_TYPES, "evidence_signal"]))
    sample = dict(SAMPLES.get(kind, {"type": kind}))
    fields = sorted({*sample, "nodeId", "recoveryId", "targetIds", "toState", "remainingMs"})
    for name in draw(st.lists(st.sampled_from(fields), max_size=4, unique=True)):
        if draw(st.booleans()):
            sample.pop(name, None)
        else:
            sample[name] = draw(json_values)
    payload: object = draw(st.one_of(st.just(sample), json_values))
    return {
        "eventId": "e",
        "sessionId": "s-1",
        "seq": draw(st.integers(1, 10_000)),
        "timestamp": "2026-05-06T09:00:00Z",
        "type": kind,
        "payload": payload,
    }


OUTLINE = outline()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(malformed(), max_size=12))
def test_malformed_payloads_never_raise(events: list[dict[str, Any]]) -> None:
    logging.disable(logging.WARNING)
    try:
        view = session_view.SessionView("s-1")
        session_view.fold(view, [*START, *events])
        view.status(invited=True, journey_started=True)
        projected.transcript_of(events)
        projected.ledger_of(events, OUTLINE)
        json.dumps(projected.interceptions_of(events))
    finally:
        logging.disable(logging.NOTSET)
