"""Flags for the marker: what happened in the session that a human should know before signing
the marks off (``docs/spec/marking.md`` §5).

Guardrail hits, recoveries and technical problems are never silently ignored: each becomes a
:class:`Flag`. A flag is ``review`` when it may have cost the candidate marks (the affected
question ended below satisfactory, or the candidate heard something they should not have) and
``info`` otherwise; a session with a ``review`` flag goes to human moderation. Flags never
change a level: the rules of ``ioa.marking.rules`` do that, and a moderator decides the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ioa.marking.config import MarkingConfig, TargetScheme
from ioa.marking.irregularities import irregularity_reports
from ioa.marking.levels import Level
from ioa.marking.log import Guardrail, SessionLog, Utterance
from ioa.marking.rules import REVIEW_LOW_STT, REVIEW_WEAK_NEGATIVE, LevelDecision
from ioa.output_filters import FilterContext, RubricText
from ioa.output_filters.rubric_leak import RubricLeakFilter
from ioa.output_filters.text import normalise

INFO: Final = "info"
REVIEW: Final = "review"

OUTPUT_FILTERS: Final = frozenset(
    {
        "persona_break",
        "rubric_leak",
        "topic_containment",
        "length",
        "leading_question",
        "protected_text",
        "stacked_question",
    }
)
SPOKEN_AUDIT_PURPOSES: Final = frozenset({"question", "follow_up", "prompt", "recovery", "bridge"})
EARLY_ENDS: Final = frozenset({"emergency_stop", "system_error", "proctor_ended"})
LLM_CLAIM_REFUSED: Final = "llm-claim-refused:"
"""``guardrailId`` prefix of a refused LLM command claim (``ioa.runtime.observe``)."""
LLM_FAULT_PREFIX: Final = "llm_"
"""``system_error`` codes of the examiner's language-model faults (``ioa.runtime.turn_faults``)."""
_TARGET_IN_REJECTION: Final = re.compile(r"signal \d+ \(([^)]+)\) rejected")

MESSAGES: Final = {
    "intercepted_late": "An examiner text was intercepted by the {kind} filter only after the "
    "candidate had heard it",
    "output_intercepted": "The {kind} filter replaced examiner text before the candidate heard it",
    "leak_spoken": "The examiner said words of the rubric for this target",
    "stacked_question": "The examiner asked several questions in one utterance",
    "stt_evidence_rejected": "Evidence was not recorded because the answer was heard with low "
    "STT confidence (EVD-010)",
    "evidence_rejected": "A proposed signal was rejected by the runtime",
    "prompt_injection": "The candidate's turn tried to instruct the examiner; it gave no evidence",
    "llm_claim_refused": "The examiner's language model claimed a candidate command the candidate "
    "never gave; the runtime refused it",
    "llm_fault": "The examiner's language model failed a turn ({detail}); the candidate got a "
    "neutral fallback",
    "anxiety_support": "The examiner gave calm support for anxiety (POL-008)",
    "time_exhausted": "The question's time budget ran out",
    "follow_ups_exhausted": "The follow-up budget was used up",
    "off_topic_limit": "The candidate was moved on after repeated off-topic answers",
    "command_refused": "A candidate request was refused",
    "technical_recovery": "A technical problem interrupted the exam (recovery {detail})",
    "stt_recovery": "The examiner asked the candidate to repeat an unclear answer",
    "candidate_distress": "The candidate was in distress",
    "technical_error": "A system error occurred ({detail})",
    "not_reached": "The candidate never reached this question",
    "exam_ended_early": "The exam ended early ({detail})",
    "exam_timed_out": "The exam ran out of total time",
    "incomplete_log": "The log has no exam_completed event",
    "proctor_intervention": "A proctor instruction interrupted the examiner",
    "proctor_skipped": "A proctor skipped the rest of this question",
    "irregularity": "A proctor reported an irregularity",
    "time_extended": "A proctor extended the time",
    "untargeted_misconception": "A misconception was recorded without a target",
    REVIEW_LOW_STT: "The deciding evidence rests on speech heard with low STT confidence",
    REVIEW_WEAK_NEGATIVE: "A low-confidence negative signal was not applied",
    "unreadable_events": "Some events could not be read",
}


