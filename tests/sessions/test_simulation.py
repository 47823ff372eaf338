"""The session simulator and ``manage.py simulate_session``: script parsing, the bot stand-in,
persistence through the event store, re-runs, exit codes, replay from the store."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from ioa.runtime import RuntimeController, to_ms
from ioa.schema import load_package
from sessions.models import ExamSession, SessionEvent
from sessions.selectors import iter_rows, wire_from_row
from sessions.simulation import (
    DEFAULT_START,
    ScriptError,
    parse_script,
    run_script,
    session_uuid,
    simulate_session,
)
from tests.ioa.builders import example


def _obs(spoken: str, **kw: Any) -> dict[str, Any]:
    return {
        "signals": kw.get("signals", []),
        "answerQuality": "substantive",
        "needsFollowUp": kw.get("follow_up", False),
        "evidenceSufficient": kw.get("done", False),
        "anxietyDetected": False,
        "spokenText": spoken,
    }


SCRIPT = [
    {"at": 0, "kind": "start"},
    {
        "at": 5,
        "kind": "transcript",
        "speaker": "candidate",
        "text": "Hello, I liked recursion most.",
        "confidence": 0.95,
    },
    {"at": 6, "kind": "observation", "args": _obs("Thank you, let us begin.", done=True)},
    {
        "at": 20,
        "kind": "transcript",
        "speaker": "candidate",
        "text": "It settles the nearest unvisited vertex and relaxes its edges.",
        "confidence": 0.92,
    },
    {
        "at": 21,
        "kind": "observation",
        "args": _obs(
            "Go on.",
            signals=[
                {
                    "signalType": "tgt-greedy-choice",
                    "signalKind": "positive",
                    "excerpt": "settles the nearest unvisited vertex",
                    "confidence": 0.9,
                }
            ],
        ),
    },
]


def _text(lines: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(line) for line in lines) + "\n"


# --- parsing (no database) ---------------------------------------------------------------------


def test_script_parses_every_kind() -> None:
    lines = parse_script(
        _text(
            [
                *SCRIPT,
                {
                    "at": 22,
                    "kind": "command",
                    "type": "repeat_question",
                    "payload": {"nodeId": "q-dijkstra"},
                },
                {"at": 23, "kind": "instruction", "mode": "queued", "text": "Speak up."},
                {"at": 24, "kind": "tick"},
                {"at": 25, "kind": "proctor", "action": "extend_time", "seconds": 60},
                {"at": 26, "kind": "fault", "component": "network", "severity": "transient"},
                {"at": 27, "kind": "fault_cleared"},
            ]
        )
        + "\n# a comment\n"
    )
    assert [line.kind for line in lines][-6:] == [
        "command",
        "instruction",
        "tick",
        "proctor",
        "fault",
        "fault_cleared",
    ]
    assert lines[1].at_ms == 5000 and lines[1].line == 2


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{"at": 0, "kind": "start"}\nnot json\n', 2, "not JSON"),
        ('{"at": 0, "kind": "start"}\n[1, 2]\n', 2, "JSON object"),
        ('{"at": 5, "kind": "start"}\n{"at": 4, "kind": "tick"}\n', 2, "back in time"),
        ('{"kind": "start"}\n', 1, "'at'"),
        ('{"at": -1, "kind": "start"}\n', 1, "'at'"),
        ('{"at": 0, "kind": "dance"}\n', 1, "unknown kind"),
        ('{"at": 0, "kind": "transcript", "text": "hi"}\n', 1, "confidence"),
        ('{"at": 0, "kind": "transcript", "text": "hi", "confidence": 2}\n', 1, "between 0 and 1"),
        ('{"at": 0, "kind": "observation", "args": []}\n', 1, "object"),
        ('{"at": 0, "kind": "instruction", "mode": "later", "text": "x"}\n', 1, "mode"),
        ('{"at": 0, "kind": "tick", "extra": 1}\n', 1, "unknown field"),
        ('{"at": 0, "kind": "proctor", "action": "extend_time"}\n', 1, "seconds"),
    ],
)
def test_malformed_script_names_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ScriptError, match=message) as caught:
        parse_script(text)
    assert caught.value.line == line


def test_run_script_is_pure_and_deterministic() -> None:
    package = load_package(example())
    lines = parse_script(_text(SCRIPT))
    first = [e.to_wire() for e in run_script(package, lines, session_id="sim-1")]
    second = [e.to_wire() for e in run_script(package, lines, session_id="sim-1")]
    assert first == second
    assert [e["seq"] for e in first] == list(range(1, len(first) + 1))
    entered = [e["payload"]["nodeId"] for e in first if e["type"] == "node_entered"]
    assert entered[:2] == ["warmup", "q-dijkstra"]
    assert any(e["type"] == "evidence_signal" for e in first)
    assert first[0]["timestamp"] == "2026-01-05T09:00:00.000Z"
    transcript = [e for e in first if e["type"] == "transcript_final"][1]
    assert transcript["timestamp"] == "2026-01-05T09:00:20.000Z"


def test_the_stand_in_speaks_one_utterance_after_the_other() -> None:
    package = load_package(example())
    events = run_script(package, parse_script(_text(SCRIPT)), session_id="sim-2")
    speech = [
        (e.type.value, e.payload.utteranceId)
        for e in events
        if e.type.value.startswith("examiner_utterance")
    ]
    for index in range(0, len(speech), 2):
        assert speech[index][0] == "examiner_utterance_started"
        assert speech[index + 1] == ("examiner_utterance_final", speech[index][1])
    finals = [e.payload for e in events if e.type.value == "examiner_utterance_final"]
    assert finals[0].durationMs == 5000  # the opening was cut short by the candidate at 5 s


def test_timers_fire_at_their_deadlines_between_lines() -> None:
    package = load_package(example())
    lines = parse_script(_text([*SCRIPT, {"at": 200, "kind": "tick"}]))
    events = run_script(package, lines, session_id="sim-3")
    recovery = [e for e in events if e.type.value == "recovery_started"]
    assert recovery and recovery[0].payload.recoveryType == "silence"
    # "Go on." (2 words, 800 ms) ends at 21.8 s; the node's silence handler waits 15 s
    assert recovery[0].timestamp == "2026-01-05T09:00:36.800Z"
    assert events[-1].timestamp < "2026-01-05T09:03:20.001Z"


# --- persistence ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_simulation_is_stored_through_the_event_store() -> None:
    result = simulate_session(
        document=example(), lines=parse_script(_text(SCRIPT)), session_key="sim-store"
    )
    assert not result.reused and result.revision == 1
    assert result.session_id == session_uuid("sim-store")
    session = ExamSession.objects.get(pk=result.session_id)
    assert session.last_seq == len(result.events)
    assert session.state == "in_progress"
    stored = [wire_from_row(row) for row in iter_rows(session_id=session.pk)]
    assert stored == result.events
    assert SessionEvent.objects.filter(session=session, type="evidence_signal").exists()


@pytest.mark.django_db
def test_rerun_with_the_same_inputs_reuses_the_stored_session() -> None:
    lines = parse_script(_text(SCRIPT))
    first = simulate_session(document=example(), lines=lines, session_key="sim-again")
    count = SessionEvent.objects.count()
    second = simulate_session(document=example(), lines=lines, session_key="sim-again")
    assert second.reused and second.events == first.events
    assert SessionEvent.objects.count() == count


@pytest.mark.django_db
def test_rerun_with_other_inputs_becomes_the_next_revision() -> None:
    simulate_session(document=example(), lines=parse_script(_text(SCRIPT)), session_key="sim-rev")
    other = simulate_session(
        document=example(), lines=parse_script(_text(SCRIPT[:3])), session_key="sim-rev"
    )
    assert other.revision == 2 and not other.reused
    assert other.session_id == session_uuid("sim-rev", 2)
    assert ExamSession.objects.filter(pk=session_uuid("sim-rev")).exists()


@pytest.mark.django_db
def test_a_crashed_bot_resumes_from_the_stored_events() -> None:
    result = simulate_session(
        document=example(), lines=parse_script(_text(SCRIPT)), session_key="sim-resume"
    )
    package = load_package(example())
    live = RuntimeController(package, session_id=str(result.session_id), clock=_FixedClock())
    for event in run_script(
        package, parse_script(_text(SCRIPT)), session_id=str(result.session_id)
    ):
        from ioa.runtime.evolve import apply_event

        apply_event(live.state, event, live.plan)
    restored = RuntimeController.restore(
        package,
        session_id=str(result.session_id),
        events=[_envelope(e) for e in result.events],
        clock=_FixedClock(),
    )
    assert restored.state == live.state
    assert restored.state.current_node_id == "q-dijkstra"


class _FixedClock:
    def now_ms(self) -> int:
        return to_ms(DEFAULT_START) + 60_000


def _envelope(wire: dict[str, Any]) -> Any:
    from ioa.events import validate_event

    return validate_event(wire).with_seq(wire["seq"])


# --- the command -------------------------------------------------------------------------------


def _files(tmp_path: Path, document: Any, script: str) -> tuple[str, str]:
    package = tmp_path / "package.json"
    package.write_text(json.dumps(document))
    path = tmp_path / "script.jsonl"
    path.write_text(script)
    return str(package), str(path)


@pytest.mark.django_db
def test_command_prints_the_stored_envelopes_in_seq_order(tmp_path: Path) -> None:
    package, script = _files(tmp_path, example(), _text(SCRIPT))
    out = io.StringIO()
    call_command(
        "simulate_session",
        package,
        script,
        "--session-id",
        "cmd-1",
        "--format",
        "jsonl",
        stdout=out,
    )
    events = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["sessionId"] == str(session_uuid("cmd-1"))
    text = io.StringIO()
    call_command(
        "simulate_session",
        package,
        script,
        "--session-id",
        "cmd-1",
        "--format",
        "text",
        stdout=text,
        stderr=io.StringIO(),
    )
    assert "node_entered" in text.getvalue()


@pytest.mark.django_db
def test_command_rejects_an_invalid_package_with_its_report(tmp_path: Path) -> None:
    document = example()
    document["initialNodeId"] = "no-such-node"
    package, script = _files(tmp_path, document, _text(SCRIPT))
    out = io.StringIO()
    with pytest.raises(SystemExit) as caught:
        call_command(
            "simulate_session",
            package,
            script,
            "--session-id",
            "bad",
            stdout=out,
            stderr=io.StringIO(),
        )
    assert caught.value.code == 1
    report = json.loads(out.getvalue())
    assert report["result"] == "reject"
    assert "PKG-002" in {e["ruleId"] for e in report["errors"]}


@pytest.mark.django_db
def test_command_exits_2_for_a_malformed_script(tmp_path: Path) -> None:
    package, script = _files(tmp_path, example(), '{"at": 0, "kind": "start"}\n{"at": "x"}\n')
    err = io.StringIO()
    with pytest.raises(SystemExit) as caught:
        call_command(
            "simulate_session",
            package,
            script,
            "--session-id",
            "x",
            stdout=io.StringIO(),
            stderr=err,
        )
    assert caught.value.code == 2
    assert f"{script}:2:" in err.getvalue()


@pytest.mark.django_db
def test_command_exits_2_for_an_unreadable_package(tmp_path: Path) -> None:
    package = tmp_path / "broken.json"
    package.write_text("{ not json")
    script = tmp_path / "s.jsonl"
    script.write_text(_text(SCRIPT))
    with pytest.raises(SystemExit) as caught:
        call_command(
            "simulate_session",
            str(package),
            str(script),
            "--session-id",
            "x",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    assert caught.value.code == 2


@pytest.mark.django_db
@pytest.mark.services("postgres")
def test_simulation_on_postgres(tmp_path: Path) -> None:
    package, script = _files(tmp_path, example(), _text(SCRIPT))
    out = io.StringIO()
    call_command("simulate_session", package, script, "--session-id", "pg-1", stdout=out)
    events = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert any(e["type"] == "evidence_signal" for e in events)
