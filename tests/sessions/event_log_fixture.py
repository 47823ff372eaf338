"""The event log the browser's reducers are tested against
(``frontend/test/fixtures/session-log.json``).

One exam driven through the real runtime controller (``tests/ioa/runtime/harness.py``): warm-up,
an answer with evidence and a follow-up, a candidate command, a refused skip (a guardrail), a
silence recovery, a proctor's pause, resume and extension, time warnings, the end. The file holds
the proctor's and the candidate's projection of that log (``ioa.events.projection``), the exam
room's parts of the package, and what ``proctoring.overview.SessionView`` has folded after each
event of the proctor's log (``overview[i]``: after ``proctor[i]``), so the JavaScript of the
proctor page and the exam room (``static/js/events/``) is checked against the Python, not against
itself.

Ids (event, utterance, correlation, recovery ids...) are uuid7s drawn at random: they are
renamed in order of first appearance so the file is the same on every run.
``tests/sessions/test_event_log_fixture.py`` fails when the file is not what this module
builds; rewrite it with ``VIVA_WRITE_FIXTURES=1 pytest tests/sessions/test_event_log_fixture.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ioa.events.projection import project
from ioa.projections.session_view import Clock, SessionView
from sessions.exam_room import _structure
from tests.ioa.runtime.harness import Harness, signal

PATH = Path(__file__).resolve().parents[2] / "frontend" / "test" / "fixtures" / "session-log.json"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def drive() -> Harness:
    """The exam (module docstring), through the runtime controller."""
    h = Harness(mode="text").to_q1()
    h.say("It always settles the nearest vertex first, with a priority queue.", at=20)
    h.observe(
        at=21,
        follow_up=True,
        spoken="Why does it settle the nearest vertex first?",
        signals=[signal("tgt-greedy-choice", excerpt="settles the nearest vertex first")],
    )
    h.at(25).command("repeat_question", "cmd-repeat", nodeId="q-dijkstra")
    h.say("Can we skip this question?", at=30)
    h.observe(at=31, command="skip", commandDetected="skip")
    h.tick(120)  # silence: a recovery starts
    h.say("Because the nearest one cannot get any shorter.", at=125)
    h.observe(at=126, spoken="Thank you.")
    h.at(130).proctor("pause", reason="noise in the room")
    h.at(190).proctor("resume", reason="quiet again")
    h.at(200).proctor("extend_time", seconds=120, scope="exam", reason="a late start")
    h.tick(400)  # the part's time runs low
    h.at(420).command("end_exam_requested", "cmd-end", requestedBy="candidate")
    return h


def _name(uuid: str, names: dict[str, str]) -> str:
    """The stable stand-in of a random id: the n-th id met is ``…-8000-<n>``."""
    return names.setdefault(uuid, f"00000000-0000-7000-8000-{len(names) + 1:012d}")


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _UUID.sub(lambda m: _name(m.group(0), names), value)
    if isinstance(value, list):
        return [_renamed(item, names) for item in value]
    if isinstance(value, dict):
        return {key: _renamed(item, names) for key, item in value.items()}
    return value


def _clock(clock: Clock) -> dict[str, int | None]:
    return {"budgetMs": clock.budget_ms, "activeMs": clock.active_ms, "sinceMs": clock.since_ms}


def summary(view: SessionView) -> dict[str, Any]:
    """What both pages must agree with the overview on."""
    return {
        "lastSeq": view.last_seq,
        "examState": view.exam_state,
        "nodeId": view.node_id,
        "followUps": view.follow_ups,
        "guardrails": view.guardrails,
        "recoveries": len(view.recoveries),
        "openRecoveries": len(view.open_recoveries),
        "exam": _clock(view.exam),
        "node": _clock(view.node),
    }


def _room(h: Harness) -> dict[str, Any]:
    """The exam room's view of the package (``sessions.exam_room.room_config``'s parts)."""
    structure = _structure("fixture", json.dumps(h.document))
    return {
        "totalBudgetSec": structure.total_budget_sec,
        "parts": [
            {"number": part.number, "label": str(part.label), "nodeIds": list(part.node_ids)}
            for part in structure.parts
        ],
    }


def build() -> dict[str, Any]:
    """The fixture's content."""
    h = drive()
    names: dict[str, str] = {}
    wire = [_renamed(event.to_wire(), names) for event in h.events]
    proctor = [e for e in (project(w, "proctor") for w in wire) if e is not None]
    candidate = [e for e in (project(w, "candidate") for w in wire) if e is not None]
    view = SessionView(session_id=h.session_id)
    overview = []
    for event in proctor:
        view.apply(event)
        overview.append(summary(view))
    return {
        "about": "Built by tests/sessions/event_log_fixture.py; do not edit by hand.",
        "room": _room(h),
        "overview": overview,
        "proctor": proctor,
        "candidate": candidate,
    }


def render() -> str:
    return json.dumps(build(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