@dataclass(frozen=True, slots=True)
class Flag:
    """Something the marker should look at."""

    code: str
    severity: str
    message: str
    node_id: str | None = None
    target_keys: tuple[str, ...] = ()
    seqs: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "nodeId": self.node_id,
            "targetKeys": list(self.target_keys),
            "seqs": list(self.seqs),
        }


class _Flags:
    def __init__(
        self, config: MarkingConfig, log: SessionLog, decisions: Mapping[str, LevelDecision]
    ) -> None:
        self.config = config
        self.log = log
        self.decisions = decisions
        self.items: list[Flag] = []

    def node_targets(self, node_id: str | None) -> tuple[str, ...]:
        node = self.config.node(node_id) if node_id else None
        if node is None:
            return ()
        return tuple(t.key for t in node.targets if t.key in self.decisions)

    def affected(self, keys: Sequence[str]) -> bool:
        """Whether any of these targets ended below satisfactory."""
        return any(
            self.decisions[k].level < Level.SATISFACTORY for k in keys if k in self.decisions
        )

    def add(
        self,
        code: str,
        *,
        node_id: str | None,
        seqs: Sequence[int] = (),
        keys: Sequence[str] | None = None,
        review: bool | None = None,
        message: str | None = None,
        **fmt: str,
    ) -> None:
        targets = tuple(keys) if keys is not None else self.node_targets(node_id)
        is_review = self.affected(targets) if review is None else review
        self.items.append(
            Flag(
                code=code,
                severity=REVIEW if is_review else INFO,
                message=message or MESSAGES[code].format(**fmt),
                node_id=node_id,
                target_keys=targets,
                seqs=tuple(seqs),
            )
        )


def _spoken_before(log: SessionLog, guard: Guardrail) -> Utterance | None:
    """An utterance at the guardrail's node that contains the intercepted text (the candidate
    heard it: the interception came too late)."""
    original = normalise(guard.original_text or "")
    if len(original) < 12:
        return None
    for utterance in log.utterances:
        if utterance.node_id == guard.node_id and original in normalise(utterance.text):
            return utterance
    return None


def _guardrail_flags(flags: _Flags) -> None:
    log = flags.log
    grouped: dict[tuple[str, str | None, str], list[int]] = {}
    for guard in log.guardrails:
        kind, node = guard.guardrail_type, guard.node_id
        if guard.action == "output_replaced" or kind in OUTPUT_FILTERS:
            spoken = _spoken_before(log, guard)
            if spoken is not None:
                flags.add(
                    "intercepted_late",
                    node_id=node,
                    seqs=(spoken.seq, guard.seq),
                    review=True,
                    kind=kind,
                )
            else:
                grouped.setdefault(("output_intercepted", node, kind), []).append(guard.seq)
        elif kind == "evidence_rejected":
            match = _TARGET_IN_REJECTION.search(guard.description)
            target = flags.config.target_at(node, match.group(1)) if node and match else None
            keys = (target.key,) if target is not None else ()
            if "EVD-010" in guard.description:
                lost = any(
                    flags.decisions[k].level < Level.EXCELLENT for k in keys if k in flags.decisions
                )
                flags.add(
                    "stt_evidence_rejected",
                    node_id=node,
                    seqs=(guard.seq,),
                    keys=keys,
                    review=lost,
                )
            else:
                grouped.setdefault(("evidence_rejected", node, ""), []).append(guard.seq)
        elif kind == "blocked_action" and guard.guardrail_id.startswith("prompt-injection:"):
            flags.add("prompt_injection", node_id=node, seqs=(guard.seq,), review=True)
        elif kind == "blocked_action" and guard.guardrail_id.startswith(LLM_CLAIM_REFUSED):
            flags.add("llm_claim_refused", node_id=node, seqs=(guard.seq,), review=True)
        elif kind == "anxiety_policy":
            grouped.setdefault(("anxiety_support", node, ""), []).append(guard.seq)
        elif kind == "time_budget_exceeded":
            flags.add("time_exhausted", node_id=node, seqs=(guard.seq,), review=False)
        elif kind == "max_follow_ups":
            flags.add("follow_ups_exhausted", node_id=node, seqs=(guard.seq,), review=False)
        elif kind == "off_topic_limit":
            flags.add("off_topic_limit", node_id=node, seqs=(guard.seq,), review=False)
        elif kind == "command_refused":
            grouped.setdefault(("command_refused", node, ""), []).append(guard.seq)
        elif kind in {"forbidden_hint", "topic_drift", "unauthorized_scoring"}:
            grouped.setdefault(("output_intercepted", node, kind), []).append(guard.seq)
    for (code, node, kind), seqs in grouped.items():
        review: bool | None = (
            False
            if code
            in {"output_intercepted", "command_refused", "evidence_rejected", "anxiety_support"}
            else None
        )
        flags.add(code, node_id=node, seqs=seqs, review=review, kind=kind)


