"""The channel layer being unreachable, logged once per outage and process (issue #33).

The event broadcaster (``sessions.broadcast``) and the bots' group watch (``bot.layer_watch``)
both notice Redis going away; whichever notices first logs one warning (no traceback), and the
first success afterwards logs one line that it is back. Every other failure in between is quiet.
"""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger(__name__)

_down = threading.Event()
_lock = threading.Lock()
_outages = [0]


def brief(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 200 characters)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:200]


def is_down() -> bool:
    return _down.is_set()


def outages() -> int:
    """How many outages this process has noticed since it started (for the metrics)."""
    return _outages[0]


def note_down(exc: BaseException, consequence: str) -> None:
    """The layer could not be reached: logged only if it was not already known down."""
    with _lock:
        if _down.is_set():
            return
        _down.set()
        _outages[0] += 1
    logger.warning("channel layer unreachable (%s); %s", brief(exc), consequence)


def note_up(detail: str = "") -> bool:
    """A call through the layer succeeded: logged (and ``True``) only if it was known down."""
    with _lock:
        if not _down.is_set():
            return False
        _down.clear()
    logger.warning("channel layer back%s", f"; {detail}" if detail else "")
    return True
