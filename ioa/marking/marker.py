"""The deterministic marker: a session's event log + the marking configuration → marks.

:func:`mark` replays the log (``ioa.marking.log``), decides a level per evidence target
(``ioa.marking.rules``), computes weighted node, slot, exam, learning-outcome and dimension
scores (:func:`compute_scores`, reused when a moderator overrides a level), raises the flags of
``ioa.marking.flags`` and measures the interaction for fairness analysis. Pure and
deterministic: the same log and configuration give byte-identical :meth:`MarkingResult.to_dict`
output (checked by the tests and by the stored checksum).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ioa.marking.config import MarkingConfig, TargetScheme
from ioa.marking.flags import REVIEW, Flag, compute_flags
from ioa.marking.irregularities import IrregularityReport, irregularity_reports
from ioa.marking.levels import Level
from ioa.marking.log import SessionLog, Utterance, read_log
from ioa.marking.rules import LevelDecision, decide_level

RESULT_VERSION: Final = "ioa-marking-result/1"


def _r(value: float) -> float:
    return round(value, 6)


@dataclass(frozen=True, slots=True)
class TargetMark:
    """The deterministic decision for one target."""

    target: TargetScheme
    slot_id: str
    decision: LevelDecision

    @property
    def key(self) -> str:
        return self.target.key

    @property
    def level(self) -> Level:
        return self.decision.level


@dataclass(frozen=True, slots=True)
class Scores:
    """Weighted scores in [0, 1] (``None``: nothing to score)."""

    nodes: dict[str, float]
    slots: dict[str, float]
    exam: float
    outcomes: dict[str, float | None]
    dimensions: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": dict(self.nodes),
            "slots": dict(self.slots),
            "exam": self.exam,
            "outcomes": dict(self.outcomes),
            "dimensions": dict(self.dimensions),
        }


@dataclass(frozen=True, slots=True)
class MarkingResult:
    """Everything the marker decided about one session."""

    session_id: str
    last_seq: int
    completed: bool
    visited_nodes: tuple[str, ...]
    targets: tuple[TargetMark, ...]
    scores: Scores
    flags: tuple[Flag, ...]
    metrics: dict[str, Any]
    transcript: tuple[dict[str, Any], ...] = field(default=())
    compiler_version: str = ""
    irregularities: tuple[IrregularityReport, ...] = field(default=())
    """Proctors' irregularity reports (MRK-I01..I05), in seq order."""

    @property
    def needs_review(self) -> bool:
        return any(f.severity == REVIEW for f in self.flags)

    def levels(self) -> dict[str, Level]:
        return {t.key: t.level for t in self.targets}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, stable key and list order (canonical-JSON ready). ``irregularities`` is
        present only when a proctor reported one, so the results of sessions without a report
        keep the bytes (and stored checksums) of earlier versions of the marker."""
        document = {
            "resultVersion": RESULT_VERSION,
            "compilerVersion": self.compiler_version,
            "sessionId": self.session_id,
            "lastSeq": self.last_seq,
            "completed": self.completed,
            "visitedNodes": list(self.visited_nodes),
            "targets": [_target_dict(t) for t in self.targets],
            "scores": self.scores.to_dict(),
            "flags": [f.to_dict() for f in self.flags],
            "needsReview": self.needs_review,
            "metrics": self.metrics,
            "transcript": list(self.transcript),
        }
        if self.irregularities:
            document["irregularities"] = [r.to_dict() for r in self.irregularities]
        return document


def _target_dict(mark: TargetMark) -> dict[str, Any]:
    d = mark.decision
    return {
        "key": mark.key,
        "targetId": mark.target.target_id,
        "nodeId": mark.target.node_id,
        "slotId": mark.slot_id,
        "label": mark.target.label,
        "weight": mark.target.weight,
        "level": d.level.label,
        "points": d.level.points,
        "score": d.level.score,
        "rationale": d.rationale,
        "rules": [{"ruleId": h.rule_id, "text": h.text} for h in d.rules],
        "signals": [
            {
                "signalId": u.signal_id,
                "kind": u.kind,
                "confidence": u.confidence,
                "sttMin": u.stt_min,
                "scaffolding": u.scaffolding,
                "turnIds": list(u.turn_ids),
                "seq": u.seq,
                "level": u.level.label if u.level is not None else None,
                "role": u.role,
                "notes": list(u.notes),
            }
            for u in d.signals
        ],
        "turnIds": list(d.turn_ids),
        "misconceptionIds": list(d.misconception_ids),
        "hesitationTurnIds": list(d.hesitation_turn_ids),
        "review": list(d.review),
    }


def scored_targets(config: MarkingConfig, visited: Iterable[str]) -> list[tuple[str, TargetScheme]]:
    """(slot id, target) of every target the session is marked on: the targets of the visited
    member of each slot; for a slot never reached, its node's targets (a single node) or none
    (a pool: which member would have been asked is unknown)."""
    seen = set(visited)
    out: list[tuple[str, TargetScheme]] = []
    for slot in config.slots:
        members = [n for n in slot.node_ids if n in seen] or (
            [] if slot.is_pool else list(slot.node_ids)
        )
        for node_id in members[:1]:
            node = config.node(node_id)
            if node is not None:
                out.extend((slot.slot_id, t) for t in node.targets)
    return out


def compute_scores(
    config: MarkingConfig, levels: Mapping[str, Level], visited: Iterable[str]
) -> Scores:
    """Weighted scores for ``levels`` (target key → level); a target without a level counts
    as absent. Node score: Σ target weight * level score; slot score: its visited node's (0 when
    never reached); exam: Σ slot weight * slot score; outcomes and dimensions: the weighted mean
    of their targets' scores (weight = slot weight * target weight)."""
    targets = scored_targets(config, visited)
    nodes: dict[str, float] = {}
    slot_of_node: dict[str, str] = {}
    for slot_id, target in targets:
        score = levels.get(target.key, Level.ABSENT).score
        nodes[target.node_id] = nodes.get(target.node_id, 0.0) + target.weight * score
        slot_of_node[target.node_id] = slot_id
    nodes = {k: _r(v) for k, v in nodes.items()}
    slots: dict[str, float] = {slot.slot_id: 0.0 for slot in config.slots}
    for node_id, score in nodes.items():
        slots[slot_of_node[node_id]] = score
    exam = _r(sum(slot.weight * slots[slot.slot_id] for slot in config.slots))
    slot_weight = {slot.slot_id: slot.weight for slot in config.slots}
    sums: dict[tuple[str, str], list[float]] = {}
    for slot_id, target in targets:
        weight = slot_weight[slot_id] * target.weight
        score = levels.get(target.key, Level.ABSENT).score
        for group in [("outcome", o) for o in target.outcome_ids] + [
            ("dimension", target.dimension)
        ]:
            acc = sums.setdefault(group, [0.0, 0.0])
            acc[0] += weight * score
            acc[1] += weight
    outcomes: dict[str, float | None] = {o.outcome_id: None for o in config.outcomes}
    dimensions: dict[str, float] = {}
    for (kind, name), (total, weight) in sorted(sums.items()):
        value = _r(total / weight) if weight > 0 else 0.0
        if kind == "outcome":
            outcomes[name] = value
        else:
            dimensions[name] = value
    return Scores(
        nodes=nodes,
        slots={k: _r(v) for k, v in slots.items()},
        exam=exam,
        outcomes=outcomes,
        dimensions=dimensions,
    )


