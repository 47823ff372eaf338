"""The record of how long each test file takes, and what handing out the heaviest first buys
(issue #36).

``tests/durations.json`` maps each test file to the seconds its tests took (setup, call and
teardown: the ``time`` of pytest's JUnit ``testcase``, summed over the file, failed and skipped
tests included). ``tests/support/heaviest_first.py`` reads it to hand the heaviest files out
first under ``pytest -n N --dist loadfile``. Refresh it from a CI run (``.ci/run`` keeps
``test-artifacts/junit.xml``)::

    python bench/ci_durations.py test-artifacts/junit.xml

This rewrites the record from the XML (``--keep`` also keeps recorded files the XML does not
have, e.g. after a partial run; ``--no-write`` leaves it and weighs the files by it, to see
how well a record orders a later run) and prints the slowest files and a
simulation of the run on ``--workers`` workers (default 2 3 4), test by test with the XML's
times, the way xdist hands work out:

* loadfile: xdist's own, files with the most tests first (``--loadscope-reorder``, its
  default), a worker's next file sent when two of its tests are left;
* heaviest order: the files by recorded seconds, heaviest first, xdist's refill at two left;
* heaviest-first: that order, the next file sent only when the worker's last test is left
  (what the plugin does);
* the lower bound ``max(total / workers, heaviest file)``.

A worker holds its last test back until it knows the test after it (or is told to stop), as
xdist's worker does. The model leaves out start-up (collection, test databases) and takes each
test's time as recorded, although it was measured beside the other workers on the same cores.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from defusedxml import ElementTree

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.heaviest_first import (  # noqa: E402
    LAST_TESTS_BEFORE_NEXT_FILE,
    RECORD,
    Weights,
    load_durations,
)

XDIST_TESTS_BEFORE_NEXT_FILE = 2
"""xdist's LoadScopeScheduling refills a worker when this many of its tests are left."""

TestTimes = dict[str, list[float]]
"""Test file → the seconds of each of its tests, in the order they ran."""


