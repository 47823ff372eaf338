"""Step 6: recovery handler rules (POL-R001..005, plus POL-R101 of this project)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from ioa.schema.enums import (
    SILENCE_ESCALATIONS,
    RecoveryAction,
    RecoveryEscalation,
    RecoveryScenario,
)
from ioa.validation.document import NodeView, as_list, as_mapping, describe, is_one_of
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, rule

_SCENARIOS: Final = frozenset(member.value for member in RecoveryScenario)
_ESCALATIONS: Final = frozenset(member.value for member in RecoveryEscalation)
_SILENCE_EXITS: Final = frozenset(member.value for member in SILENCE_ESCALATIONS)

_SILENCE: Final = RecoveryScenario.SILENCE.value
_STT_LOW_CONFIDENCE: Final = RecoveryScenario.STT_LOW_CONFIDENCE.value

STRUCTURAL_KEYS: Final = (
    "evidenceTargets",
    "transitions",
    "targetNodeId",
    "nextNodeId",
    "completionPolicy",
    "requiredEvidenceTargetIds",
    "followUpPolicy",
    "timeBudget",
)
"""Keys that would let a recovery handler change the node's structure (POL-R004)."""

STT_ACTIONS: Final = frozenset(
    {RecoveryAction.GENTLE_REPROMPT.value, RecoveryAction.TECHNICAL_RECOVERY.value}
)
"""Actions POL-R005 expects of the stt_low_confidence handler."""


def handlers(node: NodeView) -> Iterator[tuple[int, Mapping[str, object]]]:
    """The node's recovery handler objects with their index (end nodes have none)."""
    if node.is_end:
        return
    for position, entry in enumerate(as_list(node.get("recoveryHandlers")) or []):
        mapping = as_mapping(entry)
        if mapping is not None:
            yield position, mapping


@rule(
    "POL-R001",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary=(
        "Recovery handler scenario MUST be silence, unclear_answer, off_topic, anxiety, "
        "interruption, network_issue, repetition_loop (or stt_low_confidence)."
    ),
)
def scenario_known(inp: RuleInput) -> Iterator[Issue]:
    """Every handler names a known scenario."""
    allowed = ", ".join(member.value for member in RecoveryScenario)
    for node in inp.doc.nodes:
        for position, handler in handlers(node):
            if not is_one_of(handler.get("scenario"), _SCENARIOS):
                yield node.issue(
                    f"recovery scenario must be one of {allowed}, got "
                    f"{describe(handler.get('scenario'))}",
                    "recoveryHandlers",
                    position,
                    "scenario",
                )


@rule(
    "POL-R002",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary=(
        "Recovery handler escalation MUST be retry, rephrase, skip_node, pause_session or "
        "terminate."
    ),
)
def escalation_known(inp: RuleInput) -> Iterator[Issue]:
    """Every handler says what happens when its attempts are exhausted."""
    allowed = ", ".join(member.value for member in RecoveryEscalation)
    for node in inp.doc.nodes:
        for position, handler in handlers(node):
            if not is_one_of(handler.get("escalation"), _ESCALATIONS):
                yield node.issue(
                    f"recovery escalation must be one of {allowed}, got "
                    f"{describe(handler.get('escalation'))}",
                    "recoveryHandlers",
                    position,
                    "escalation",
                )


@rule(
    "POL-R003",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="silence handlers MUST escalate with skip_node, pause_session or terminate.",
)
def silence_does_not_loop(inp: RuleInput) -> Iterator[Issue]:
    """Long silence ends in a skip, a pause or a stop, never another loop."""
    for node in inp.doc.nodes:
        for position, handler in handlers(node):
            escalation = handler.get("escalation")
            if (
                handler.get("scenario") == _SILENCE
                and is_one_of(escalation, _ESCALATIONS)
                and not is_one_of(escalation, _SILENCE_EXITS)
            ):
                yield node.issue(
                    f"a silence handler escalating with '{escalation}' could loop indefinitely; "
                    "use skip_node, pause_session or terminate",
                    "recoveryHandlers",
                    position,
                    "escalation",
                )


@rule(
    "POL-R004",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="Recovery handlers MUST NOT modify the node's evidenceTargets or transitions.",
)
def recovery_is_behavioural(inp: RuleInput) -> Iterator[Issue]:
    """Handlers carry no structural fields."""
    for node in inp.doc.nodes:
        for position, handler in handlers(node):
            for key in STRUCTURAL_KEYS:
                if key in handler:
                    yield node.issue(
                        f"recovery handler sets '{key}', but recovery is behavioural, not "
                        "structural; remove it (change the node itself, or use an escalation "
                        "and a policy_escalation transition)",
                        "recoveryHandlers",
                        position,
                        key,
                    )


@rule(
    "POL-R005",
    phase=Phase.POLICY,
    severity=Severity.WARNING,
    summary=(
        "Question nodes SHOULD have an stt_low_confidence handler (gentle_reprompt or "
        "technical_recovery), or the package MUST give metadata.sttHandlingJustification."
    ),
)
def stt_low_confidence_handled(inp: RuleInput) -> Iterator[Issue]:
    """Question nodes say what happens when the transcript is unreliable."""
    doc = inp.doc
    if doc.justification("sttHandlingJustification") is not None:
        return
    for node in doc.question_nodes:
        found = [
            (position, handler)
            for position, handler in handlers(node)
            if handler.get("scenario") == _STT_LOW_CONFIDENCE
        ]
        if not found:
            yield node.issue(
                f"question node {node.name} has no stt_low_confidence recovery handler, so an "
                'unreliable transcript is not re-asked; add {"scenario": "stt_low_confidence", '
                '"action": "gentle_reprompt", "maxAttempts": 2, "escalation": '
                '"pause_session"}, or explain in metadata.sttHandlingJustification',
                "recoveryHandlers",
            )
            continue
        for position, handler in found:
            if not is_one_of(handler.get("action"), STT_ACTIONS):
                yield node.issue(
                    "the stt_low_confidence handler uses action "
                    f"{describe(handler.get('action'))}; "
                    "use gentle_reprompt or technical_recovery so the candidate is asked again",
                    "recoveryHandlers",
                    position,
                    "action",
                )


@rule(
    "POL-R101",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="A node MUST NOT have two recovery handlers for the same scenario.",
)
def one_handler_per_scenario(inp: RuleInput) -> Iterator[Issue]:
    """Each scenario has at most one handler per node (the runtime needs one answer)."""
    for node in inp.doc.nodes:
        seen: dict[str, int] = {}
        for position, handler in handlers(node):
            scenario = handler.get("scenario")
            if not isinstance(scenario, str):
                continue
            if scenario in seen:
                yield node.issue(
                    f"recoveryHandlers[{seen[scenario]}] already handles '{scenario}'; merge the "
                    "two handlers into one",
                    "recoveryHandlers",
                    position,
                    "scenario",
                )
            else:
                seen[scenario] = position
