"""The command-line contracts: validate_package and compile_package.

The tests of exit codes and output formats run ``manage.py`` itself. The byte-identity and
hostile-input tables run their command lines in batches, one interpreter per batch
(tests/support/command_batch.py), each line through Django's entry point with its own exit status
and captured file descriptors: a Django process costs seconds to start, and one each made this
file the slowest in CI (issue #36).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import EXAMPLES, example_document
from tests.support.command_batch import Outcome, run_batch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json"))


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def write(tmp_path: Path, name: str, content: object) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_every_example_passes() -> None:
    result = manage("validate_package", *map(str, EXAMPLE_FILES), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(reports) == len(EXAMPLE_FILES) >= 3
    assert all(r["result"] == "pass" and r["errors"] == [] for r in reports)


def test_json_lines_in_argument_order_and_exit_codes(tmp_path: Path) -> None:
    bad = example_document()
    bad["initialNodeId"] = "no-such-node"
    files = [
        write(tmp_path, "bad.json", bad),
        str(EXAMPLE_FILES[0]),
    ]
    result = manage("validate_package", *files, "--format", "json")
    assert result.returncode == 1
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["result"] for r in reports] == ["reject", "pass"]
    assert "PKG-002" in {e["ruleId"] for e in reports[0]["errors"]}

    unreadable = [write(tmp_path, "broken.json", "{ not json"), str(tmp_path / "missing.json")]
    result = manage("validate_package", *files, *unreadable, "--format", "json")
    assert result.returncode == 2
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(reports) == 4
    assert "not valid JSON at line 1" in reports[2]["errors"][0]["message"]
    assert "no such file" in reports[3]["errors"][0]["message"]
    for report in reports:
        assert {
            "packageId",
            "irVersion",
            "validatedAt",
            "result",
            "errors",
            "warnings",
            "summary",
        } <= set(report)


def test_text_format_names_rule_path_and_message(tmp_path: Path) -> None:
    bad = example_document()
    bad["nodes"][1]["followUpPolicy"]["maxFollowUps"] = -1
    result = manage("validate_package", write(tmp_path, "bad.json", bad))
    assert result.returncode == 1
    assert "REJECT" in result.stdout
    assert "nodes[q-dijkstra].followUpPolicy.maxFollowUps" in result.stdout


@pytest.fixture(scope="module")
def compiled_twice() -> dict[Path, tuple[Outcome, Outcome]]:
    """Every example compiled in two interpreters with different hash seeds, by example."""
    lines = [["compile_package", str(path)] for path in EXAMPLE_FILES]
    first = run_batch(lines, env={"PYTHONHASHSEED": "1"})
    second = run_batch(lines, env={"PYTHONHASHSEED": "2"})
    return dict(zip(EXAMPLE_FILES, zip(first, second, strict=True), strict=True))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_compile_is_byte_identical_twice(
    path: Path, compiled_twice: dict[Path, tuple[Outcome, Outcome]]
) -> None:
    first, second = compiled_twice[path]
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    flow = json.loads(first.stdout)
    assert flow["adapterVersion"] == "pipecat-adapter/0.2"


def test_compile_of_a_rejected_package_exits_1_with_the_report_on_stderr(tmp_path: Path) -> None:
    bad = example_document()
    bad["initialNodeId"] = "no-such-node"
    result = manage("compile_package", write(tmp_path, "bad.json", bad))
    assert result.returncode == 1
    assert result.stdout == ""
    assert json.loads(result.stderr)["result"] == "reject"


COMMANDS = ["validate_package", "compile_package"]
HOSTILE: list[tuple[str | bytes, str]] = [
    ("[" * 10_000 + "]" * 10_000, "10000 levels deep"),
    ('{"a":' * 5_000 + "1" + "}" * 5_000, "5000 levels deep"),
    ('{"title": "\\ud800"}', "unpaired surrogate"),
    (b"\xff\xfe not utf-8", "cannot be read"),
]


@pytest.fixture(scope="module")
def hostile_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Outcome]:
    """Each command on each hostile file, in one batch, by (command, the file's index)."""
    folder = tmp_path_factory.mktemp("hostile")
    paths = []
    for index, (content, _) in enumerate(HOSTILE):
        path = folder / f"hostile-{index}.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        paths.append(path)
    cases = [(command, index) for command in COMMANDS for index in range(len(HOSTILE))]
    outcomes = run_batch([[command, str(paths[index])] for command, index in cases])
    return dict(zip(cases, outcomes, strict=True))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("index", "named"), [(i, named) for i, (_, named) in enumerate(HOSTILE)])
def test_deep_or_unreadable_input_exits_2_with_a_clear_message(
    hostile_outcomes: dict[tuple[str, int], Outcome], command: str, index: int, named: str
) -> None:
    done = hostile_outcomes[(command, index)]
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert named in done.stdout + done.stderr
