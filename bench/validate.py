"""Benchmark: validate a valid 200-node package many times.

Run from the project root:  .venv/bin/python bench/validate.py [--runs N]

Prints the median and p99 of ``validate_package`` (all ten steps, including the adapter
compilation and ADP rules when the adapter is installed), the same for the rules of steps 1-8
and 10 alone (adapter step disabled), and a baseline measured in the same run: ``json.loads``
plus pydantic ``AssessmentPackage.model_validate`` of the same document. Target: median under
50 ms for the full validation.

The three are measured interleaved (one run of each in turn, the order rotating), so a change
of machine load during the benchmark affects them alike and the ratios stay meaningful. Wall
clock and process CPU time are both reported: on a machine busy with other processes the CPU
figures are the steadier ones. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ioa.schema import AssessmentPackage
from ioa.validation import adapter_step, validate_package
from ioa.validation.adapter_step import ModuleLookup

TARGET_MEDIAN_MS = 50.0
QUESTION_NODES = 194
"""With a warmup, a wrap-up and four end nodes: exactly the 200-node limit (PKG-010)."""
PAIRED_SLOTS = 64
"""Slots served by a two-question pool; the remaining question nodes are single slots."""


def _question(node_id: str, next_id: str, index: int) -> dict[str, Any]:
    greedy, detail = f"tgt-{node_id}-core", f"tgt-{node_id}-detail"
    return {
        "nodeId": node_id,
        "kind": "question" if index % 3 else "scenario",
        "title": f"Question {index}",
        "promptSeed": f"Ask question {index} about graph algorithms; probe the reasoning.",
        "prompt": {"opening": f"Question {index}: how would you approach this problem?"},
        "evidenceTargets": [
            {
                "id": greedy,
                "label": "States the core idea",
                "description": "Candidate explains the central idea in their own words.",
                "weight": 0.6,
                "dimension": "knowledge_understanding",
                "markingCriteria": ["LO1"],
            },
            {
                "id": detail,
                "label": "Justifies a detail",
                "description": "Candidate justifies one step with an example.",
                "weight": 0.4,
                "dimension": "applied_problem_solving",
                "markingCriteria": ["LO2"],
            },
        ],
        "followUpPolicy": {
            "maxFollowUps": 2,
            "maxFollowUpDurationSec": 60,
            "followUpStyle": "probing",
        },
        "completionPolicy": {"requiredEvidenceTargetIds": [greedy], "minTurns": 1},
        "timeBudget": {"maxDurationSec": 300},
        "forbiddenActions": ["confirm_correctness"],
        "allowedActions": ["ask_follow_up"],
        "candidateCommands": {"allowed": ["repeat", "clarification", "pause", "skip"]},
        "recoveryHandlers": [
            {
                "scenario": "silence",
                "afterSec": 15,
                "maxAttempts": 2,
                "action": "gentle_reprompt",
                "escalation": "skip_node",
            },
            {
                "scenario": "stt_low_confidence",
                "maxAttempts": 2,
                "action": "gentle_reprompt",
                "escalation": "pause_session",
            },
        ],
        "transitions": [
            {
                "id": f"e-{node_id}-done",
                "targetNodeId": next_id,
                "condition": {"type": "evidence_satisfied", "targetIds": [greedy, detail]},
            },
            {
                "id": f"e-{node_id}-turns",
                "targetNodeId": next_id,
                "condition": {"type": "turn_count_reached", "count": 8},
            },
            {
                "id": f"e-{node_id}-skip",
                "targetNodeId": next_id,
                "condition": {"type": "candidate_command", "command": "skip"},
            },
            {"id": f"e-{node_id}-next", "targetNodeId": next_id, "condition": {"type": "always"}},
        ],
    }


def _end(node_id: str, end_type: str) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "kind": "end",
        "endType": end_type,
        "promptSeed": "Close the examination politely.",
        "prompt": {"closing": "Thank you. The examination is over."},
        "transitions": [],
    }


def build_package() -> dict[str, Any]:
    """A valid package of exactly 200 nodes: a chain of slots, 64 of them two-question pools."""
    single_slots = QUESTION_NODES - 2 * PAIRED_SLOTS
    slots: list[list[str]] = [[f"q{i:03}a", f"q{i:03}b"] for i in range(PAIRED_SLOTS)]
    slots += [[f"q{PAIRED_SLOTS + i:03}"] for i in range(single_slots)]
    slot_ids = [
        f"pool{i:03}" if len(members) > 1 else members[0] for i, members in enumerate(slots)
    ]
    nodes: list[dict[str, Any]] = [
        {
            "nodeId": "warmup",
            "kind": "warmup",
            "promptSeed": "Welcome the candidate and check the audio.",
            "prompt": {"opening": "Hello, can you hear me well?"},
            "timeBudget": {"maxDurationSec": 90},
            "transitions": [
                {"id": "e-warmup", "targetNodeId": slot_ids[0], "condition": {"type": "always"}}
            ],
        }
    ]
    index = 0
    for position, members in enumerate(slots):
        next_id = slot_ids[position + 1] if position + 1 < len(slots) else "wrapup"
        for node_id in members:
            nodes.append(_question(node_id, next_id, index))
            index += 1
    nodes.append(
        {
            "nodeId": "wrapup",
            "kind": "wrapup",
            "promptSeed": "Ask whether the candidate wants to add anything, then close.",
            "prompt": {"opening": "Is there anything you would like to add?"},
            "timeBudget": {"maxDurationSec": 120},
            "contextPolicy": {"strategy": "reset_with_summary"},
            "transitions": [
                {"id": "e-wrapup", "targetNodeId": "end-normal", "condition": {"type": "always"}}
            ],
        }
    )
    nodes += [
        _end("end-normal", "normal"),
        _end("end-timeout", "timeout"),
        _end("end-terminated", "terminated"),
        _end("end-technical", "technical_failure"),
    ]
    pools = [
        {
            "poolId": slot_ids[i],
            "nodeIds": members,
            "selection": "random_one",
            "difficultyCalibration": {"method": "expert_review", "notes": "Same steps."},
        }
        for i, members in enumerate(slots)
        if len(members) > 1
    ]
    return {
        "irVersion": "ioa-orm/0.2",
        "metadata": {
            "packageId": "0192f3a0-7c1e-7b3a-9d2e-3f4a5b6c7d8f",
            "title": "Benchmark: 200-node graph algorithms viva",
            "createdAt": "2026-11-01T09:00:00Z",
            "author": "bench",
            "version": "1.0.0",
            "structureLevel": "semi-structured",
            "expectedCandidateCount": 20,
            "totalTimeBudgetSec": 3600,
            "learningOutcomes": [
                {"id": "LO1", "text": "Explain graph algorithms."},
                {"id": "LO2", "text": "Apply graph algorithms."},
            ],
        },
        "persona": {"name": "Dr. Bench", "roleMessage": "You are a calm, neutral examiner."},
        "globalPolicies": {
            "forbiddenActions": ["reveal_answer", "reveal_rubric"],
            "defaultCandidateCommands": {"allowed": ["repeat", "clarification", "pause"]},
        },
        "initialNodeId": "warmup",
        "questionPools": pools,
        "nodes": nodes,
    }


@dataclass(frozen=True)
class Timing:
    """Wall-clock and CPU milliseconds of repeated runs."""

    wall: list[float]
    cpu: list[float]

    def line(self, label: str) -> str:
        return (
            f"{label:<38} median {statistics.median(self.wall):8.2f} ms   "
            f"p99 {percentile(self.wall, 0.99):8.2f} ms   "
            f"(CPU median {statistics.median(self.cpu):8.2f} ms, "
            f"p99 {percentile(self.cpu, 0.99):8.2f} ms)"
        )


def measure(actions: Sequence[Callable[[], object]], runs: int) -> list[Timing]:
    """Milliseconds per run of each action (wall clock and process CPU time), after three
    warm-up runs of each. The actions are interleaved: every round runs each action once, in
    an order that rotates from round to round."""
    for _ in range(3):
        for action in actions:
            action()
    wall: list[list[float]] = [[] for _ in actions]
    cpu: list[list[float]] = [[] for _ in actions]
    for round_ in range(runs):
        for offset in range(len(actions)):
            which = (round_ + offset) % len(actions)
            started, started_cpu = time.perf_counter(), time.process_time()
            actions[which]()
            wall[which].append((time.perf_counter() - started) * 1000)
            cpu[which].append((time.process_time() - started_cpu) * 1000)
    return [Timing(w, c) for w, c in zip(wall, cpu, strict=True)]


def load_average() -> str:
    """The 1/5/15-minute load averages and the CPU count (if the platform tells)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered)) - 1))
    return ordered[rank]


