"""Candidate commands: one vocabulary, three sources (spec-notes §3), and the node policy gate.

* :func:`canonical` maps an LLM ``commandDetected`` value (with ADP-005 aliases), a command
  envelope type or a canonical name to :class:`~ioa.schema.CandidateCommandType`.
* :func:`gate` decides whether the current node accepts a command:

  - ``pause``, ``resume``, ``raise_hand``, ``report_audio_issue``, ``emergency_stop`` and
    ``finish`` are always allowed (welfare and safety);
  - the POL-002 policy vocabulary (repeat, clarification, request_rephrase, skip, volume_up,
    volume_down, language_switch, thinking_aloud) must be listed in the node's
    ``candidateCommands.allowed`` (or the package default) and not in ``forbidden``;
  - commands outside that vocabulary (slow_down, help, revise_earlier_answer,
    challenge_premise, signal_confidence) cannot be listed by a valid package, so they are
    allowed unless a node forbids them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ioa.events import canonical_command
from ioa.schema import (
    ALWAYS_ALLOWED_COMMANDS,
    CandidateCommandPolicy,
    CandidateCommandType,
    OnViolation,
)

C = CandidateCommandType

CONFIRMED_COMMANDS: Final = frozenset(
    {C.FINISH.value, C.SKIP.value, C.REVISE_EARLIER_ANSWER.value, C.LANGUAGE_SWITCH.value}
)
"""Commands the candidate's words (as the LLM or the classifier read them) only ask for: the
runtime asks "do you want to ...?" and only the candidate's "yes" carries them out; any other
answer cancels (our 03 chapter §5). A button (an envelope command) acts at once: the exam room
asks its own question before it sends one."""

POLICY_VOCABULARY: Final = frozenset(
    {
        C.REPEAT,
        C.CLARIFICATION,
        C.REQUEST_REPHRASE,
        C.PAUSE,
        C.RAISE_HAND,
        C.SKIP,
        C.VOLUME_UP,
        C.VOLUME_DOWN,
        C.LANGUAGE_SWITCH,
        C.THINKING_ALOUD,
    }
)
"""The POL-002 ``CandidateCommandType`` list: what ``candidateCommands.allowed`` may name."""

PAUSED_COMMANDS: Final = frozenset(
    {C.RESUME, C.RAISE_HAND, C.REPORT_AUDIO_ISSUE, C.EMERGENCY_STOP, C.FINISH}
)
"""What a paused exam still acts on."""


def canonical(name: str) -> CandidateCommandType | None:
    """The canonical command for any spelling, or None."""
    return canonical_command(name)


@dataclass(frozen=True, slots=True)
class GateResult:
    """The policy verdict on one command at one node."""

    allowed: bool
    reason: str | None = None
    on_violation: OnViolation = OnViolation.REFUSE_POLITELY


def gate(command: CandidateCommandType, policy: CandidateCommandPolicy) -> GateResult:
    """Whether ``policy`` (the node's effective ``candidateCommands``) accepts ``command``."""
    if command in ALWAYS_ALLOWED_COMMANDS:
        return GateResult(True)
    for forbidden in policy.forbidden:
        if forbidden.command == command:
            return GateResult(False, forbidden.reason, forbidden.onViolation)
    if command not in POLICY_VOCABULARY:
        return GateResult(True)
    if command in policy.allowed:
        return GateResult(True)
    return GateResult(False, f"'{command}' is not among the commands this part allows")
