"""Errors of the marking core."""

from __future__ import annotations

from ioa.errors import IoaError


class MarkingError(IoaError):
    """Marking cannot proceed (a malformed marking configuration, an unreadable log)."""


class MarkingConfigError(MarkingError, ValueError):
    """A stored marking configuration cannot be read back."""


class PanelReplyError(MarkingError, ValueError):
    """A panel model's answer is not the JSON the rubric asked for."""