def _rubric_texts(target: TargetScheme) -> list[RubricText]:
    texts = [RubricText(target.target_id, target.description)] if target.description else []
    for item in target.descriptors:
        if item.declared:
            texts.append(RubricText(target.target_id, item.label))
            texts.append(RubricText(target.target_id, item.description))
    return texts


_LEAK_FILTER: Final = RubricLeakFilter()


def _spoken_audit(flags: _Flags) -> None:
    """Check what the candidate actually heard (``examiner_utterance_final``, as far as a
    barge-in let it play: ``Utterance.heard``): stacked questions and rubric words (chapter 05:
    marking checks for hint leaks and question fidelity)."""
    log = flags.log
    contexts: dict[str, tuple[RubricText, ...]] = {}
    for node in flags.config.nodes:
        texts: list[RubricText] = []
        for target in node.targets:
            texts.extend(_rubric_texts(target))
        contexts[node.node_id] = tuple(texts)
    for utterance in log.utterances:
        spoken_at = flags.config.node(utterance.node_id)
        if spoken_at is None or utterance.purpose not in SPOKEN_AUDIT_PURPOSES:
            continue
        node_id = spoken_at.node_id
        if utterance.heard.count("?") >= 2:
            flags.add("stacked_question", node_id=node_id, seqs=(utterance.seq,))
        said = tuple(t.text for t in log.candidate_turns(node_id) if t.seq < utterance.seq)
        context = FilterContext(
            node_id=node_id, rubric_texts=contexts[node_id], candidate_turns=said
        )
        leaked = _LEAK_FILTER.leaked_target(utterance.heard, context)
        if leaked is not None:
            found = flags.config.target_at(node_id, leaked)
            keys = (found.key,) if found is not None else flags.node_targets(node_id)
            flags.add("leak_spoken", node_id=node_id, seqs=(utterance.seq,), keys=keys, review=True)


