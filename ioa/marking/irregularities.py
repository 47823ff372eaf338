"""Proctors' irregularity reports as the marker reads them (``docs/spec/marking.md`` §5.1,
rules MRK-I01..I06).

A proctor reports an irregularity with a ``proctor_action`` event (``action:
flag_irregularity``, a ``category``, the proctor as ``actor`` and their ``reason``). The marker
never changes a level because of one (flags never do, §0); it makes sure a human decides:

* MRK-I01 — every report is a ``review`` flag, whatever the levels: the session cannot be
  released without a moderator;
* MRK-I02 — ``technical``: the transcript rows of the node visit the report was made in are
  *affected by a technical irregularity*, and so are that node's targets, so the marker can
  discount them;
* MRK-I03 — ``candidate``: academic-integrity review of every target of the session;
* MRK-I04 — ``staff``, ``environment`` (and a report without a category): a review note on the
  node's targets;
* MRK-I05 — a report stored after ``exam_completed`` names no point in the exam: it concerns
  every target, and no turn is marked as affected.

MRK-I06 (a report stored after the session was marked) is the marking app's
(``marking.services.irregularity_record``); it reads such a report with this module too.

:func:`irregularity_reports` is pure and deterministic: the same log gives the same reports,
in ``seq`` order, with the same messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ioa.marking.config import MarkingConfig
from ioa.marking.log import Irregularity, SessionLog, Visit

TECHNICAL: Final = "technical"
ACADEMIC_INTEGRITY: Final = "academic_integrity"
REVIEW_NOTE: Final = "review_note"

ROUTES: Final = {
    "technical": TECHNICAL,
    "candidate": ACADEMIC_INTEGRITY,
    "staff": REVIEW_NOTE,
    "environment": REVIEW_NOTE,
}
"""The review a category asks for (a report without a known category: :data:`REVIEW_NOTE`)."""

ROUTE_LABELS: Final = {
    TECHNICAL: "Affected by a technical irregularity: discount the affected turns if needed",
    ACADEMIC_INTEGRITY: "Academic-integrity review",
    REVIEW_NOTE: "Review note",
}


def when_text(timestamp: str) -> str:
    """``2026-01-05T09:00:00.000Z`` → ``2026-01-05 09:00:00 UTC`` (seconds are enough for a
    person); anything else is returned as it is."""
    if len(timestamp) >= 19 and timestamp[10] == "T":
        zone = " UTC" if timestamp.endswith("Z") or timestamp.endswith("+00:00") else ""
        return f"{timestamp[:10]} {timestamp[11:19]}{zone}"
    return timestamp or "an unknown time"


@dataclass(frozen=True, slots=True)
class IrregularityReport:
    """One report as the marker judged it: where it points and what a human must do."""

    irregularity: Irregularity
    node_title: str | None
    route: str
    target_keys: tuple[str, ...]
    """The targets it may have affected (MRK-I02..I05)."""
    affected_turn_ids: tuple[str, ...]
    """``technical`` only: the transcript rows (both voices) of the node visit it was made in."""

    @property
    def seq(self) -> int:
        return self.irregularity.seq

    @property
    def node_id(self) -> str | None:
        """The node the report points at; None when it points at none (MRK-I05)."""
        item = self.irregularity
        return None if item.after_completion else item.node_id

    @property
    def message(self) -> str:
        """One sentence for the marker: category, time, proctor, where, the proctor's words and
        what to do."""
        item = self.irregularity
        what = (
            f"{item.category.capitalize()} irregularity"
            if item.category
            else "Irregularity (no category)"
        )
        if item.after_completion:
            where = "after the exam ended"
        elif item.node_id is None:
            where = "before any question"
        else:
            title = self.node_title or item.node_id
            where = f"during '{title}' ({item.node_id})"
        said = f'"{item.reason}"' if item.reason else "no reason given"
        text = (
            f"{what} reported by proctor {item.actor or 'unknown'} at "
            f"{when_text(item.timestamp)} {where}: {said}."
        )
        if self.route == TECHNICAL:
            if self.affected_turn_ids:
                return (
                    f"{text} Affected by a technical irregularity: "
                    f"{', '.join(self.affected_turn_ids)}; discount them where they cost the "
                    "candidate marks."
                )
            return f"{text} No turn could be tied to it: check the recording before signing off."
        if self.route == ACADEMIC_INTEGRITY:
            return (
                f"{text} Academic-integrity review: no mark of this session may be released "
                "before a moderator has decided."
            )
        return f"{text} Review note: check whether it affected the answers before signing off."

    def to_dict(self) -> dict[str, Any]:
        item = self.irregularity
        return {
            "eventId": item.event_id,
            "seq": item.seq,
            "timestamp": item.timestamp,
            "category": item.category,
            "actor": item.actor,
            "reason": item.reason,
            "nodeId": item.node_id,
            "nodeTitle": self.node_title,
            "afterCompletion": item.after_completion,
            "route": self.route,
            "targetKeys": list(self.target_keys),
            "affectedTurnIds": list(self.affected_turn_ids),
            "message": self.message,
        }


def _visit_of(log: SessionLog, node_id: str, seq: int) -> Visit | None:
    """The stay at ``node_id`` open at ``seq``, else the latest one entered before it."""
    before = [v for v in log.visits if v.node_id == node_id and v.entered_seq <= seq]
    for visit in reversed(before):
        if visit.exited_seq is None or visit.exited_seq >= seq:
            return visit
    return before[-1] if before else None


def _rows_of(log: SessionLog, visit: Visit) -> tuple[str, ...]:
    """The transcript rows of one stay at a node (turns and utterances, in seq order)."""
    end = visit.exited_seq if visit.exited_seq is not None else 1 << 62
    rows = [
        (turn.seq, turn.turn_id)
        for turn in log.turns.values()
        if turn.node_id == visit.node_id and visit.entered_seq <= turn.seq <= end
    ]
    rows.extend(
        (u.seq, u.utterance_id)
        for u in log.utterances
        if u.node_id == visit.node_id and visit.entered_seq <= u.seq <= end
    )
    return tuple(dict.fromkeys(row_id for _, row_id in sorted(rows)))


def irregularity_reports(
    config: MarkingConfig, log: SessionLog, scored_keys: Sequence[str]
) -> tuple[IrregularityReport, ...]:
    """Every irregularity report of the log in ``seq`` order, judged by MRK-I02..I05.

    ``scored_keys`` are the keys of the targets the session is marked on (in marking order);
    a report's targets are drawn from them only.
    """
    everything = tuple(scored_keys)
    scored = set(everything)
    reports: list[IrregularityReport] = []
    for item in log.irregularities:
        node = config.node(item.node_id) if item.node_id else None
        route = ROUTES.get(item.category or "", REVIEW_NOTE)
        node_keys = tuple(t.key for t in node.targets if t.key in scored) if node else ()
        turns: tuple[str, ...] = ()
        if item.after_completion or item.node_id is None:
            keys = everything  # MRK-I05: no point in the exam to tie it to
        elif route == ACADEMIC_INTEGRITY:
            keys = everything  # MRK-I03
        else:
            keys = node_keys  # MRK-I02, MRK-I04
            if route == TECHNICAL:
                visit = _visit_of(log, item.node_id, item.seq)
                turns = _rows_of(log, visit) if visit is not None else ()
        reports.append(
            IrregularityReport(
                irregularity=item,
                node_title=node.title if node else None,
                route=route,
                target_keys=keys,
                affected_turn_ids=turns,
            )
        )
    return tuple(sorted(reports, key=lambda r: r.seq))
