"""UUIDv7 (RFC 9562 §5.7) with an injected clock and random source.

Python 3.12's ``uuid`` module has no ``uuid7``. Layout: 48-bit Unix time in milliseconds,
version ``0b0111``, 12 bits ``rand_a``, variant ``0b10``, 62 bits ``rand_b``.
:class:`Uuid7Generator` keeps ids strictly increasing within one generator even when the clock
stalls or steps back (RFC 9562 §6.2 method 2: the 74 random bits act as a counter seeded
randomly each new millisecond).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Final

_RAND_BITS: Final = 74
_RAND_MASK: Final = (1 << _RAND_BITS) - 1
_MAX_MS: Final = (1 << 48) - 1


def uuid7_from_parts(unix_ms: int, rand74: int) -> uuid.UUID:
    """The UUIDv7 for a millisecond timestamp and 74 random bits (pure)."""
    if not 0 <= unix_ms <= _MAX_MS:
        raise ValueError(f"unix_ms {unix_ms} does not fit 48 bits")
    if not 0 <= rand74 <= _RAND_MASK:
        raise ValueError("rand74 must fit 74 bits")
    rand_a = rand74 >> 62
    rand_b = rand74 & ((1 << 62) - 1)
    value = (unix_ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return uuid.UUID(int=value)


def uuid7_time_ms(value: uuid.UUID | str) -> int:
    """The Unix millisecond timestamp embedded in a UUIDv7."""
    u = value if isinstance(value, uuid.UUID) else uuid.UUID(value)
    return u.int >> 80


def is_uuid7(value: object) -> bool:
    """Whether ``value`` is a canonical (lower-case, hyphenated) UUIDv7 string."""
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    return parsed.version == 7 and parsed.variant == uuid.RFC_4122 and str(parsed) == value


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Uuid7Generator:
    """Monotonic UUIDv7 source. Thread-safe.

    ``clock_ms`` returns Unix time in milliseconds; ``random_bytes(n)`` returns ``n`` random
    bytes. Both default to the system's; tests inject fixed ones for reproducible ids.
    """

    def __init__(
        self,
        clock_ms: Callable[[], int] = _wall_clock_ms,
        random_bytes: Callable[[int], bytes] = os.urandom,
    ) -> None:
        self._clock_ms = clock_ms
        self._random_bytes = random_bytes
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0

    def __call__(self, at_ms: int | None = None) -> uuid.UUID:
        """The next id; ``at_ms`` overrides the clock (to match an event's timestamp)."""
        now = self._clock_ms() if at_ms is None else at_ms
        with self._lock:
            if now > self._last_ms:
                # Leave headroom in the counter: the top bit of the random field starts at 0.
                rand = int.from_bytes(self._random_bytes(10), "big") & (_RAND_MASK >> 1)
                self._last_ms, self._last_rand = now, rand
            else:
                self._last_rand += 1
                if self._last_rand > _RAND_MASK:  # counter exhausted: borrow the next ms
                    self._last_ms += 1
                    self._last_rand = 0
            return uuid7_from_parts(self._last_ms, self._last_rand)


_default_generator = Uuid7Generator()


def uuid7() -> uuid.UUID:
    """A new UUIDv7 from the process-wide generator (system clock and randomness)."""
    return _default_generator()