def _operational_flags(flags: _Flags) -> None:
    log = flags.log
    for recovery in sorted(log.recoveries.values(), key=lambda r: r.seq):
        seqs = (recovery.seq,) + ((recovery.resolved_seq,) if recovery.resolved_seq else ())
        if recovery.recovery_type == "network_issue":
            flags.add(
                "technical_recovery",
                node_id=recovery.node_id,
                seqs=seqs,
                detail=f"{recovery.attempts} attempt(s), {recovery.resolution or 'unresolved'}",
            )
        elif recovery.recovery_type == "stt_low_confidence":
            flags.add("stt_recovery", node_id=recovery.node_id, seqs=seqs, review=False)
        elif recovery.recovery_type == "candidate_distress":
            flags.add("candidate_distress", node_id=recovery.node_id, seqs=seqs, review=True)
        elif recovery.recovery_type == "anxiety":
            flags.add("anxiety_support", node_id=recovery.node_id, seqs=seqs, review=False)
    for error in log.system_errors:
        if error.code.startswith(LLM_FAULT_PREFIX) and error.severity == "warning":
            flags.add(
                "llm_fault",
                node_id=error.node_id,
                seqs=(error.seq,),
                review=True,
                detail=error.code,
            )
        elif error.severity in {"error", "fatal"} or error.code == "controller_failure":
            flags.add(
                "technical_error",
                node_id=error.node_id,
                seqs=(error.seq,),
                review=True,
                detail=f"{error.component}: {error.code}",
            )
    for seq, mode, status, node in log.proctor_instructions:
        # Only an instruction the examiner actually spoke interrupted anything: one issued and
        # never delivered (cancelled at the end, or still waiting) did not.
        if mode == "immediate" and status == "delivered":
            flags.add(
                "proctor_intervention", node_id=node or log.node_at(seq), seqs=(seq,), review=False
            )
    for seq, action, _reason, node in log.proctor_actions:
        if action == "skip_node":
            flags.add("proctor_skipped", node_id=node, seqs=(seq,))
        elif action == "extend_time":
            flags.add("time_extended", node_id=node, seqs=(seq,), review=False)
    for misconception in log.misconceptions:
        if not misconception.target_ids:
            flags.add(
                "untargeted_misconception",
                node_id=misconception.node_id,
                seqs=(misconception.seq,),
                review=False,
            )
    if log.unreadable:
        flags.add("unreadable_events", node_id=None, keys=(), review=True)


def _irregularity_flags(flags: _Flags) -> None:
    """MRK-I01: every proctor's irregularity report is a ``review`` flag, whatever the levels
    (its targets and message by MRK-I02..I05, ``ioa.marking.irregularities``)."""
    for report in irregularity_reports(flags.config, flags.log, tuple(flags.decisions)):
        flags.add(
            "irregularity",
            node_id=report.node_id,
            seqs=(report.seq,),
            keys=report.target_keys,
            review=True,
            message=report.message,
        )


def _completion_flags(flags: _Flags) -> None:
    log, config = flags.log, flags.config
    for slot in config.slots:
        if not any(log.visited(n) for n in slot.node_ids):
            keys = [t.key for n in slot.node_ids for t in (config.node(n) or _EMPTY).targets]
            flags.add(
                "not_reached",
                node_id=slot.node_ids[0] if len(slot.node_ids) == 1 else None,
                keys=[k for k in keys if k in flags.decisions],
                review=True,
                message=f"The candidate never reached '{slot.title}'",
            )
    if log.completed is None:
        flags.add("incomplete_log", node_id=None, keys=(), review=True)
        return
    reason = str(log.completed.get("reason", ""))
    seqs = (log.completed_seq,) if log.completed_seq else ()
    if reason in EARLY_ENDS:
        flags.add(
            "exam_ended_early",
            node_id=None,
            keys=(),
            seqs=seqs,
            review=True,
            detail=reason.replace("_", " "),
        )
    elif reason == "time_total_exhausted":
        flags.add("exam_timed_out", node_id=None, keys=(), seqs=seqs, review=False)


class _Empty:
    targets: tuple[TargetScheme, ...] = ()


_EMPTY: Final = _Empty()


def compute_flags(
    config: MarkingConfig, log: SessionLog, decisions: Mapping[str, LevelDecision]
) -> list[Flag]:
    """Every flag of the session, in a stable order (by first seq, then code)."""
    flags = _Flags(config, log, decisions)
    _guardrail_flags(flags)
    _spoken_audit(flags)
    _operational_flags(flags)
    _irregularity_flags(flags)
    _completion_flags(flags)
    for key, decision in decisions.items():
        target = config.target(key)
        for reason in decision.review:
            if reason == "not_reached":
                continue
            flags.add(
                reason,
                node_id=target.node_id if target else None,
                keys=(key,),
                seqs=tuple(u.seq for u in decision.signals),
                review=True,
            )
    return sorted(
        flags.items, key=lambda f: (f.seqs[0] if f.seqs else 1 << 62, f.code, f.target_keys)
    )
