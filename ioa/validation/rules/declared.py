"""Rule ids this validator does not evaluate itself, with who enforces them.

They are recorded so the catalogue (``docs/spec/validation-rules.md``) lists every id of
chapter 08, and so every ``ruleId`` a report can contain is in the registry. The adapter-phase
ids are placeholders that ``ioa.validation.rules.adapter`` replaces when it is installed; the
VAL-* ids are the findings the pipeline itself emits.
"""

from __future__ import annotations

from typing import Final

from ioa.validation.findings import Phase, Severity
from ioa.validation.registry import PUBLISH, PUBLISH_AND_RUNTIME, RUNTIME, declare

EVIDENCE_LEDGER: Final = "runtime — enforced by the Runtime Controller's evidence ledger"
EVENT_STORE: Final = "runtime — enforced by the event emitter and the Event Store"
OUTPUT_FILTERS: Final = "runtime — enforced by the Runtime Controller's output validation filters"
ADAPTER_RULES: Final = "adapter step — enforced by ioa.validation.rules.adapter (not installed)"
VERSIONING: Final = "runtime — enforced by ioa.versioning.SupportPolicy and the ioa.schema loader"
PIPELINE: Final = "emitted by the validation pipeline (ioa.validation.pipeline)"


def _runtime(rule_id: str, phase: Phase, severity: Severity, summary: str, by: str) -> None:
    declare(
        rule_id,
        phase=phase,
        severity=severity,
        summary=summary,
        enforced_by=by,
        stages=RUNTIME,
        module=__name__,
    )


def _adapter(rule_id: str, summary: str) -> None:
    declare(
        rule_id,
        phase=Phase.ADAPTER,
        severity=Severity.ERROR,
        summary=summary,
        enforced_by=ADAPTER_RULES,
        stages=PUBLISH,
        module=__name__,
    )


_runtime(
    "EVD-008",
    Phase.RUNTIME,
    Severity.ERROR,
    (
        "Evidence signal signalKind MUST be one of positive, partial, absent, misconception, "
        "flawed_reasoning, process_positive, process_negative, self_correction."
    ),
    EVIDENCE_LEDGER,
)

_runtime(
    "EVD-009",
    Phase.RUNTIME,
    Severity.ERROR,
    (
        "Evidence ledger writes MUST include signalId, nodeId, sessionId, signalKind, "
        "confidence, timestampMs and turnIds."
    ),
    EVIDENCE_LEDGER,
)

_runtime(
    "EVD-010",
    Phase.RUNTIME,
    Severity.ERROR,
    (
        "Evidence MUST NOT be recorded from transcript segments with STT confidence < 0.5; "
        "each signal carries an sttConfidenceSummary."
    ),
    EVIDENCE_LEDGER,
)

_runtime(
    "EVT-001",
    Phase.RUNTIME,
    Severity.ERROR,
    "Every emitted event MUST include event type, sessionId and timestamp.",
    EVENT_STORE,
)

_runtime(
    "EVT-002",
    Phase.RUNTIME,
    Severity.ERROR,
    "timestamp MUST be ISO 8601 with a time zone.",
    EVENT_STORE,
)

_runtime(
    "EVT-003",
    Phase.RUNTIME,
    Severity.ERROR,
    ("Events MUST be emitted in causal order per session (node_entered before its evidence)."),
    EVENT_STORE,
)

_runtime(
    "EVT-004",
    Phase.RUNTIME,
    Severity.ERROR,
    "node_entered MUST include nodeId, nodeKind and timeBudgetMs (and timeBudgetSec).",
    EVENT_STORE,
)

_runtime(
    "EVT-005",
    Phase.RUNTIME,
    Severity.ERROR,
    "evidence_signal MUST include signalId, nodeId and signalKind.",
    EVENT_STORE,
)

_runtime(
    "EVT-006",
    Phase.RUNTIME,
    Severity.ERROR,
    "node_exited MUST include nodeId and reason.",
    EVENT_STORE,
)

_runtime(
    "EVT-007",
    Phase.RUNTIME,
    Severity.ERROR,
    "candidate_command_received MUST include a CandidateCommandType command.",
    EVENT_STORE,
)

_runtime(
    "EVT-008",
    Phase.RUNTIME,
    Severity.ERROR,
    "transcript_final MUST include speaker, text, turnId, nodeId and confidence.",
    EVENT_STORE,
)

_runtime(
    "EVT-009",
    Phase.RUNTIME,
    Severity.ERROR,
    ("exam_completed (session_completed) MUST include reason, totalTurns and totalElapsedMs."),
    EVENT_STORE,
)

_runtime(
    "EVT-010",
    Phase.RUNTIME,
    Severity.ERROR,
    "Events MUST be persisted to the Event Store before being considered committed.",
    EVENT_STORE,
)

_runtime(
    "EVT-011",
    Phase.RUNTIME,
    Severity.ERROR,
    "The event envelope MUST include schemaVersion.",
    EVENT_STORE,
)

