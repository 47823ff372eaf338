"""Step 6: policy rules (POL-001..004, POL-006, plus POL-101 of this project).

POL-005, POL-007 and POL-008 need the compiled task messages and are adapter-phase rules
(``ioa.validation.rules.adapter``). Follow-up (POL-F*) and recovery (POL-R*) rules have their
own modules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from ioa.schema.enums import ALWAYS_ALLOWED_COMMANDS, CandidateCommandType, OnViolation
from ioa.schema.paths import JsonPath
from ioa.validation.document import (
    NodeView,
    PackageDocument,
    as_list,
    as_mapping,
    as_str,
    as_text,
    describe,
    is_one_of,
    strings_in,
)
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, rule

_COMMANDS: Final = frozenset(member.value for member in CandidateCommandType)
_WELFARE: Final = frozenset(member.value for member in ALWAYS_ALLOWED_COMMANDS)
_ON_VIOLATION: Final = frozenset(member.value for member in OnViolation)

ANSWER_REVEALING_ACTIONS: Final = frozenset({"reveal_answer", "reveal_model_answer"})
"""Either name forbids revealing the model answer (POL-004)."""
RUBRIC_REVEALING_ACTIONS: Final = frozenset({"reveal_rubric", "reveal_scoring"})
"""Either name forbids revealing the rubric or its scoring logic (POL-004)."""

RUBRIC_LEVEL_WORDING: Final = re.compile(
    r"(?i)\b(?:excellent|satisfactory|unsatisfactory|partial|absent|outstanding|distinction"
    r"|merit|grade\s+[a-f][+-]?|level\s+\d+|band\s+\d+)\s*:"
)
"""Rubric level descriptors written as ``Excellent: ...``, ``Grade A: ...``, ``Level 3: ...``."""

MIN_VERBATIM_CHARS: Final = 20
"""Rubric level descriptions shorter than this are not searched for verbatim copies."""


def command_policies(
    doc: PackageDocument,
) -> Iterator[tuple[JsonPath, Mapping[str, object], str | None]]:
    """Every candidate command policy: the package default, then each node's own."""
    default = as_mapping(doc.global_policies.get("defaultCandidateCommands"))
    if default is not None:
        yield ("globalPolicies", "defaultCandidateCommands"), default, None
    for node in doc.nodes:
        policy = node.mapping("candidateCommands")
        if policy is not None:
            yield node.path("candidateCommands"), policy, node.node_id or None


@rule(
    "POL-001",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="forbiddenActions MUST NOT conflict with allowedActions on the same node.",
)
def actions_do_not_conflict(inp: RuleInput) -> Iterator[Issue]:
    """No allowed action is forbidden on the node or globally."""
    doc = inp.doc
    for node in doc.nodes:
        forbidden = doc.forbidden_actions(node)
        for position, action in enumerate(as_list(node.get("allowedActions")) or []):
            if isinstance(action, str) and action in forbidden:
                yield node.issue(
                    f"action '{action}' is allowed here but forbidden by {forbidden[action]}; "
                    "remove it from one of the two lists",
                    "allowedActions",
                    position,
                )


@rule(
    "POL-002",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="candidateCommands.allowed values MUST be CandidateCommandType values.",
)
def allowed_commands_known(inp: RuleInput) -> Iterator[Issue]:
    """Every allowed command is a known command."""
    for path, policy, node_id in command_policies(inp.doc):
        allowed = policy.get("allowed")
        for position, command in enumerate(as_list(allowed) or []):
            if not is_one_of(command, _COMMANDS):
                yield Issue(
                    (*path, "allowed", position),
                    f"{describe(command)} is not a candidate command; use one of "
                    f"{', '.join(sorted(_COMMANDS))}",
                    node_id,
                )


@rule(
    "POL-003",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary=(
        "candidateCommands.forbidden entries MUST name a CandidateCommandType command with a "
        "reason and an onViolation handler."
    ),
)
def forbidden_commands_well_formed(inp: RuleInput) -> Iterator[Issue]:
    """Every forbidden entry is {command, reason, onViolation} with known values."""
    handlers = ", ".join(sorted(_ON_VIOLATION))
    for path, policy, node_id in command_policies(inp.doc):
        for position, entry in enumerate(as_list(policy.get("forbidden")) or []):
            where = (*path, "forbidden", position)
            mapping = as_mapping(entry)
            if mapping is None:
                yield Issue(
                    where,
                    f'a forbidden command must be an object {{"command", "reason", '
                    f'"onViolation"}}, got {describe(entry)}',
                    node_id,
                )
                continue
            command = mapping.get("command")
            if not is_one_of(command, _COMMANDS):
                yield Issue(
                    (*where, "command"),
                    f"{describe(command)} is not a candidate command; use one of "
                    f"{', '.join(sorted(_COMMANDS))}",
                    node_id,
                )
            if as_text(mapping.get("reason")) is None:
                yield Issue(
                    (*where, "reason"),
                    "a forbidden command needs a reason (recorded, and shown to the proctor), "
                    f"got {describe(mapping.get('reason'))}",
                    node_id,
                )
            if not is_one_of(mapping.get("onViolation"), _ON_VIOLATION):
                yield Issue(
                    (*where, "onViolation"),
                    f"onViolation must be one of {handlers}, "
                    f"got {describe(mapping.get('onViolation'))}",
                    node_id,
                )