def session_metrics(config: MarkingConfig, log: SessionLog) -> dict[str, Any]:
    """Interaction measures for fairness across candidates (chapter 05 §4.15)."""
    assessed = {n.node_id for n in config.nodes}
    follow_ups: dict[str, int] = {}
    node_time: dict[str, float] = {}
    for visit in log.visits:
        if visit.node_id not in assessed:
            continue
        follow_ups.setdefault(visit.node_id, 0)
        if visit.duration_sec is not None:
            node_time[visit.node_id] = _r(node_time.get(visit.node_id, 0.0) + visit.duration_sec)
    for item in log.follow_ups:
        if item.node_id in assessed:
            follow_ups[item.node_id] = follow_ups.get(item.node_id, 0) + 1
    completed = log.completed or {}
    interaction = completed.get("interactionMetrics") or {}
    counts = list(follow_ups.values())
    if len(counts) >= 2 and statistics.fmean(counts) > 0:
        cv = statistics.pstdev(counts) / statistics.fmean(counts)
        consistency = _r(max(0.0, min(1.0, 1.0 - cv)))
    else:
        consistency = 1.0
    total = completed.get("totalDurationSec")
    latency = interaction.get("averageCandidateResponseLatencyMs")
    return {
        "followUpsPerNode": follow_ups,
        "nodeTimeSec": node_time,
        "totalFollowUps": sum(counts),
        "probingConsistency": consistency,
        "totalTimeSec": _r(float(total)) if isinstance(total, int | float) else None,
        "candidateTurns": len(log.candidate_turns()),
        "averageResponseLatencyMs": (
            _r(float(latency)) if isinstance(latency, int | float) else None
        ),
        "hesitations": len(log.hesitations),
        "guardrails": len(log.guardrails),
        "recoveries": len(log.recoveries),
        "completionReason": completed.get("reason"),
    }


