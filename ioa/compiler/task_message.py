"""The task message template (chapter 07 §4): one developer message per node.

The message is built from the node's scenario, brief, opening prompt, evidence vocabulary
(target id, label and behavioural description; NEVER rubric level text, POL-006/OUT-002),
constraints (follow-up and time budget), a "Do NOT" block with every forbidden action of the
node and of the package (POL-005, ADP-006), a "You may" block (ADP-007), the reporting
instruction, the prompting-consistency directive (POL-007) and the anxiety directive (POL-008).

The block headers are constants so the adapter rules can find the blocks again. The template is
part of what ``adapterVersion`` versions (§12).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ioa.compiler.material_block import MATERIAL_HEADER, MATERIAL_INSTRUCTIONS
from ioa.compiler.report_observation import REPORT_OBSERVATION

PART_HEADER: Final = "PART:"
SCENARIO_HEADER: Final = "SCENARIO:"
BRIEF_HEADER: Final = "BRIEF:"
OPENING_HEADER: Final = "OPENING QUESTION:"
CLOSING_HEADER: Final = "CLOSING:"
EVIDENCE_HEADER: Final = "EVIDENCE TO LISTEN FOR (use these ids as signalType):"
CONSTRAINTS_HEADER: Final = "CONSTRAINTS:"
DO_NOT_HEADER: Final = "Do NOT:"
YOU_MAY_HEADER: Final = "You may:"
REPORTING_HEADER: Final = "REPORTING:"
CONSISTENCY_HEADER: Final = "CONSISTENCY:"
ANXIETY_HEADER: Final = "ANXIETY AND DISTRESS:"

CONSISTENCY_DIRECTIVE: Final = (
    "Use the same questioning approach for all candidates. Do not vary your level of "
    "scaffolding or hint-giving based on perceived candidate ability. Maintain a consistent "
    "tone and difficulty level throughout the assessment."
)
"""POL-007 (Pearce & Chiavaroli 2020, via Fenton 2025)."""

ANXIETY_DIRECTIVE: Final = (
    "If the candidate seems anxious, set anxietyDetected and offer only neutral procedural "
    'support, such as "Take your time." or "Would you like me to repeat the question?". '
    "Never give assessment-relevant reassurance: do not say or imply that an answer is good, "
    "correct or on the right track, and do not discourage the candidate either. If the "
    "candidate seems distressed (crying, angry, refusing to go on), set distressDetected."
)
"""POL-008 (Fenton 2025, citing Pearce & Chiavaroli 2020): neither reassure nor discourage."""

REPORTING_INSTRUCTION: Final = (
    f"After every candidate response, call {REPORT_OBSERVATION} with the evidence signals you "
    "detected (only ids from the evidence list above; an empty list if there are none), your "
    "view of the answer, and what you want to say next in spokenText. If the candidate asks you "
    "to repeat, clarify, rephrase, slow down, pause, give thinking time, help, skip, revise an "
    "earlier answer or finish, set commandDetected instead of answering for them. The "
    "examination runtime decides when this part ends and what happens next; never announce a "
    "move to another topic on your own."
)

NO_EVIDENCE_LINE: Final = (
    "- (none: this part gathers no evidence, so report signals as an empty list)"
)
NO_ALLOWED_ACTIONS_LINE: Final = (
    "- (no additional actions in this part: ask the opening question and listen)"
)

ACTION_DESCRIPTIONS: Final[dict[str, str]] = {
    "reveal_answer": "reveal or hint at the expected answer",
    "reveal_rubric": "mention, quote or paraphrase the marking criteria or how answers are scored",
    "confirm_correctness": "tell the candidate whether an answer is right, wrong, good or bad",
    "ask_multiple_questions_at_once": "ask more than one question in a single turn",
    "give_hint": "give hints towards the answer",
    "ask_follow_up": "ask a follow-up question about the candidate's answer",
    "request_example": "ask the candidate for an example",
    "rephrase_question": "rephrase the question in other words without changing what it asks",
}
"""Plain-language glosses of common action ids; other ids are shown humanised."""


@dataclass(frozen=True, slots=True)
class TaskMessageInputs:
    """What the template needs from one node, already resolved by the compiler."""

    node: Mapping[str, Any]
    forbidden_actions: Sequence[str]
    """The node's forbidden actions followed by the package's global ones, without repeats."""
    max_follow_ups: int
    time_budget_sec: int | float | None


def describe_action(action: str) -> str:
    """``- action_id: gloss`` (the id stays verbatim so the rules and the runtime can find it)."""
    gloss = ACTION_DESCRIPTIONS.get(action, action.replace("_", " "))
    return f"- {action}: {gloss}"


_DESCRIBED: dict[str, str] = {}
"""Cache of :func:`describe_action` for plain strings (action ids repeat across nodes)."""


def _describe(action: str) -> str:
    if type(action) is not str:
        return describe_action(action)
    line = _DESCRIBED.get(action)
    if line is None:
        line = describe_action(action)
        if len(_DESCRIBED) < 4096:
            _DESCRIBED[action] = line
    return line


def _block(header: str, lines: Sequence[str]) -> str:
    return "\n".join([header, *lines])


_CLOSING_BLOCKS: Final = "\n\n".join(
    [
        _block(REPORTING_HEADER, [REPORTING_INSTRUCTION]),
        _block(CONSISTENCY_HEADER, [CONSISTENCY_DIRECTIVE]),
        _block(ANXIETY_HEADER, [ANXIETY_DIRECTIVE]),
    ]
)
"""The last three blocks of every non-end node's message (the same for all nodes)."""