def module_path(classname: str, root: Path = ROOT) -> str:
    """The test file of a JUnit ``classname`` (``tests.browser.test_x`` or, for a test in a
    class, ``tests.browser.test_x.TestY``): the longest dotted prefix that is a file under
    ``root``; for a file that no longer exists, the name without its capitalised (class)
    parts."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (root / candidate).is_file():
            return candidate
    while len(parts) > 1 and parts[-1][:1].isupper():
        parts.pop()
    return "/".join(parts) + ".py"


def junit_tests(paths: Iterable[Path], root: Path = ROOT) -> TestTimes:
    """Each test file's test times from the ``testcase`` elements of the JUnit XML files at
    ``paths`` (a collection error's case, which has no classname, is left out)."""
    tests: TestTimes = {}
    for path in paths:
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            classname = case.get("classname", "")
            if classname:
                seconds = float(case.get("time", "0") or 0)
                tests.setdefault(module_path(classname, root), []).append(seconds)
    return tests


def junit_wall_seconds(paths: Iterable[Path]) -> float:
    """The run's own wall time (the ``testsuite`` elements' ``time``, summed over the files)."""
    total = 0.0
    for path in paths:
        for suite in ElementTree.parse(path).getroot().iter("testsuite"):
            total += float(suite.get("time", "0") or 0)
    return total


def file_seconds(tests: TestTimes) -> dict[str, float]:
    return {name: sum(times) for name, times in tests.items()}


def write_record(durations: Mapping[str, float], path: Path) -> None:
    """The record as JSON, one file a line in path order, to 0.1 s (diffs stay readable)."""
    rounded = {name: round(durations[name], 1) for name in collection_order(durations)}
    path.write_text(json.dumps(rounded, indent=1) + "\n", encoding="utf-8")


def collection_order(files: Iterable[str]) -> list[str]:
    """``files`` in pytest's collection order (a directory's entries sorted by name)."""
    return sorted(files, key=lambda name: Path(name).parts)


def loadfile_order(tests: TestTimes) -> list[str]:
    """xdist's loadfile order: most tests first, equal counts in collection order."""
    return sorted(collection_order(tests), key=lambda name: -len(tests[name]))


@dataclass
class _Worker:
    queue: deque[float] = field(default_factory=deque)
    pending: int = 0
    stopping: bool = False


def makespan(order: Sequence[str], tests: TestTimes, workers: int, refill_at: int) -> float:
    """The wall time of the files handed out in ``order`` the way xdist's LoadScopeScheduling
    does: one file to each worker, then a worker's next file whenever at most ``refill_at`` of
    its tests are left (a stop once nothing is left); a worker starts a test only when it knows
    the one after it or has been told to stop."""
    files = deque(order)
    pool = [_Worker() for _ in range(workers)]
    running: list[tuple[float, int]] = []  # (finish time, worker)

    def refill(worker: _Worker, *, first: bool = False) -> None:
        if worker.stopping:
            return
        if not files:
            worker.stopping = True
        elif first or worker.pending <= refill_at:
            times = tests[files.popleft()]
            worker.queue.extend(times)
            worker.pending += len(times)

    def start(number: int, now: float) -> None:
        worker = pool[number]
        if len(worker.queue) >= 2 or (worker.queue and worker.stopping):
            heapq.heappush(running, (now + worker.queue.popleft(), number))

    for worker in pool:
        refill(worker, first=True)
    for worker in pool:
        refill(worker)
    for number in range(workers):
        start(number, 0.0)
    now = 0.0
    while running:
        now, number = heapq.heappop(running)
        pool[number].pending -= 1
        refill(pool[number])
        start(number, now)
    return now


def simulate(tests: TestTimes, durations: Mapping[str, float], workers: int) -> dict[str, float]:
    """Simulated wall times on ``workers`` workers (see the module's docstring)."""
    heaviest = Weights(durations).order(loadfile_order(tests))
    seconds = file_seconds(tests)
    return {
        "loadfile": makespan(loadfile_order(tests), tests, workers, XDIST_TESTS_BEFORE_NEXT_FILE),
        "heaviest order": makespan(heaviest, tests, workers, XDIST_TESTS_BEFORE_NEXT_FILE),
        "heaviest-first": makespan(heaviest, tests, workers, LAST_TESTS_BEFORE_NEXT_FILE),
        "lower bound": max(sum(seconds.values()) / workers, max(seconds.values(), default=0)),
    }


def report(tests: TestTimes, durations: Mapping[str, float], workers: Iterable[int]) -> str:
    seconds = file_seconds(tests)
    total = sum(seconds.values())
    count = sum(len(times) for times in tests.values())
    lines = [f"{len(tests)} files, {count} tests, {total:.0f} s of tests ({total / 60:.1f} min)"]
    lines += ["", "Slowest 20 files:"]
    for name in sorted(seconds, key=lambda n: -seconds[n])[:20]:
        lines.append(f"  {seconds[name]:8.1f} s  {len(tests[name]):4} tests  {name}")
    lines += ["", "Simulated wall time of the tests (s, min):"]
    columns = ["loadfile", "heaviest order", "heaviest-first", "lower bound"]
    lines.append("  workers" + "".join(f"  {column:>15}" for column in columns))
    for n in workers:
        figures = simulate(tests, durations, n)
        cells = "".join(f"  {figures[c]:8.0f} {figures[c] / 60:5.1f}m" for c in columns)
        lines.append(f"  {n:>7}{cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", type=Path, nargs="*", default=[ROOT / "test-artifacts/junit.xml"])
    parser.add_argument("--record", type=Path, default=ROOT / RECORD)
    parser.add_argument("--keep", action="store_true", help="keep files the XML does not have")
    parser.add_argument("--no-write", action="store_true", help="leave the record as it is")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 3, 4])
    args = parser.parse_args(argv)
    tests = junit_tests(args.junit)
    if not tests:
        print(f"No test cases in {', '.join(map(str, args.junit))}", file=sys.stderr)
        return 1
    print(f"{', '.join(map(str, args.junit))}: the run took {junit_wall_seconds(args.junit):.0f} s")
    durations = file_seconds(tests)
    if args.keep:
        durations = load_durations(args.record) | durations
    if args.no_write:
        durations = load_durations(args.record)
        print(f"heaviest-first weighs the files by {args.record} ({len(durations)} files)")
    else:
        write_record(durations, args.record)
        print(f"Wrote {args.record} ({len(durations)} files)")
    print()
    print(report(tests, durations, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
