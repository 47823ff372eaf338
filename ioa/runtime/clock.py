"""Injected time: the controller never reads the system clock itself.

Internally every instant is an integer count of milliseconds since the Unix epoch (exact, and
exactly what an event timestamp keeps: chapter 05 timestamps have millisecond precision).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    """Tells the controller what time it is."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...


class SystemClock:
    """The real clock (the live bot)."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


@dataclass
class ManualClock:
    """A clock that only moves when told to (tests, the simulator, benchmarks)."""

    current_ms: int = 0

    def now_ms(self) -> int:
        return self.current_ms

    def set(self, ms: int) -> None:
        """Move to ``ms``; time never goes backwards."""
        if ms < self.current_ms:
            raise ValueError(f"clock cannot go back from {self.current_ms} to {ms}")
        self.current_ms = ms

    def advance(self, ms: int) -> None:
        """Move forward by ``ms`` milliseconds."""
        self.set(self.current_ms + ms)


def to_datetime(ms: int) -> datetime:
    """The aware UTC datetime of an epoch-millisecond instant."""
    return _EPOCH + timedelta(milliseconds=ms)


def to_ms(moment: datetime) -> int:
    """Epoch milliseconds of an aware datetime (sub-millisecond digits are dropped)."""
    if moment.tzinfo is None:
        raise ValueError("datetimes must be timezone-aware")
    return (moment - _EPOCH) // timedelta(milliseconds=1)