_runtime(
    "OUT-001",
    Phase.RUNTIME,
    Severity.ERROR,
    "Output validation MUST include a persona_break filter.",
    OUTPUT_FILTERS,
)

_runtime(
    "OUT-002",
    Phase.RUNTIME,
    Severity.ERROR,
    (
        "Output validation MUST include a rubric_leak filter against the node's evidence and "
        "rubric text."
    ),
    OUTPUT_FILTERS,
)

_runtime(
    "OUT-003",
    Phase.RUNTIME,
    Severity.ERROR,
    "Output validation MUST include a topic_containment filter.",
    OUTPUT_FILTERS,
)

_runtime(
    "OUT-004",
    Phase.RUNTIME,
    Severity.ERROR,
    "Output validation MUST include a length filter (spokenText <= 500 characters).",
    OUTPUT_FILTERS,
)

_runtime(
    "OUT-005",
    Phase.RUNTIME,
    Severity.WARNING,
    "Output validation SHOULD include a leading_question filter.",
    OUTPUT_FILTERS,
)

_runtime(
    "CMP-005",
    Phase.COMPATIBILITY,
    Severity.ERROR,
    (
        "Minor versions MUST be backward-compatible: older minors of the current major "
        "(including exam-runtime-ir/0.1) load and run."
    ),
    VERSIONING,
)

_runtime(
    "CMP-006",
    Phase.COMPATIBILITY,
    Severity.WARNING,
    ("Deprecated fields MUST still be accepted for at least one minor version after deprecation."),
    VERSIONING,
)

declare(
    "CMP-007",
    phase=Phase.COMPATIBILITY,
    severity=Severity.ERROR,
    summary="Deprecated fields MUST NOT be removed until a major version bump.",
    enforced_by=(
        "governance — enforced by ioa.versioning.DEPRECATIONS (removable_in is always a major "
        "version; tested)"
    ),
    stages=PUBLISH,
    module=__name__,
)

_adapter("ADP-001", "Every specification node MUST produce exactly one NodeConfig.")

_adapter("ADP-002", "NodeConfig.id MUST equal the specification nodeId.")

_adapter(
    "ADP-003",
    ("report_observation MUST be registered on every non-end node, and no other domain function."),
)

_adapter(
    "ADP-004",
    ("report_observation MUST include a signals array with signalType, excerpt and confidence."),
)

_adapter(
    "ADP-005",
    (
        "report_observation MUST include commandDetected covering repeat, clarify, rephrase, "
        "slow_down, pause, thinking_time, help, skip, revise, finish."
    ),
)

_adapter("ADP-006", "forbiddenActions MUST appear in task_messages in a 'Do NOT' block.")

_adapter("ADP-007", "allowedActions MUST appear in task_messages in a 'You may' block.")

_adapter("ADP-008", "metadata.maxFollowUps MUST equal the specification value.")

_adapter(
    "ADP-009",
    "metadata.timeBudgetSec MUST equal the specification value when timeBudget is given.",
)

_adapter("ADP-010", "metadata.evidenceTargets MUST list every evidence target id of the node.")

_adapter("ADP-011", "metadata.irNodeId MUST equal the specification nodeId.")

_adapter(
    "ADP-012",
    "edges MUST reflect all valid transitions, with guard runtime_controller_approval.",
)

_adapter("ADP-013", "Transcript hooks MUST forward to the Runtime Controller.")

_adapter("ADP-014", "dataChannel.topic MUST be specified.")

_adapter(
    "ADP-015",
    (
        "Constructs without a Pipecat equivalent MUST be encoded as metadata + tool calls, "
        "never dropped."
    ),
)

_adapter(
    "ADP-016",
    (
        "outputValidationFilters MUST configure persona_break, rubric_leak, topic_containment"
        " and length."
    ),
)

_adapter(
    "POL-005",
    ("forbiddenActions from globalPolicies MUST be propagated into every node's task_messages."),
)

_adapter("POL-007", "task_messages MUST include the prompting consistency directive.")

_adapter(
    "POL-008",
    (
        "On anxietyDetected the response MUST be limited to calm_support or pause_timer, "
        "without assessment-relevant reassurance."
    ),
)

declare(
    "VAL-001",
    phase=Phase.ADAPTER,
    severity=Severity.INFO,
    summary="Step 9 (adapter compilation and ADP-* rules) was skipped; the finding says why.",
    enforced_by=PIPELINE,
    stages=PUBLISH_AND_RUNTIME,
    module=__name__,
)
declare(
    "VAL-002",
    phase=Phase.PIPELINE,
    severity=Severity.ERROR,
    summary="A rule raised an internal error; the package is rejected as not fully checked.",
    enforced_by=PIPELINE,
    stages=PUBLISH_AND_RUNTIME,
    module=__name__,
)
declare(
    "VAL-003",
    phase=Phase.ADAPTER,
    severity=Severity.ERROR,
    summary="The adapter compiler or its rules are installed but broken, or compilation failed.",
    enforced_by=PIPELINE,
    stages=PUBLISH_AND_RUNTIME,
    module=__name__,
)
