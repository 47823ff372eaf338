"""The exception hierarchy of the IOA-ORM domain core.

Every error the core raises on purpose derives from :class:`IoaError`, so callers (the Django
apps, the bot, command-line tools) can catch one base class. Modules of the core add their own
subclasses here rather than defining private hierarchies.
"""

from __future__ import annotations

from collections.abc import Sequence


class IoaError(Exception):
    """Base class of every error raised on purpose by the ``ioa`` package."""


class CanonicalisationError(IoaError, ValueError):
    """A value cannot be written as canonical JSON (not a JSON value, NaN, lone surrogate...)."""


class IrVersionError(IoaError, ValueError):
    """An ``irVersion`` string is malformed or names a version this runtime cannot load."""


class IrVersionFormatError(IrVersionError):
    """An ``irVersion`` string does not match ``<name>/<MAJOR>.<MINOR>``."""


class UnsupportedIrVersionError(IrVersionError):
    """A well-formed ``irVersion`` that this runtime does not support (future, EOL, unknown).

    The message always names the supported versions (CMP-009).
    """

    def __init__(self, message: str, *, supported: Sequence[str]) -> None:
        super().__init__(message)
        self.supported: tuple[str, ...] = tuple(supported)


class PackageLoadError(IoaError, ValueError):
    """A document is not a valid assessment package (schema violations).

    ``problems`` holds one ``(path, message)`` pair per violation, with paths in the
    validation-report style (``nodes[q-dijkstra].followUpPolicy.maxFollowUps``).
    """

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems: tuple[tuple[str, str], ...] = tuple(problems)
        shown = "; ".join(f"{path}: {message}" for path, message in self.problems[:5])
        more = len(self.problems) - 5
        suffix = f" (and {more} more)" if more > 0 else ""
        super().__init__(
            f"not a valid assessment package: {len(self.problems)} problem(s): {shown}{suffix}"
        )


class RuleRegistryError(IoaError):
    """A validation rule was registered twice or with inconsistent metadata."""


class OutputFilterConfigError(IoaError, ValueError):
    """The ``outputValidationFilters`` block of a compiled flow cannot configure the output
    filters (unknown filter name, a required filter missing or disabled, a bad ``maxChars``)."""


class LedgerError(IoaError):
    """The evidence ledger was asked to do something inconsistent (e.g. replaying an
    ``evidence_signal`` event whose payload lacks a required field)."""


class RuntimeControllerError(IoaError):
    """Base class of the runtime controller's errors (``ioa.runtime``)."""


class ControllerSetupError(RuntimeControllerError, ValueError):
    """The controller cannot run this package (no compiled flow, bad session id, ...)."""


class InvalidInputError(RuntimeControllerError, ValueError):
    """An input handed to the controller is malformed (not a recoverable exam situation).

    Malformed ``report_observation`` arguments are *not* raised: the controller answers them with
    a ``system_error`` event and a canned fallback (chapter 07 §11)."""


class ReplayError(RuntimeControllerError):
    """Stored events cannot be replayed into a controller state (gap in ``seq``, another
    session's event, an event type this runtime does not know, a payload it cannot read)."""
