"""The heaviest test files go first under ``--dist loadfile`` (tests/support/heaviest_first.py),
and the record they are weighed by is read from JUnit XML (bench/ci_durations.py).

The scheduler is driven here the way xdist's controller drives it (nodes added, collections
registered, ``schedule``, one ``mark_test_complete`` per finished test, ``remove_node`` for a
crashed worker), with stand-in workers that record what they were sent; the last test runs a real
``pytest -n 2`` over a few generated files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from bench.ci_durations import (
    file_seconds,
    junit_tests,
    loadfile_order,
    makespan,
    module_path,
    simulate,
    write_record,
)
from tests.support.heaviest_first import HeaviestFirstScheduling, Weights, load_durations

ROOT = Path(__file__).resolve().parents[2]

# Collection order a, b, c, d, e; xdist's loadfile order c, a, d, e, b (most tests first).
# d has no record (it weighs the median, 30 s).
COLLECTION = [
    "t/test_a.py::test_1",
    "t/test_a.py::test_2",
    "t/test_b.py::test_1",
    "t/test_c.py::test_1",
    "t/test_c.py::test_2",
    "t/test_c.py::test_3",
    "t/test_d.py::test_1",
    "t/test_d.py::test_2",
    "t/test_e.py::test_1",
    "t/test_e.py::test_2",
]
DURATIONS = {"t/test_a.py": 10.0, "t/test_b.py": 50.0, "t/test_c.py": 5.0, "t/test_e.py": 100.0}


@dataclass(eq=False)
class Worker:
    """Stands in for xdist's WorkerController: records the test indices it is sent."""

    name: str
    sent: list[list[int]] = field(default_factory=list)
    shutting_down: bool = False

    @property
    def gateway(self) -> SimpleNamespace:
        return SimpleNamespace(id=self.name)

    def send_runtest_some(self, indices: Sequence[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True

    def files(self) -> list[str]:
        return [COLLECTION[batch[0]].split("::")[0] for batch in self.sent if batch]


def scheduler(workers: list[Worker], durations: dict[str, float]) -> HeaviestFirstScheduling:
    config = SimpleNamespace(
        getvalue=lambda name: [f"{len(workers)}*popen"] if name == "tx" else None,
        option=SimpleNamespace(loadscopereorder=True),  # xdist's default
    )
    sched = HeaviestFirstScheduling(cast(pytest.Config, config), durations=durations)
    for worker in workers:
        sched.add_node(cast(Any, worker))
    for worker in workers:
        sched.add_node_collection(cast(Any, worker), COLLECTION)
    sched.schedule()
    return sched


def finish(sched: HeaviestFirstScheduling, worker: Worker, count: int = 1) -> None:
    """The worker reports its next ``count`` outstanding tests as run (passed or failed: xdist
    reports both the same way, after the test's teardown)."""
    done = {i for i, nodeid in enumerate(COLLECTION) if _completed(sched, worker, nodeid)}
    outstanding = [i for batch in worker.sent for i in batch if i not in done]
    for index in outstanding[:count]:
        sched.mark_test_complete(cast(Any, worker), index)


def _completed(sched: HeaviestFirstScheduling, worker: Worker, nodeid: str) -> bool:
    units: dict[str, dict[str, bool]] = sched.assigned_work.get(cast(Any, worker), {})
    return units.get(nodeid.split("::")[0], {}).get(nodeid, False)


def test_files_are_weighed_by_their_record_and_unknown_ones_by_the_median() -> None:
    weights = Weights(DURATIONS)
    assert weights.default == 30.0
    files = ["t/test_a.py", "t/test_x.py", "t/test_b.py", "t/test_y.py", "t/test_e.py"]
    # x and y are unknown: both weigh 30 and keep their order.
    assert weights.order(files) == [
        "t/test_e.py",
        "t/test_b.py",
        "t/test_x.py",
        "t/test_y.py",
        "t/test_a.py",
    ]
    assert Weights({}).order(files) == files


def test_without_a_record_the_files_go_out_in_xdists_loadfile_order() -> None:
    gw0, gw1 = Worker("gw0"), Worker("gw1")
    sched = scheduler([gw0, gw1], {})
    assert (gw0.files(), gw1.files()) == (["t/test_c.py"], ["t/test_a.py"])
    finish(sched, gw1)
    assert gw1.files() == ["t/test_a.py", "t/test_d.py"]
    assert not sched.tests_finished


def test_each_idle_worker_gets_the_heaviest_file_left_one_file_at_a_time() -> None:
    gw0, gw1 = Worker("gw0"), Worker("gw1")
    sched = scheduler([gw0, gw1], DURATIONS)
    # e (100 s) and b (50 s) first. b has a single test, which the worker holds back until it
    # knows the test after it, so gw1 also gets the next file (d, unknown: 30 s) at once.
    assert gw0.files() == ["t/test_e.py"]
    assert gw1.files() == ["t/test_b.py", "t/test_d.py"]
    finish(sched, gw1, 2)  # b and the first of d: the last test of d is next
    assert gw1.files() == ["t/test_b.py", "t/test_d.py", "t/test_a.py"]
    finish(sched, gw0)  # the first of e: its last test is next
    assert gw0.files() == ["t/test_e.py", "t/test_c.py"]
    assert not sched.tests_finished
    finish(sched, gw0, 4)
    finish(sched, gw1, 3)
    assert gw0.shutting_down and gw1.shutting_down  # nothing left to hand out
    assert sched.tests_finished and not sched.has_pending
    sent = sorted(i for worker in (gw0, gw1) for batch in worker.sent for i in batch)
    assert sent == list(range(len(COLLECTION)))  # every test once


def test_a_file_is_not_handed_out_while_two_of_the_workers_tests_are_left() -> None:
    """xdist's loadfile gives the next file when two tests are left; here only at the last."""
    gw0, gw1 = Worker("gw0"), Worker("gw1")
    sched = scheduler([gw0, gw1], {"t/test_c.py": 100.0, "t/test_e.py": 50.0})
    assert gw0.files() == ["t/test_c.py"]  # three tests
    finish(sched, gw0)
    assert gw0.files() == ["t/test_c.py"]  # two left
    finish(sched, gw0)
    # a, b and d are unknown and weigh the median, 75 s: d is next in xdist's order (a is taken).
    assert gw0.files() == ["t/test_c.py", "t/test_d.py"]


def test_a_crashed_workers_unfinished_file_goes_to_the_next_idle_worker_first() -> None:
    gw0, gw1 = Worker("gw0"), Worker("gw1")
    sched = scheduler([gw0, gw1], DURATIONS)
    assert sched.remove_node(cast(Any, gw0)) == "t/test_e.py::test_1"
    # xdist reports the crashed test as failed; e goes back to the queue and, being the
    # heaviest file left, is the next one handed out.
    finish(sched, gw1, 2)
    assert gw1.files() == ["t/test_b.py", "t/test_d.py", "t/test_e.py"]


def test_the_record_is_read_leniently(tmp_path: Path) -> None:
    record = tmp_path / "durations.json"
    assert load_durations(record) == {}
    record.write_text("{not json", encoding="utf-8")
    assert load_durations(record) == {}
    record.write_text('{"a.py": 1.5, "b.py": "slow", "c.py": true, "d.py": 2}', encoding="utf-8")
    assert load_durations(record) == {"a.py": 1.5, "d.py": 2.0}


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="6" time="9.5">
<testcase classname="tests.support.test_heaviest_first" name="test_a" time="1.25" />
<testcase classname="tests.support.test_heaviest_first" name="test_b" time="2.0">
  <failure message="assert False">boom</failure></testcase>
<testcase classname="tests.support.test_heaviest_first" name="test_c" time="0.5">
  <skipped message="no" /></testcase>
<testcase classname="tests.gone.test_old.TestThing" name="test_d" time="3.0" />
<testcase classname="tests.gone.test_old" name="test_e" time="1.0" />
<testcase classname="" name="tests.broken.test_import" time="0.1"><error message="x" /></testcase>
</testsuite></testsuites>
"""


def test_a_junit_record_sums_every_test_of_a_file_failed_and_skipped_included(
    tmp_path: Path,
) -> None:
    xml = tmp_path / "junit.xml"
    xml.write_text(JUNIT, encoding="utf-8")
    tests = junit_tests([xml], ROOT)
    assert tests == {
        "tests/support/test_heaviest_first.py": [1.25, 2.0, 0.5],
        "tests/gone/test_old.py": [3.0, 1.0],
    }
    record = tmp_path / "durations.json"
    write_record(file_seconds(tests), record)
    assert list(json.loads(record.read_text(encoding="utf-8"))) == [
        "tests/gone/test_old.py",
        "tests/support/test_heaviest_first.py",
    ]
    assert load_durations(record) == {
        "tests/gone/test_old.py": 4.0,
        "tests/support/test_heaviest_first.py": 3.8,
    }


def test_a_junit_classname_names_its_file() -> None:
    assert module_path("tests.support.test_heaviest_first", ROOT) == (
        "tests/support/test_heaviest_first.py"
    )
    assert module_path("tests.support.test_heaviest_first.TestX", ROOT) == (
        "tests/support/test_heaviest_first.py"
    )
    assert module_path("tests.gone.test_old.TestX.TestY", ROOT) == "tests/gone/test_old.py"


def test_the_simulation_hands_files_out_as_xdist_does() -> None:
    # Four light files and a heavy one, found last; two tests each.
    tests = {f"t/test_{n}.py": [1.0, 1.0] for n in "abcd"} | {"t/test_z.py": [10.0, 10.0]}
    order = loadfile_order(tests)
    assert order == ["t/test_a.py", "t/test_b.py", "t/test_c.py", "t/test_d.py", "t/test_z.py"]
    # One worker runs every test in turn, however it is refilled.
    assert makespan(order, tests, 1, 2) == makespan(order, tests, 1, 1) == 28.0
    # Two: loadfile starts z last, at 4 s. Heaviest first with xdist's refill at two tests left
    # starts z at once but sends that worker b along (run after z); heaviest-first does not.
    assert simulate(tests, file_seconds(tests), 2) == {
        "loadfile": 24.0,
        "heaviest order": 22.0,
        "heaviest-first": 20.0,
        "lower bound": 20.0,
    }


SUITE = {
    "test_a.py": "def test_one():\n    pass\n",
    "test_b_fails.py": "def test_one():\n    pass\n\ndef test_two():\n    assert False\n",
    "test_c_unknown.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
    "test_z_heavy.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
}
RECORD = {"suite/test_a.py": 1.0, "suite/test_b_fails.py": 2.0, "suite/test_z_heavy.py": 50.0}
RECORDER = """import os

import pytest


@pytest.fixture(autouse=True)
def _record_start(request):
    with open(os.environ["STARTED_LOG"], "a") as log:
        log.write(f"{os.environ['PYTEST_XDIST_WORKER']} {request.node.path.name}\\n")
"""


PYTEST = [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-n", "2", "--dist", "loadfile"]
PYTEST += ["-p", "no:cacheprovider"]
"""xdist only: the installed plugins' autoload is off (pytest-django would set up the project)."""


def _run_parallel(
    tmp_path: Path, *options: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]]]:
    """``pytest -n 2 --dist loadfile`` over SUITE, with RECORD as its record; returns the run
    and the files each worker started, in order."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "durations.json").write_text(json.dumps(RECORD), encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "conftest.py").write_text(RECORDER, encoding="utf-8")
    for name, source in SUITE.items():
        (suite / name).write_text(source, encoding="utf-8")
    log = tmp_path / "started.log"
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_"))}
    env |= {"PYTHONPATH": str(ROOT), "STARTED_LOG": str(log), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    run = subprocess.run(
        [*PYTEST, "-p", "tests.support.heaviest_first", *options, "suite"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    started: dict[str, list[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        worker, name = line.split()
        files = started.setdefault(worker, [])
        if name not in files:
            files.append(name)
    return run, started


def test_a_real_parallel_run_starts_the_heaviest_file_first(tmp_path: Path) -> None:
    run, started = _run_parallel(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 6 passed" in run.stdout, run.stdout
    assert "heaviest first: 3 files recorded in tests/durations.json (others weigh 2.0 s)" in (
        run.stdout
    )
    # The heaviest (collected last) and the next (b; c, unknown, weighs the median 2 s too and
    # comes after b in collection order) start first, one on each worker.
    assert {files[0] for files in started.values()} == {"test_z_heavy.py", "test_b_fails.py"}
    assert sorted(f for files in started.values() for f in files) == sorted(SUITE)

    # Without the plugin, xdist's loadfile starts the files of most tests, in collection order.
    run, started = _run_parallel(tmp_path, "-p", "no:tests.support.heaviest_first")
    assert "1 failed, 6 passed" in run.stdout, run.stdout
    assert {files[0] for files in started.values()} == {"test_b_fails.py", "test_c_unknown.py"}
    assert "heaviest first" not in run.stdout
