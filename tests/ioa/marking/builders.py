"""A small builder of stored event logs (wire envelopes with seq) for the marking rules."""

from __future__ import annotations

from typing import Any

from ioa.marking import MarkingConfig, compile_marking
from ioa.schema import load_package
from tests.ioa.builders import example

SID = "0192f3a0-0000-7000-8000-0000000000aa"


def cs201() -> MarkingConfig:
    return compile_marking(load_package(example()))


class Log:
    """Appends events in order; ``seq`` counts from 1."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.turns = 0
        self.signals = 0
        self.node: str | None = None

    def add(self, type_: str, **payload: Any) -> int:
        seq = len(self.events) + 1
        self.events.append(
            {
                "eventId": f"e{seq}",
                "sessionId": SID,
                "seq": seq,
                "timestamp": "2026-01-05T09:00:00.000Z",
                "source": "runtime_controller",
                "type": type_,
                "payload": {"type": type_, **payload},
                "schemaVersion": "1",
            }
        )
        return seq

    def enter(self, node: str, kind: str = "question") -> Log:
        if self.node is not None:
            self.exit()
        self.node = node
        self.add(
            "node_entered",
            nodeId=node,
            nodeKind=kind,
            rubricItemIds=[],
            maxFollowUps=3,
            timeBudgetSec=360,
            timeBudgetMs=360000,
        )
        return self

    def exit(self, reason: str = "completed", duration: float = 60.0, follow_ups: int = 0) -> Log:
        assert self.node is not None
        self.add(
            "node_exited",
            nodeId=self.node,
            reason=reason,
            durationSec=duration,
            followUpsUsed=follow_ups,
        )
        self.node = None
        return self

    def say(self, text: str, purpose: str = "question", *, heard: str | None = None) -> int:
        """The examiner's utterance; ``heard``: the candidate's speech cut it off after these
        words (a barge-in: ``interrupted`` with ``spokenText``)."""
        cut = {} if heard is None else {"interrupted": True, "interruptedAtMs": 900}
        if heard is not None:
            cut["spokenText"] = heard
        return self.add(
            "examiner_utterance_final",
            utteranceId=f"utt-{len(self.events)}",
            nodeId=self.node,
            text=text,
            purpose=purpose,
            durationMs=2000,
            **cut,
        )

    def turn(self, text: str, confidence: float = 0.93) -> str:
        self.turns += 1
        turn_id = f"turn-{self.turns:03d}"
        self.add(
            "transcript_final",
            turnId=turn_id,
            speaker="candidate",
            text=text,
            startTimeMs=1000 * self.turns,
            endTimeMs=1000 * self.turns + 500,
            nodeId=self.node,
            confidence=confidence,
            language="en",
        )
        return turn_id

    def signal(
        self,
        target: str,
        kind: str,
        confidence: float = 0.9,
        *,
        turns: list[str] | None = None,
        stt: float = 0.93,
        signal_id: str | None = None,
        **extra: Any,
    ) -> str:
        if signal_id is None:
            self.signals += 1
            signal_id = f"sig-{self.signals:03d}"
        turn_ids = turns or [f"turn-{self.turns:03d}"]
        self.add(
            "evidence_signal",
            signalId=signal_id,
            nodeId=self.node,
            turnIds=turn_ids,
            targetIds=[target],
            evidenceDimension="knowledge_understanding",
            signalKind=kind,
            description=f"{kind} for '{target}'",
            confidence=confidence,
            sttConfidenceSummary={"min": stt, "max": stt, "mean": stt, "turnCount": 1},
            llmProposal=True,
            **extra,
        )
        return signal_id

    def follow_up(self, reason: str = "evidence_gap") -> int:
        count = sum(1 for e in self.events if e["type"] == "follow_up_used") + 1
        return self.add(
            "follow_up_used",
            nodeId=self.node,
            followUpIndex=count,
            maxFollowUps=3,
            reason=reason,
            triggerTurnId=f"turn-{self.turns:03d}",
        )

    def misconception(
        self, target: str, confidence: float = 0.8, signal_id: str | None = None
    ) -> int:
        return self.add(
            "misconception_detected",
            nodeId=self.node,
            misconceptionId=f"misc-{len(self.events):03d}",
            description="x: y (z)",
            turnIds=[f"turn-{self.turns:03d}"],
            targetIds=[target],
            confidence=confidence,
            **({"signalId": signal_id} if signal_id else {}),
        )

    def guardrail(
        self,
        kind: str,
        description: str = "fired",
        action: str = "event_only",
        guardrail_id: str | None = None,
        **extra: Any,
    ) -> int:
        return self.add(
            "guardrail_triggered",
            guardrailId=guardrail_id or f"{kind}:{len(self.events)}",
            guardrailType=kind,
            severity="warning",
            description=description,
            actionTaken=action,
            contextNodeId=self.node,
            **extra,
        )

    def irregularity(
        self,
        category: str | None,
        reason: str = "",
        *,
        actor: str = "user:7",
        at: str = "2026-01-05T09:04:05.123Z",
        node: str | None = "current",
    ) -> int:
        """A proctor's ``flag_irregularity`` report stored at ``at`` (``node="current"``: the
        node the log is in, as the controller records it; None: no ``nodeId``)."""
        payload: dict[str, Any] = {"actor": actor, "action": "flag_irregularity"}
        if reason:
            payload["reason"] = reason
        if category is not None:
            payload["category"] = category
        where = self.node if node == "current" else node
        if where is not None:
            payload["nodeId"] = where
        seq = self.add("proctor_action", **payload)
        self.events[-1]["timestamp"] = at
        self.events[-1]["source"] = "system"
        return seq

    def complete(self, reason: str = "all_nodes_visited") -> Log:
        if self.node is not None:
            self.exit()
        self.add(
            "exam_completed",
            reason=reason,
            totalTurns=self.turns,
            totalElapsedMs=600000,
            totalDurationSec=600,
            nodesVisited=[],
            totalEvidenceSignals=self.signals,
            totalFollowUps=0,
            guardrailTriggerCount=0,
        )
        return self


def dijkstra() -> Log:
    """A log at q-dijkstra, ready for turns and signals."""
    return Log().enter("warmup", "warmup").enter("q-dijkstra")