def disabled_compiler() -> tuple[None, ModuleLookup]:
    """What ``find_compiler`` returns when no compiler is installed: step 9 is skipped."""
    return None, ModuleLookup(None, "disabled by the benchmark")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    document = build_package()
    text = json.dumps(document)
    report = validate_package(json.loads(text))
    if not report.passed or len(document["nodes"]) != 200:
        print("benchmark package is not a valid 200-node package:", report.to_dict()["errors"][:3])
        return 1

    def adapter_step_off() -> object:
        original = adapter_step.find_compiler
        adapter_step.find_compiler = disabled_compiler
        try:
            return validate_package(json.loads(text))
        finally:
            adapter_step.find_compiler = original

    load_before = load_average()
    baseline, full, rules_only = measure(
        [
            lambda: AssessmentPackage.model_validate(json.loads(text)),
            lambda: validate_package(json.loads(text)),
            adapter_step_off,
        ],
        args.runs,
    )

    base = statistics.median(baseline.wall)
    print(
        f"package: {len(document['nodes'])} nodes, {report.transitions_validated} transitions, "
        f"{len(document['questionPools'])} pools; {args.runs} runs each, interleaved"
    )
    print(f"load average: {load_before} before, {load_average()} after")
    print(full.line("validate_package, all 10 steps"))
    print(rules_only.line("validate_package, adapter step off"))
    print(baseline.line("baseline: json.loads + model_validate"))
    for label, timing in (("all steps", full), ("adapter step off", rules_only)):
        median = statistics.median(timing.wall)
        verdict = "OK" if median < TARGET_MEDIAN_MS else "over target"
        cpu_ratio = statistics.median(timing.cpu) / statistics.median(baseline.cpu)
        print(
            f"{label}: {median / base:.1f}x baseline (CPU {cpu_ratio:.1f}x); "
            f"target median < {TARGET_MEDIAN_MS:.0f} ms: {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
