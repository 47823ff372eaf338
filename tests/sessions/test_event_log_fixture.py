"""The browser's reducers are tested against a log the Python builds (``event_log_fixture``):
the committed file must still be what the runtime and the overview produce, so the JavaScript
(``static/js/events/``, ``frontend/test``) and the Python cannot drift apart."""

from __future__ import annotations

import json
import os

from ioa.events.projection import visible_to
from tests.sessions.event_log_fixture import PATH, build, render


def test_the_committed_fixture_is_what_the_python_builds() -> None:
    if os.environ.get("VIVA_WRITE_FIXTURES") == "1":
        PATH.parent.mkdir(parents=True, exist_ok=True)
        PATH.write_text(render())
    assert PATH.read_text() == render(), (
        f"{PATH} is stale: VIVA_WRITE_FIXTURES=1 pytest tests/sessions/test_event_log_fixture.py"
    )


def test_the_log_covers_what_both_pages_fold() -> None:
    built = build()
    proctor_types = {e["type"] for e in built["proctor"]}
    assert {
        "bot_ready",
        "exam_state_changed",
        "node_entered",
        "follow_up_used",
        "guardrail_triggered",
        "recovery_started",
        "recovery_resolved",
        "evidence_signal",
        "candidate_command_received",
        "time_warning",
        "proctor_action",
        "examiner_utterance_final",
        "transcript_final",
        "exam_completed",
    } <= proctor_types
    assert len(built["overview"]) == len(built["proctor"])
    end = built["overview"][-1]
    assert end["examState"] == "completed" and end["lastSeq"] == built["proctor"][-1]["seq"]
    assert end["followUps"] == 1 and end["guardrails"] == 1 and end["recoveries"] == 2
    assert "paused" in {o["examState"] for o in built["overview"]}


def test_the_candidate_log_holds_nothing_the_candidate_may_not_see() -> None:
    built = build()
    assert built["candidate"], "the candidate sees part of the log"
    for event in built["candidate"]:
        assert visible_to(event["type"], "candidate"), event["type"]
    text = json.dumps(built["candidate"])
    for secret in ("evidence_signal", "guardrail_triggered", "rubricItemIds", "excerpt"):
        assert secret not in text