@rule(
    "POL-004",
    phase=Phase.POLICY,
    severity=Severity.WARNING,
    summary=(
        "forbiddenActions on question nodes SHOULD forbid revealing the model answer and the "
        "rubric scoring logic."
    ),
)
def question_forbids_leaks(inp: RuleInput) -> Iterator[Issue]:
    """Question nodes forbid reveal_answer and reveal_rubric (node or global list)."""
    doc = inp.doc
    for node in doc.question_nodes:
        forbidden = set(doc.forbidden_actions(node))
        missing = []
        if not forbidden & ANSWER_REVEALING_ACTIONS:
            missing.append("reveal_answer")
        if not forbidden & RUBRIC_REVEALING_ACTIONS:
            missing.append("reveal_rubric")
        if missing:
            yield node.issue(
                f"question node {node.name} does not forbid {' and '.join(missing)}; add "
                f"{', '.join(missing)} to its forbiddenActions or to "
                "globalPolicies.forbiddenActions",
                "forbiddenActions",
            )


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def rubric_texts(node: NodeView) -> list[str]:
    """Normalised rubric level descriptions of every target of the node (long enough ones)."""
    texts: list[str] = []
    for target in node.evidence_targets:
        rubric = as_mapping(target.raw.get("rubricDescriptor"))
        levels = as_mapping(rubric.get("levels")) if rubric is not None else None
        for level in levels.values() if levels is not None else ():
            mapping = as_mapping(level)
            description = as_text(mapping.get("description")) if mapping is not None else None
            if description is not None and len(description.strip()) >= MIN_VERBATIM_CHARS:
                texts.append(_normalise(description))
    return texts


def rubric_labels(node: NodeView) -> list[str]:
    """Level labels of every rubric of the node (``Mostly complete``...)."""
    labels: list[str] = []
    for target in node.evidence_targets:
        rubric = as_mapping(target.raw.get("rubricDescriptor"))
        levels = as_mapping(rubric.get("levels")) if rubric is not None else None
        for level in levels.values() if levels is not None else ():
            mapping = as_mapping(level)
            label = as_text(mapping.get("label")) if mapping is not None else None
            if label is not None:
                labels.append(label.strip().lower())
    return labels


def leak_in(text: str, verbatim: list[str], labels: list[str], *, wording: bool) -> str | None:
    """What rubric content ``text`` contains, or None."""
    if wording and ":" in text:  # every level-wording pattern ends with a colon
        match = RUBRIC_LEVEL_WORDING.search(text)
        if match is not None:
            return f"the rubric level wording '{match.group(0)}'"
        lowered = text.lower()
        for label in labels:
            if f"{label}:" in lowered:
                return f"the rubric level label '{label}:'"
    if not verbatim:
        return None
    normalised = _normalise(text)
    for description in verbatim:
        if description in normalised:
            return "a rubric level description word for word"
    return None


@rule(
    "POL-006",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary=(
        "Evidence descriptions (and other text the LLM sees) MUST describe behaviour, not "
        'contain rubric level descriptors ("Excellent: ...", "Grade A: ...").'
    ),
)
def no_rubric_leak(inp: RuleInput) -> Iterator[Issue]:
    """Evidence target descriptions and labels carry no rubric wording; LLM-facing node texts
    (promptSeed, scenario, prompt.opening) carry no copied rubric level description."""
    for node in inp.doc.nodes:
        verbatim = rubric_texts(node)
        labels = rubric_labels(node)
        for target in node.evidence_targets:
            for field in ("description", "label"):
                text = as_str(target.raw.get(field))
                if text is None:
                    continue
                leak = leak_in(text, verbatim, labels, wording=True)
                if leak is not None:
                    yield node.issue(
                        f"evidence target {field} contains {leak}; the LLM sees this text, so "
                        'describe the observable behaviour instead (e.g. "Candidate explains '
                        '...") and keep level descriptors in rubricDescriptor',
                        "evidenceTargets",
                        target.index,
                        field,
                    )
        if not verbatim:
            continue
        for segments in (("promptSeed",), ("scenario",), ("prompt", "opening")):
            value: object = node.raw
            for segment in segments:
                mapping = as_mapping(value)
                value = mapping.get(segment) if mapping is not None else None
            text = as_str(value)
            if text is None:
                continue
            leak = leak_in(text, verbatim, labels, wording=False)
            if leak is not None:
                yield node.issue(
                    f"{'.'.join(segments)} contains {leak}; the LLM could repeat it to the "
                    "candidate, so remove the rubric text",
                    *segments,
                )


@rule(
    "POL-101",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary=(
        "A command MUST NOT be both allowed and forbidden, and the welfare commands (pause, "
        "resume, raise_hand, report_audio_issue, emergency_stop, finish) MUST NOT be forbidden."
    ),
)
def commands_consistent(inp: RuleInput) -> Iterator[Issue]:
    """Command policies do not contradict themselves or the welfare guarantee."""
    for path, policy, node_id in command_policies(inp.doc):
        allowed = set(strings_in(policy.get("allowed")))
        for position, entry in enumerate(as_list(policy.get("forbidden")) or []):
            mapping = as_mapping(entry)
            command = as_str(mapping.get("command")) if mapping is not None else None
            if command is None:
                continue
            where = (*path, "forbidden", position, "command")
            if command in _WELFARE:
                yield Issue(
                    where,
                    f"'{command}' is a welfare/safety command the runtime always accepts; it "
                    "cannot be forbidden, so remove this entry",
                    node_id,
                )
            elif command in allowed:
                yield Issue(
                    where,
                    f"'{command}' is both allowed and forbidden; remove it from one of the lists",
                    node_id,
                )
