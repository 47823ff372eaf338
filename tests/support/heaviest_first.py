"""Heaviest test files first when the suite runs in parallel (``--dist loadfile``, issue #36).

Loaded with ``-p tests.support.heaviest_first`` (pyproject's ``addopts``). Under ``--dist
loadfile`` (``make test``, ``.ci/run``) it replaces pytest-xdist's scheduler by
:class:`HeaviestFirstScheduling`, which keeps a test file's tests together on one worker like
loadfile but hands the files out longest-processing-time-first, from the durations recorded in
:data:`RECORD` (``tests/durations.json``: file → seconds of setup, call and teardown, written by
``bench/ci_durations.py`` from a CI run's JUnit XML).

Why: xdist's loadfile hands out the files with the most tests first (``--loadscope-reorder``,
its default), so the heaviest files, the voice browser tests of one or two tests of minutes
each, started last and the run ended with one or two workers busy; and it sends a worker its
next file as soon as two of its tests are left, so a heavy file of two tests took another file
along from the start (sorting the collection would change neither). Here every idle worker gets
the heaviest file left, and only when its last test is next: the worker holds its last test back
until it knows the test after it, so it waits one message round trip (milliseconds) for the
file, where xdist's refill commits the file a whole test (minutes, for a voice test) earlier.

A file without a record weighs the median recorded file; files of equal weight keep xdist's
order (most tests first, then collection order), so without a record the order is loadfile's.
Other ``--dist`` modes are left alone; ``-p no:tests.support.heaviest_first`` turns it off.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling, Scheduling
from xdist.workermanage import WorkerController

RECORD = Path("tests/durations.json")
"""The recorded durations, relative to pytest's root directory."""

LAST_TESTS_BEFORE_NEXT_FILE = 1
"""A worker gets its next file when this many of its tests are left (xdist's loadfile: 2)."""


def load_durations(path: Path) -> dict[str, float]:
    """The record at ``path`` (file → seconds); empty when it is missing or unreadable, so a
    broken record only costs the ordering, never the run."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(name): float(seconds)
        for name, seconds in data.items()
        if isinstance(seconds, int | float) and not isinstance(seconds, bool)
    }


class Weights:
    """Recorded seconds per file scope, the median recorded file for one not recorded."""

    def __init__(self, durations: Mapping[str, float]) -> None:
        self.durations = dict(durations)
        self.default = statistics.median(self.durations.values()) if self.durations else 0.0

    def __call__(self, scope: str) -> float:
        return self.durations.get(scope, self.default)

    def order(self, scopes: list[str]) -> list[str]:
        """``scopes`` heaviest first; equal weights keep their order (the sort is stable)."""
        return sorted(scopes, key=self, reverse=True)


class HeaviestFirstScheduling(LoadFileScheduling):  # type: ignore[misc]  # xdist: no py.typed
    """loadfile, with the heaviest file left going to the next idle worker, one at a time."""

    def __init__(
        self,
        config: pytest.Config,
        log: Producer | None = None,
        durations: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(config, log)
        self.weights = Weights(durations or {})

    def _assign_work_unit(self, node: WorkerController) -> None:
        # xdist pops the first scope of the work queue: put the heaviest left there. The queue
        # is reordered every time because a crashed worker's files come back to its end.
        heaviest = self.weights.order(list(self.workqueue))[0]
        self.workqueue.move_to_end(heaviest, last=False)
        super()._assign_work_unit(node)

    def _reschedule(self, node: WorkerController) -> None:
        # xdist's LoadScopeScheduling._reschedule, with the threshold of its last test.
        if node.shutting_down:
            return
        if not self.workqueue:
            node.shutdown()
            return
        if self._pending_of(self.assigned_work[node]) <= LAST_TESTS_BEFORE_NEXT_FILE:
            self._assign_work_unit(node)


def _loadfile(config: pytest.Config) -> bool:
    return bool(config.getoption("dist", None) == "loadfile")


def pytest_report_header(config: pytest.Config) -> str | None:
    """Which record the run's order comes from (under ``--dist loadfile`` only)."""
    if not _loadfile(config):
        return None
    weights = Weights(load_durations(config.rootpath / RECORD))
    return (
        f"heaviest first: {len(weights.durations)} files recorded in {RECORD}"
        f" (others weigh {weights.default:.1f} s)"
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> Scheduling | None:
    """:class:`HeaviestFirstScheduling` for ``--dist loadfile``; xdist's own for other modes."""
    if not _loadfile(config):
        return None
    return HeaviestFirstScheduling(config, log, load_durations(config.rootpath / RECORD))
