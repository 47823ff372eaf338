"""Errors of the event protocol core; all derive from :class:`ioa.errors.IoaError`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ioa.errors import IoaError


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: ``rule`` is an EVT id (``EVT-004``) or ``EVT-SCHEMA`` for any other
    envelope/payload schema error; ``path`` points into the event (``payload.nodeId``)."""

    rule: str
    path: str
    message: str
    event_id: str | None = None

    def __str__(self) -> str:
        where = f"{self.event_id}: " if self.event_id else ""
        return f"{where}{self.rule} {self.path}: {self.message}"

    def as_dict(self) -> dict[str, str | None]:
        return {
            "rule": self.rule,
            "path": self.path,
            "message": self.message,
            "eventId": self.event_id,
        }


class EventProtocolError(IoaError, ValueError):
    """Base class of the event protocol errors."""


class EventValidationError(EventProtocolError):
    """An event (or a batch) breaks the EVT rules or the schema; nothing was stored.

    ``violations`` lists every problem found, not only the first.
    """

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations: tuple[Violation, ...] = tuple(violations)
        shown = "; ".join(str(v) for v in self.violations[:5])
        more = len(self.violations) - 5
        suffix = f" (and {more} more)" if more > 0 else ""
        super().__init__(f"invalid event: {shown}{suffix}")

    @property
    def rules(self) -> tuple[str, ...]:
        """The distinct rule ids broken, in first-seen order."""
        return tuple(dict.fromkeys(v.rule for v in self.violations))


class CommandValidationError(EventProtocolError):
    """A command envelope is malformed; ``problems`` holds ``(path, message)`` pairs."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems: tuple[tuple[str, str], ...] = tuple(problems)
        shown = "; ".join(f"{p}: {m}" for p, m in self.problems[:5])
        super().__init__(f"invalid command: {shown}")
