"""Grounded questions in marking (issue #35, docs/spec/candidate-materials.md §7): for each
node that asked about the candidate's own material, the passage it drew, the question the
examiner asked, the candidate's answer and the evidence tied to the passage (``passageId``).

The cohort list (:func:`unexplained`) names candidates whose grounded targets were not
evidenced: a prompt for a human conversation about their own work, never a verdict of
misconduct (the log cannot tell a nervous candidate from one who did not write the work).
Reads only; the log comes through ``marking.selectors.marking_events`` (erased passages read as
the erasure marker, as every personal field does).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from ioa.marking.log import SessionLog, read_log
from marking.models import SessionMark
from marking.selectors import marking_events, scheme_config


@dataclass(frozen=True, slots=True)
class GroundedQuestion:
    """One grounded node of a session as the marker reviews it."""

    node_id: str
    outcome: str
    """``drawn``, ``no_material`` or ``no_passage`` (the fallback question was asked)."""
    passage_id: str | None
    cue: str | None
    passage: str | None
    questions: list[str]
    answers: list[str]
    evidence: list[tuple[str, str, str]]
    """(target id, kind, excerpt) of each signal tied to the passage."""
    targets: list[str]
    """The node's evidence targets."""

    @property
    def unevidenced(self) -> list[str]:
        """The node's targets no positive signal tied to the passage covers."""
        shown = {target for target, kind, _ in self.evidence if kind == "positive"}
        return [target for target in self.targets if target not in shown]


def _question(log: SessionLog, node_id: str, targets: list[str]) -> GroundedQuestion:
    drawn = log.passages[node_id]
    signals = [
        s
        for s in log.signals.values()
        if s.node_id == node_id and drawn.passage_id and s.passage_id == drawn.passage_id
    ]
    return GroundedQuestion(
        node_id=node_id,
        outcome=drawn.outcome,
        passage_id=drawn.passage_id,
        cue=drawn.cue,
        passage=drawn.text,
        questions=[u.text for u in log.utterances if u.node_id == node_id and u.text],
        answers=[
            log.turns[t].text
            for t in log.turn_order
            if log.turns[t].node_id == node_id and log.turns[t].speaker == "candidate"
        ],
        evidence=[(s.target_id, s.kind, s.excerpt) for s in signals],
        targets=targets,
    )


def grounded_questions(mark: SessionMark) -> list[GroundedQuestion]:
    """The session's grounded questions, in the order they were asked (none: no grounded node
    was reached)."""
    log = read_log(marking_events(mark.session_id, until_seq=mark.marked_seq))
    if not log.passages:
        return []
    config = scheme_config(mark.scheme)
    by_node: dict[str, list[str]] = {}
    for target in config.targets():
        by_node.setdefault(target.node_id, []).append(target.target_id)
    ordered = sorted(log.passages.values(), key=lambda p: p.seq)
    return [_question(log, p.node_id, by_node.get(p.node_id, [])) for p in ordered]


@dataclass(frozen=True, slots=True)
class ConversationPrompt:
    """A candidate whose explanation of their own work left grounded targets unevidenced."""

    session_id: uuid.UUID
    candidate: str
    passages: list[str]
    targets: list[str]


def unexplained(marks: Iterable[SessionMark]) -> list[ConversationPrompt]:
    """Candidates (of ``marks``) with a grounded target not evidenced at a drawn passage."""
    prompts = []
    for mark in marks:
        asked = [q for q in grounded_questions(mark) if q.outcome == "drawn" and q.unevidenced]
        if asked:
            prompts.append(
                ConversationPrompt(
                    session_id=mark.session_id,
                    candidate=mark.session.candidate.username,
                    passages=[q.passage or "" for q in asked],
                    targets=[t for q in asked for t in q.unevidenced],
                )
            )
    return prompts
