"""Deterministic identifiers and the seeded random choice of question pools.

* Event ids are UUIDv7 (chapter 05): the event's millisecond timestamp plus 74 bits derived
  from ``sha256(session id, event number)``: unique per session, reproducible, and never
  reused after a controller is rebuilt from its events (the number keeps counting).
* :class:`SeededRng` is the session's random source (spec-notes §1: question pools are drawn
  with a RNG seeded from the session id, never by the LLM). A draw depends only on the seed
  and the pool id, so the same session always gets the same question, in whatever order pools
  are reached, and a rebuilt controller draws exactly what the live one drew.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from ioa.events import uuid7_from_parts

_RAND74 = (1 << 74) - 1


def event_id(session_id: str, number: int, at_ms: int) -> str:
    """The UUIDv7 of the ``number``-th event the controller produces for a session."""
    digest = hashlib.sha256(f"ioa-event|{session_id}|{number}".encode()).digest()
    rand = int.from_bytes(digest[:10], "big") & _RAND74
    return str(uuid7_from_parts(at_ms, rand))


class Rng(Protocol):
    """The controller's source of randomness (injected)."""

    def choose(self, key: str, options: Sequence[str]) -> str:
        """Pick one of ``options`` for the draw named ``key`` (deterministic per key)."""
        ...


class SeededRng:
    """A hash-based RNG seeded with a string (the session id by default)."""

    def __init__(self, seed: str) -> None:
        self.seed = seed

    def choose(self, key: str, options: Sequence[str]) -> str:
        if not options:
            raise ValueError("cannot choose from no options")
        digest = hashlib.sha256(f"ioa-draw|{self.seed}|{key}".encode()).digest()
        return options[int.from_bytes(digest[:8], "big") % len(options)]
