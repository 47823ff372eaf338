"""The chain anchors' background writer (``sessions.anchor_queue``): a head after a quiet spell
is written at once, later heads of a session within the interval merge into the newest, flush
writes what is queued, a failure never stops the writer, and a forked child starts empty."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.anchor_queue import AnchorQueue, QueuedHead


class Lines:
    """A ``line_of`` for the queue: one JSON line per head in ``<directory>/<session>.jsonl``,
    able to hold the writer inside its next call until released."""

    def __init__(self) -> None:
        self.hold = threading.Event()
        self.held = threading.Event()
        self.release = threading.Event()
        self.fail_for: set[str] = set()

    def __call__(self, head: QueuedHead) -> tuple[Path, bytes]:
        if self.hold.is_set():
            self.hold.clear()
            self.held.set()
            self.release.wait(10)
        if head.session in self.fail_for:
            raise OSError("disk full")
        line = json.dumps({"seq": head.seq, "head": head.head}) + "\n"
        return Path(head.directory) / f"{head.session}.jsonl", line.encode()


def head(directory: Path, session: str, seq: int) -> QueuedHead:
    return QueuedHead(str(directory), session, seq, f"h{seq}", b"k")


def seqs(directory: Path, session: str) -> list[int]:
    path = directory / f"{session}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["seq"] for line in path.read_text().splitlines()]


def test_a_head_after_a_quiet_spell_is_written_at_once_and_later_ones_wait_for_the_interval(
    tmp_path: Path,
) -> None:
    queue = AnchorQueue(Lines(), interval=30.0)
    queue.submit(head(tmp_path, "a", 1))
    deadline = time.monotonic() + 5
    while not seqs(tmp_path, "a") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seqs(tmp_path, "a") == [1]  # no flush needed

    queue.submit(head(tmp_path, "a", 2))
    queue.submit(head(tmp_path, "a", 3))
    time.sleep(0.3)
    assert seqs(tmp_path, "a") == [1]  # within the interval: still queued
    assert queue.flush(5)
    assert seqs(tmp_path, "a") == [1, 3]  # the newest head stands for both


def test_heads_queued_behind_a_busy_writer_merge_per_session_into_the_newest(
    tmp_path: Path,
) -> None:
    lines = Lines()
    queue = AnchorQueue(lines, interval=0.0)
    lines.hold.set()
    queue.submit(head(tmp_path, "a", 1))
    assert lines.held.wait(5)  # the writer is inside the line of seq 1
    for seq in (2, 4, 3):  # a stale head never replaces a newer one
        queue.submit(head(tmp_path, "a", seq))
    queue.submit(head(tmp_path, "b", 7))
    lines.release.set()
    assert queue.flush(5)
    assert seqs(tmp_path, "a") == [1, 4]
    assert seqs(tmp_path, "b") == [7]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 5)), min_size=1, max_size=60),
    interval=st.sampled_from([0.0, 0.002, 0.05]),
    flushes=st.sets(st.integers(0, 59)),
)
def test_each_sessions_last_head_is_anchored_in_increasing_order(
    tmp_path_factory: pytest.TempPathFactory,
    plan: list[tuple[str, int]],
    interval: float,
    flushes: set[int],
) -> None:
    """One appender per session (the runtime's case), seqs rising by 1-5, flushes anywhere."""
    directory = tmp_path_factory.mktemp("anchors")
    queue = AnchorQueue(Lines(), interval=interval)
    last: dict[str, int] = {}
    for index, (session, step) in enumerate(plan):
        last[session] = last.get(session, 0) + step
        queue.submit(head(directory, session, last[session]))
        if index in flushes:
            assert queue.flush(5)
            assert all(seqs(directory, s)[-1] == seq for s, seq in last.items())
    assert queue.flush(5)
    for session, seq in last.items():
        written = seqs(directory, session)
        assert written == sorted(set(written)) and written[-1] == seq


def test_a_head_that_cannot_be_written_is_logged_and_the_writer_lives_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = Lines()
    lines.fail_for.add("bad")
    queue = AnchorQueue(lines, interval=0.0)
    with caplog.at_level(logging.ERROR, logger="sessions.anchor_queue"):
        queue.submit(head(tmp_path, "bad", 1))
        queue.submit(head(tmp_path, "good", 1))
        assert queue.flush(5)
    assert "could not anchor session bad at seq 1" in caplog.text
    assert seqs(tmp_path, "good") == [1]
    queue.submit(head(tmp_path, "good", 2))
    assert queue.flush(5)
    assert seqs(tmp_path, "good") == [1, 2]


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_starts_with_nothing_queued(tmp_path: Path) -> None:
    """The parent's writer is held inside a line, so the parent's later heads are still queued
    when it forks (as a Celery pool forks): the child neither writes them nor waits for them."""
    lines = Lines()
    queue = AnchorQueue(lines, interval=0.0)
    lines.hold.set()
    queue.submit(head(tmp_path, "parent", 1))
    assert lines.held.wait(5)
    queue.submit(head(tmp_path, "parent", 2))

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            queue.submit(head(tmp_path, "child", 1))
            if queue.flush(5) and seqs(tmp_path, "child") == [1] and not seqs(tmp_path, "parent"):
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0

    lines.release.set()
    assert queue.flush(5)
    assert seqs(tmp_path, "parent") == [1, 2]
    assert seqs(tmp_path, "child") == [1]
