"""Who may cause which candidate command (our chapter 04, ``docs/spec/agent-boundary.md``).

The LLM proposes, the runtime disposes. A command reaches the runtime from four sources:

* ``envelope``: an exam-room button (a command envelope the candidate's browser sent);
* ``classifier``: the candidate's own words, read by the deterministic rule-based classifier
  (:mod:`ioa.runtime.classifier`), with the refusal rule below;
* ``llm``: the LLM's ``commandDetected`` in ``report_observation``;
* ``proctor``: a proctor's command envelope or action.

:data:`AUTHORITY` is the table. A command with consequences (:data:`CONSEQUENTIAL`: it ends,
pauses, skips, confirms, revises, switches language, or could lose evidence) needs the
candidate's own act: a button, or their words as the classifier reads them. The LLM's claim of
such a command is accepted only when the classifier reads the same command in the candidate's
latest words (:func:`judge_llm_claim`); otherwise it is refused, and the caller records a
``guardrail_triggered`` with the reason. The LLM alone may cause only :data:`HARMLESS`
commands (they change nothing but what is said next).

**A "no" always wins.** A candidate turn that declines (:func:`declines`: "No, I want to
continue", "I don't want to skip this", "not yet") causes no consequential command from the
classifier, confirms no pending finish and corroborates no LLM claim. An emergency stop is the
one exception for the candidate's own words and buttons (safety first); the LLM can never cause
it.

Pure and deterministic: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from ioa.languages import DEFAULT_LANGUAGE
from ioa.runtime.classifier import command_text, consent_vocabulary, detect_command
from ioa.schema import CandidateCommandType

C = CandidateCommandType
Source = Literal["envelope", "classifier", "llm", "proctor"]
Consent = Literal["yes", "no"]

HARMLESS: Final = frozenset(
    {C.REPEAT, C.CLARIFICATION, C.REQUEST_REPHRASE, C.SLOW_DOWN, C.THINKING_ALOUD, C.HELP}
)
"""Commands that change only what is said next: the LLM's ``commandDetected`` alone may cause
them (still subject to the node's ``candidateCommands`` policy)."""

CONSEQUENTIAL: Final = frozenset(C) - HARMLESS
"""Everything else: it ends, pauses, resumes, skips, revises, switches language, changes the
delivery, or calls the proctor. It needs the candidate's own act."""

STATEMENTS: Final = frozenset({C.REPORT_AUDIO_ISSUE, C.CHALLENGE_PREMISE, C.SIGNAL_CONFIDENCE})
"""Commands the candidate states rather than asks for: their opening negation is part of what
they say ("no le oigo bien", "no estoy de acuerdo con la premisa"), not a "no" to the command,
so :func:`declines` does not cancel them."""

PROCTOR_COMMANDS: Final = frozenset({C.PAUSE, C.RESUME, C.FINISH, C.SKIP, C.EMERGENCY_STOP})
"""What a proctor may cause (as ``proctor_action`` or a proctor command envelope)."""

AUTHORITY: Final[dict[Source, frozenset[CandidateCommandType]]] = {
    "envelope": frozenset(C),
    "classifier": frozenset(C),
    "llm": HARMLESS,
    "proctor": PROCTOR_COMMANDS,
}
"""Which source may, on its own, cause which command (node policy and exam state still apply).
An LLM claim of a command outside its row is accepted only when corroborated by the candidate's
words (:func:`judge_llm_claim`); then the candidate's words are the authority."""


def may_cause(source: Source, command: CandidateCommandType) -> bool:
    """Whether ``source`` alone may cause ``command`` (:data:`AUTHORITY`)."""
    return command in AUTHORITY[source]


_KEEP_GOING_DECLINES: Final = frozenset({C.FINISH, C.SKIP, C.PAUSE, C.LANGUAGE_SWITCH})
"""Commands that "I want to continue" declines (resume is not among them: it *is* continuing)."""


def declines(
    text: str, command: CandidateCommandType | None = None, language: str = DEFAULT_LANGUAGE
) -> bool:
    """Whether the candidate's ``text`` (in the exam's ``language``) says no: an opening "no"
    (not "no idea"), a negated wish ("I do not want to finish", "I'm not ready"), or, for
    finish/skip/pause/language, wanting to go on ("No, I want to continue"). Never true for an
    emergency stop."""
    if command is C.EMERGENCY_STOP:
        return False
    said = command_text(text)
    if not said:
        return False
    words = consent_vocabulary(language)
    if words.no_opening.search(said) or words.negated_wish.search(said):
        return True
    return (command is None or command in _KEEP_GOING_DECLINES) and bool(
        words.keep_going.search(said)
    )


def read_consent(text: str, language: str = DEFAULT_LANGUAGE) -> Consent | None:
    """The candidate's answer to a yes/no question (the finish confirmation): ``no`` wins over
    ``yes``; None when the words are neither."""
    said = command_text(text)
    if declines(said, C.FINISH, language):
        return "no"
    if consent_vocabulary(language).yes.search(said) or detect_command(said, language) is C.FINISH:
        return "yes"
    return None


def candidate_command(
    text: str,
    language: str = DEFAULT_LANGUAGE,
    *,
    detect: Callable[[str, str], CandidateCommandType | None] = detect_command,
) -> CandidateCommandType | None:
    """The command the candidate's own words clearly are (the classifier, or ``detect``: the
    trainer measures a model it has not written yet through it), unless they decline it ("I
    don't want to skip this question" is no skip). The classifier's reading of a text is
    cached (:func:`_classified`): the runtime reads a candidate turn when it arrives
    (``ioa.runtime.transcripts``), so the observation that answers it finds it read."""
    if detect is detect_command:
        return _classified(text, language)
    return _command_unless_declined(text, language, detect)


@lru_cache(maxsize=2048)
def _classified(text: str, language: str) -> CandidateCommandType | None:
    """:func:`candidate_command` with the classifier (pure, so cached by its inputs)."""
    return _command_unless_declined(text, language, detect_command)


def _command_unless_declined(
    text: str, language: str, detect: Callable[[str, str], CandidateCommandType | None]
) -> CandidateCommandType | None:
    found = detect(text, language)
    if found is None or (
        found in CONSEQUENTIAL and found not in STATEMENTS and declines(text, found, language)
    ):
        return None
    return found


@dataclass(frozen=True, slots=True)
class ClaimVerdict:
    """The runtime's verdict on an LLM ``commandDetected`` claim."""

    allowed: bool
    reason: str = ""
    corroborated: bool = False
    """Accepted because the candidate's own words say the same (not on the LLM's word)."""


def judge_llm_claim(
    command: CandidateCommandType,
    candidate_texts: Sequence[str],
    *,
    pending: CandidateCommandType | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> ClaimVerdict:
    """Whether the LLM's claim that the candidate asked for ``command`` may stand.

    ``candidate_texts`` are the candidate's turns the claim is about (the latest answer), oldest
    first. A harmless command stands on the LLM's word; a "no" in any of them refuses every
    other claim; a consequential one stands only when the classifier reads it in the latest
    turn (or, while that command awaits the candidate's confirmation, ``pending``, when the
    latest turn says yes)."""
    texts = [t for t in candidate_texts if t.strip()]
    if not texts:
        return ClaimVerdict(False, "the candidate said nothing that could be this command")
    if command in HARMLESS:
        return ClaimVerdict(True)
    if any(declines(t, command, language) for t in texts):
        return ClaimVerdict(False, "the candidate said no")
    latest = texts[-1]
    if command is pending:
        if read_consent(latest, language) == "yes":
            return ClaimVerdict(True, corroborated=True)
        return ClaimVerdict(False, f"the candidate did not confirm '{command.value}'")
    if candidate_command(latest, language) is command:
        return ClaimVerdict(True, corroborated=True)
    return ClaimVerdict(
        False,
        f"'{command.value}' has consequences and the candidate's own words do not ask for it",
    )