def _evidence_lines(targets: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = []
    for target in targets:
        line = f"- {target['id']} ({target.get('label', '')})"
        description = target.get("description")
        if description:
            line += f": {description}"
        lines.append(line)
    return lines or [NO_EVIDENCE_LINE]


def _constraint_lines(
    node: Mapping[str, Any], max_follow_ups: int, time_budget: float | None
) -> list[str]:
    policy = node.get("followUpPolicy") or {}
    if max_follow_ups > 0:
        details = []
        if policy.get("followUpStyle"):
            details.append(f"style: {policy['followUpStyle']}")
        if policy.get("maxFollowUpDurationSec"):
            details.append(f"at most {policy['maxFollowUpDurationSec']} seconds each")
        suffix = f" ({'; '.join(details)})" if details else ""
        follow_up = f"- Follow-up budget: at most {max_follow_ups} follow-up questions{suffix}."
    else:
        follow_up = "- Follow-up budget: no follow-up questions in this part."
    lines = [follow_up]
    if time_budget is not None:
        lines.append(
            f"- Time budget: {time_budget} seconds for this part. The runtime keeps the time."
        )
    return lines


def _material_lines(grounding: Mapping[str, Any]) -> list[str]:
    """A grounded node's standing instructions about the passage (candidate-materials.md §6)."""
    pick = grounding.get("pick")
    wanted = "a choice, a result or a limitation" if pick == "any" else f"a {pick}"
    return [
        MATERIAL_INSTRUCTIONS,
        f"The passage states {wanted} in the candidate's {grounding.get('material')}.",
        f"Fallback question: {grounding.get('fallbackQuestion')}",
    ]


def build_task_message(inputs: TaskMessageInputs) -> str:
    """The developer message of one node (deterministic: same inputs, same text)."""
    node = inputs.node
    prompt: Mapping[str, Any] = node.get("prompt") or {}
    parts: list[str] = []
    if node.get("title"):
        parts.append(f"{PART_HEADER} {node['title']}")

    if node.get("kind") == "end":
        if prompt.get("closing"):
            parts.append(
                _block(
                    CLOSING_HEADER,
                    [
                        prompt["closing"],
                        "The runtime speaks this closing verbatim. Do not add anything to it.",
                    ],
                )
            )
        if inputs.forbidden_actions:
            parts.append(_block(DO_NOT_HEADER, [_describe(a) for a in inputs.forbidden_actions]))
        return "\n\n".join(parts)

    if node.get("scenario"):
        parts.append(_block(SCENARIO_HEADER, [node["scenario"]]))
    if node.get("promptSeed"):
        parts.append(_block(BRIEF_HEADER, [node["promptSeed"]]))
    grounding = node.get("grounding")
    if isinstance(grounding, Mapping):
        parts.append(_block(MATERIAL_HEADER, _material_lines(grounding)))
    if prompt.get("opening"):
        parts.append(
            _block(
                OPENING_HEADER,
                [
                    prompt["opening"],
                    "Start this part by asking the opening question, keeping its meaning.",
                ],
            )
        )
    parts.append(_block(EVIDENCE_HEADER, _evidence_lines(node.get("evidenceTargets") or [])))
    parts.append(
        _block(
            CONSTRAINTS_HEADER,
            _constraint_lines(node, inputs.max_follow_ups, inputs.time_budget_sec),
        )
    )
    if inputs.forbidden_actions:
        parts.append(_block(DO_NOT_HEADER, [_describe(a) for a in inputs.forbidden_actions]))
    allowed = [_describe(a) for a in node.get("allowedActions") or []]
    parts.append(_block(YOU_MAY_HEADER, allowed or [NO_ALLOWED_ACTIONS_LINE]))
    parts.append(_CLOSING_BLOCKS)  # reporting, consistency, anxiety
    return "\n\n".join(parts)


def find_block(content: str, header: str) -> list[str] | None:
    """The lines of the last block that starts with ``header`` (up to the next blank line).

    The last one, because the template's own blocks follow any package text that might contain
    the same words. Returns ``None`` when the message has no such block. Used by the rules.
    """
    return find_block_in_lines(content.split("\n"), header)


def find_block_in_lines(lines: Sequence[str], header: str) -> list[str] | None:
    """:func:`find_block` on the message already split into lines (``content.split("\\n")``)."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if header in line and line.strip() == header:
            block: list[str] = []
            for following in lines[index + 1 :]:
                if not following or following.isspace():  # a blank line ends the block
                    break
                block.append(following)
            return block
    return None


def block_action_ids(block: Sequence[str]) -> list[str]:
    """The action ids listed in a "Do NOT" / "You may" block (``- id: gloss`` lines; the
    ``- (...)`` placeholder line of an empty block lists none)."""
    ids = []
    for line in block:
        stripped = line.strip()
        if stripped.startswith("- ") and not stripped.startswith("- (") and ":" in stripped:
            ids.append(stripped[2:].split(":", 1)[0].strip())
    return ids
