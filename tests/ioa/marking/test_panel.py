"""The LLM marking panel (pure: a fake chat client), its agreement statistics and routing."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from ioa.marking import (
    Level,
    PanelMember,
    PanelReplyError,
    mark_log,
    parse_reply,
    read_log,
    run_panel,
)
from tests.ioa.builders import example
from tests.ioa.marking.builders import cs201
from tests.marking.exams import PROFILES, drive

CONFIG = cs201()


class FakeClient:
    """Answers by model name: a function (round, keys) -> {key: level}."""

    def __init__(self, plans: Mapping[str, object]) -> None:
        self.plans = plans
        self.calls: list[tuple[str, list[Mapping[str, str]]]] = []

    def complete(self, *, model: str, messages: Sequence[Mapping[str, str]]) -> str:
        self.calls.append((model, list(messages)))
        plan = self.plans[model]
        if isinstance(plan, Exception):
            raise plan
        round_no = 2 if len(messages) > 2 else 1
        levels = plan(round_no)  # type: ignore[operator]
        return (
            "```json\n"
            + json.dumps(
                {
                    "targets": [
                        {
                            "key": k,
                            "level": v,
                            "rationale": f"{model} thinks {v}",
                            "turnIds": ["turn-002"],
                        }
                        for k, v in levels.items()
                    ]
                }
            )
            + "\n```"
        )


def setup() -> tuple:
    events = [
        e.to_wire()
        for e in drive(example(), "0192f3a0-0000-7000-8000-0000000000c1", PROFILES["mixed"]())
    ]
    log = read_log(events)
    return log, mark_log(CONFIG, log)


def test_two_rounds_agreement_and_routing() -> None:
    log, result = setup()
    keys = [t.key for t in result.targets]
    marker = {t.key: t.level.label for t in result.targets}
    agree = dict(marker)
    far = {**marker, "tgt-negative-weights": "excellent"}  # the marker said absent
    client = FakeClient(
        {
            "m-a": lambda r: agree,
            "m-b": lambda r: far if r == 1 else {**far, "tgt-negative-weights": "satisfactory"},
        }
    )
    panel = run_panel(
        CONFIG, log, result, [PanelMember("a", "m-a"), PanelMember("b", "m-b")], client
    )
    assert len(client.calls) == 4  # two members, two rounds
    second_round_prompt = client.calls[2][1][-1]["content"]
    assert "other panel members" in second_round_prompt
    assert "m-a thinks" not in second_round_prompt  # a's own answer is not "another member's"
    assert "m-b thinks excellent" in second_round_prompt  # a sees b's evidence
    by_key = {a.key: a for a in panel.agreements}
    assert set(by_key) == set(keys)
    assert by_key["tgt-negative-weights"].routed  # absent vs satisfactory: 2 levels apart
    assert by_key["tgt-negative-weights"].panel_level is Level.ABSENT  # lower median of a, b
    assert panel.routed == ["tgt-negative-weights"]
    assert panel.alpha_round1 is not None and panel.alpha_round2 is not None
    assert panel.alpha_round2 >= panel.alpha_round1
    assert "RUBRIC" in client.calls[0][1][1]["content"]
    assert "Complete" in client.calls[0][1][1]["content"]  # rubric level labels for the panel


def test_a_failing_member_is_recorded_and_left_out() -> None:
    log, result = setup()
    marker = {t.key: t.level.label for t in result.targets}
    client = FakeClient({"ok": lambda r: marker, "down": RuntimeError("connection refused")})
    panel = run_panel(
        CONFIG, log, result, [PanelMember("ok", "ok"), PanelMember("down", "down")], client
    )
    errors = [r for r in panel.rounds if r.error]
    assert len(errors) == 1 and "connection refused" in errors[0].error
    assert not panel.routed
    assert panel.to_dict()["members"][1]["model"] == "down"


def test_parse_reply() -> None:
    text = (
        'Here you go: {"targets": [{"key": "a", "level": "Excellent", "turnIds": ["t1"]}, '
        '{"key": "zzz", "level": "partial"}, {"key": "b", "level": "great"}]}'
    )
    parsed = parse_reply(text, ["a", "b"])
    assert list(parsed) == ["a"] and parsed["a"].level is Level.EXCELLENT
    for bad in (
        "no json here",
        '{"nope": 1}',
        '{"targets": [{"key": "x", "level": "absent"}]}',
        "{oops}",
    ):
        with pytest.raises(PanelReplyError):
            parse_reply(bad, ["a"])