def _utterance_row(utterance: Utterance) -> dict[str, Any]:
    """The examiner's line as the candidate heard it; an interrupted one says so and keeps
    the full validated text beside (``fullText``)."""
    row: dict[str, Any] = {
        "seq": utterance.seq,
        "id": utterance.utterance_id,
        "speaker": "examiner",
        "nodeId": utterance.node_id,
        "text": utterance.heard,
        "purpose": utterance.purpose,
    }
    if utterance.interrupted:
        row.update({"interrupted": True, "fullText": utterance.text})
    return row


def _transcript(log: SessionLog) -> tuple[dict[str, Any], ...]:
    """Both voices in order: candidate turns (``transcript_final``) and what the examiner said
    (``examiner_utterance_final``, as heard: :func:`_utterance_row`), each with its seq; the
    candidate's with STT confidence, a misheard turn with ``correctedBy`` and the candidate's
    correction of it with ``correction`` (``typed``/``confirmed``)."""
    rows: list[dict[str, Any]] = []
    for turn_id in log.turn_order:
        turn = log.turns[turn_id]
        row: dict[str, Any] = {
            "seq": turn.seq,
            "id": turn.turn_id,
            "speaker": turn.speaker,
            "nodeId": turn.node_id,
            "text": turn.text,
            "confidence": turn.confidence,
        }
        if turn.corrected_by is not None:
            row["correctedBy"] = turn.corrected_by
        if turn.correction is not None:
            row["correction"] = turn.correction
        rows.append(row)
    rows.extend(_utterance_row(u) for u in log.utterances)
    rows.sort(key=lambda r: (r["seq"], r["id"]))
    # an examiner transcript_final and its utterance may both exist; keep the utterance
    return tuple(rows)


def mark_log(
    config: MarkingConfig, log: SessionLog, *, with_transcript: bool = True
) -> MarkingResult:
    """Mark a session already read into a :class:`SessionLog`."""
    visited = tuple(dict.fromkeys(v.node_id for v in log.visits))
    marks: list[TargetMark] = []
    for slot_id, target in scored_targets(config, visited):
        marks.append(TargetMark(target, slot_id, decide_level(target, log, config.rules)))
    decisions = {m.key: m.decision for m in marks}
    scores = compute_scores(config, {m.key: m.level for m in marks}, visited)
    flags = compute_flags(config, log, decisions)
    return MarkingResult(
        session_id=log.session_id,
        last_seq=log.last_seq,
        completed=log.completed is not None,
        visited_nodes=visited,
        targets=tuple(marks),
        scores=scores,
        flags=tuple(flags),
        metrics=session_metrics(config, log),
        transcript=_transcript(log) if with_transcript else (),
        compiler_version=config.compiler_version,
        irregularities=irregularity_reports(config, log, tuple(decisions)),
    )


def mark(
    config: MarkingConfig, events: Iterable[Mapping[str, Any]], *, with_transcript: bool = True
) -> MarkingResult:
    """Mark a session from its stored envelopes (in seq order)."""
    return mark_log(config, read_log(events), with_transcript=with_transcript)
