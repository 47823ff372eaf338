"""The chain anchors' writer: heads queued by appends, written by one background thread per
process, at most one line per session per :data:`ANCHOR_INTERVAL`.

``sessions.chain_anchor`` anchors a session's head outside the database after every append.
Writing the line in the appending thread (format, MAC, open, write, close) cost about a third
of an append's CPU under load (``bench/events.py``: +45% events/s with it left out), and most
of those lines were overwritten in meaning within milliseconds by the next head of the same
session. So an append only queues its head (:meth:`AnchorQueue.submit`: no system call, no
formatting), and the ``chain-anchor`` thread writes, per batch, the newest queued head of each
session (one line, one ``write``, ``O_APPEND``).

Guarantees (docs/spec/audit-chain.md):

* a head is written at most :data:`ANCHOR_INTERVAL` after it was queued: the first head after
  a quiet spell is written at once, later ones wait for the interval to pass since the last
  batch began, and only a newer head of the same session replaces a queued one (a session's
  anchors are therefore in increasing seq order, and its last head is always anchored);
* :meth:`~AnchorQueue.flush` writes what is queued now and returns once every head submitted
  before it is written (or its write failed and was logged); readers in this process call it
  first. The queue is flushed at interpreter exit; Celery pool processes flush it when they
  shut down (``bot.tasks``);
* a process killed in between loses its queued heads: its last events stay unanchored, which
  verification does not report (a log reaching beyond its last anchor is not a truncation);
* a forked child starts with nothing queued (the parent writes its own heads).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, NamedTuple

logger = logging.getLogger(__name__)

ANCHOR_INTERVAL: Final = 0.05
"""Seconds between two batches of anchor lines: the most a queued head waits."""


class QueuedHead(NamedTuple):
    """A session's head to anchor, with the directory and MAC key in force when it was stored
    (a named tuple: one is made per append, and a frozen dataclass costs several times more to
    build)."""

    directory: str
    session: str
    seq: int
    head: str
    key: bytes


LineOf = Callable[[QueuedHead], tuple[Path, bytes]]
"""The anchor file and the line (ending in a newline) of a queued head."""


class AnchorQueue:
    """This process's queued heads and the thread that writes them (module docstring)."""

    def __init__(self, line_of: LineOf, *, interval: float = ANCHOR_INTERVAL) -> None:
        self.line_of = line_of
        self.interval = interval
        self._reset()
        os.register_at_fork(after_in_child=self._reset)
        atexit.register(self.flush, 5.0)

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._pending: dict[tuple[str, str], QueuedHead] = {}
        self._submitted = 0  # heads submitted so far
        self._written = 0  # of those, how many are written (or failed and logged)
        self._urgent = False
        self._thread: threading.Thread | None = None

    def submit(self, head: QueuedHead) -> None:
        """Queue ``head``; it replaces a queued head of the same session with a lower seq."""
        slot = (head.directory, head.session)
        with self._cond:
            self._submitted += 1
            queued = self._pending.get(slot)
            if queued is None or head.seq > queued.seq:
                self._pending[slot] = head
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="chain-anchor", daemon=True)
                self._thread.start()
            if queued is None and len(self._pending) == 1:  # the writer may be asleep
                self._cond.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Write what is queued now; ``False`` if that took longer than ``timeout``."""
        with self._cond:
            target = self._submitted
            if self._written >= target:
                return True
            self._urgent = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._written >= target, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending))
                batch, self._pending = list(self._pending.values()), {}
                self._urgent = False
                taken = self._submitted  # what this batch covers
            began = time.monotonic()
            self._write(batch)
            with self._cond:
                self._written = taken
                self._cond.notify_all()
                rest = self.interval - (time.monotonic() - began)
                if rest > 0:  # let the next heads gather, unless a reader needs them now
                    self._cond.wait_for(lambda: self._urgent, rest)

    def _write(self, batch: list[QueuedHead]) -> None:
        for head in batch:
            try:
                path, line = self.line_of(head)
                append_to(path, line)
            except Exception:  # logged, never raised: the writer must live on
                logger.exception("could not anchor session %s at seq %s", head.session, head.seq)


def append_to(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` in one ``write`` (``O_APPEND``), creating the file (mode
    0640) and its directory when missing."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        fd = os.open(path, flags, 0o640)
    except FileNotFoundError:  # the directory's first file: create it, once
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o640)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
