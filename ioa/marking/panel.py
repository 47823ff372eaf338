"""The optional LLM marking panel (``docs/spec/marking.md`` §6).

Several models, as configured, each score the transcript against the rubric **independently**
(round 1), then **once more after seeing the other members' evidence** (round 2: their levels,
rationales and the turns they cite; never the deterministic marker's level, so the marker stays
an independent rater). Per target the panel's level is the lower median of the round-2 levels.

Agreement: Krippendorff's ordinal alpha over the session's targets (units) with the
deterministic marker and every member as coders, for each round; per target, the spread (the
largest distance in levels between any two raters, the marker included). A target whose spread
exceeds ``rules.panelThreshold`` is **routed to human moderation**.

The panel advises; it never sets a level. Pure: the model calls go through an injected
:class:`ChatClient` (an OpenAI-compatible client in the Django app); a failing member is recorded
and left out, never fatal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from ioa.marking.alpha import krippendorff_alpha
from ioa.marking.config import MarkingConfig, TargetScheme
from ioa.marking.errors import PanelReplyError
from ioa.marking.levels import Level
from ioa.marking.log import SessionLog
from ioa.marking.marker import MarkingResult, scored_targets

PANEL_VERSION: Final = "ioa-marking-panel/1"
MAX_TURN_CHARS: Final = 1200

SYSTEM_PROMPT: Final = (
    "You are one member of a marking panel for an oral examination (a viva). Judge the "
    "candidate's answers against the rubric, using only what the candidate said in the "
    "transcript. For every target give one level: excellent, satisfactory, partial or absent, a "
    "short rationale, and the ids of the transcript turns your judgement rests on. Reply with a "
    'JSON object only, of the form {"targets": [{"key": "...", "level": "...", "rationale": '
    '"...", "turnIds": ["..."]}]}.'
)
ROUND_TWO_PROMPT: Final = (
    "Here are the other panel members' judgements with their evidence. Reconsider each target "
    "in the light of their evidence and answer again in the same JSON form. Change a level only "
    "where their evidence convinces you."
)


class ChatClient(Protocol):
    """One chat completion: the model's text answer to ``messages``."""

    def complete(self, *, model: str, messages: Sequence[Mapping[str, str]]) -> str: ...


@dataclass(frozen=True, slots=True)
class PanelMember:
    name: str
    model: str


@dataclass(frozen=True, slots=True)
class Judgement:
    key: str
    level: Level
    rationale: str
    turn_ids: tuple[str, ...]


@dataclass(slots=True)
class MemberRound:
    member: str
    round: int
    judgements: dict[str, Judgement] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TargetAgreement:
    key: str
    marker: Level
    round1: dict[str, Level]
    round2: dict[str, Level]
    panel_level: Level | None
    spread: int
    routed: bool


@dataclass(slots=True)
class PanelResult:
    members: tuple[PanelMember, ...]
    rounds: list[MemberRound]
    agreements: list[TargetAgreement]
    alpha_round1: float | None
    alpha_round2: float | None
    threshold: int

    @property
    def routed(self) -> list[str]:
        return [a.key for a in self.agreements if a.routed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "panelVersion": PANEL_VERSION,
            "members": [{"name": m.name, "model": m.model} for m in self.members],
            "threshold": self.threshold,
            "alphaRound1": self.alpha_round1,
            "alphaRound2": self.alpha_round2,
            "routed": self.routed,
            "agreements": [
                {
                    "key": a.key,
                    "marker": a.marker.label,
                    "round1": {k: v.label for k, v in a.round1.items()},
                    "round2": {k: v.label for k, v in a.round2.items()},
                    "panelLevel": a.panel_level.label if a.panel_level is not None else None,
                    "spread": a.spread,
                    "routed": a.routed,
                }
                for a in self.agreements
            ],
            "rounds": [
                {
                    "member": r.member,
                    "round": r.round,
                    "error": r.error,
                    "judgements": [
                        {
                            "key": j.key,
                            "level": j.level.label,
                            "rationale": j.rationale,
                            "turnIds": list(j.turn_ids),
                        }
                        for j in r.judgements.values()
                    ],
                }
                for r in self.rounds
            ],
        }


# --- prompts -------------------------------------------------------------------------------------


def rubric_text(targets: Sequence[TargetScheme], config: MarkingConfig) -> str:
    lines = ["RUBRIC"]
    for target in targets:
        lines.append(f"- key: {target.key} ({target.label})")
        if target.description:
            lines.append(f"  what it looks for: {target.description}")
        outcomes = [config.outcome_text(o) or o for o in target.outcome_ids]
        if outcomes:
            lines.append(f"  learning outcomes: {'; '.join(outcomes)}")
        for descriptor in target.descriptors:
            lines.append(
                f"  {descriptor.level.label}: {descriptor.label}: {descriptor.description}"
            )
    return "\n".join(lines)


def transcript_text(log: SessionLog, config: MarkingConfig, node_ids: Sequence[str]) -> str:
    """The marked nodes' turns, both voices, with turn ids (examiner lines by utterance id)."""
    lines = ["TRANSCRIPT"]
    for node_id in node_ids:
        node = config.node(node_id)
        lines.append(f"## {node.title if node else node_id}")
        rows: list[tuple[int, str]] = []
        for turn in log.turns_at(node_id):
            if turn.speaker == "candidate":
                rows.append((turn.seq, f"[{turn.turn_id}] CANDIDATE: {turn.text[:MAX_TURN_CHARS]}"))
        for utterance in log.utterances:
            if utterance.node_id == node_id:
                rows.append(
                    (utterance.seq, f"[{utterance.utterance_id}] EXAMINER: {utterance.text}")
                )
        lines.extend(text for _, text in sorted(rows))
    return "\n".join(lines)


def first_round_messages(rubric: str, transcript: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{rubric}\n\n{transcript}"},
    ]


def _judgements_json(judgements: Mapping[str, Judgement]) -> str:
    return json.dumps(
        {
            "targets": [
                {
                    "key": j.key,
                    "level": j.level.label,
                    "rationale": j.rationale,
                    "turnIds": list(j.turn_ids),
                }
                for j in judgements.values()
            ]
        },
        ensure_ascii=False,
    )


def second_round_messages(
    rubric: str, transcript: str, own: MemberRound, others: Sequence[MemberRound]
) -> list[dict[str, str]]:
    evidence = "\n".join(
        f"Panel member {index}: {_judgements_json(other.judgements)}"
        for index, other in enumerate(others, start=1)
    )
    return [
        *first_round_messages(rubric, transcript),
        {"role": "assistant", "content": _judgements_json(own.judgements)},
        {"role": "user", "content": f"{ROUND_TWO_PROMPT}\n\n{evidence or '(none)'}"},
    ]


# --- replies -------------------------------------------------------------------------------------

_FENCE: Final = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_reply(text: str, keys: Sequence[str]) -> dict[str, Judgement]:
    """The judgements in a model's answer, for the known ``keys`` (others are ignored).
    :class:`PanelReplyError` when the answer is not the asked-for JSON."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise PanelReplyError("the answer holds no JSON object")
    try:
        data = json.loads(body[start : end + 1])
    except ValueError as exc:
        raise PanelReplyError(f"the answer is not valid JSON: {exc}") from exc
    items = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise PanelReplyError('the answer has no "targets" list')
    wanted = set(keys)
    out: dict[str, Judgement] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("key") not in wanted:
            continue
        try:
            level = Level.parse(item.get("level"))
        except ValueError:
            continue
        turns = item.get("turnIds")
        out[str(item["key"])] = Judgement(
            key=str(item["key"]),
            level=level,
            rationale=str(item.get("rationale") or "")[:2000],
            turn_ids=tuple(str(t) for t in turns) if isinstance(turns, list) else (),
        )
    if not out:
        raise PanelReplyError("the answer judges none of the targets")
    return {k: out[k] for k in keys if k in out}


# --- the panel -----------------------------------------------------------------------------------


def _lower_median(levels: Sequence[Level]) -> Level | None:
    if not levels:
        return None
    ordered = sorted(levels)
    return ordered[(len(ordered) - 1) // 2]


def _ask(
    client: ChatClient,
    member: PanelMember,
    round_no: int,
    messages: Sequence[Mapping[str, str]],
    keys: Sequence[str],
) -> MemberRound:
    record = MemberRound(member=member.name, round=round_no)
    try:
        record.judgements = parse_reply(
            client.complete(model=member.model, messages=messages), keys
        )
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"[:500]
    return record


def agreement(
    keys: Sequence[str],
    marker: Mapping[str, Level],
    round1: Sequence[MemberRound],
    round2: Sequence[MemberRound],
    threshold: int,
) -> tuple[list[TargetAgreement], float | None, float | None]:
    """Per-target agreement and the session's alpha for each round (see the module docs)."""
    agreements: list[TargetAgreement] = []
    units1: list[list[float | None]] = []
    units2: list[list[float | None]] = []
    for key in keys:
        first = {r.member: r.judgements[key].level for r in round1 if key in r.judgements}
        second = {r.member: r.judgements[key].level for r in round2 if key in r.judgements}
        raters = [marker[key], *second.values()]
        spread = int(max(raters) - min(raters))
        agreements.append(
            TargetAgreement(
                key=key,
                marker=marker[key],
                round1=first,
                round2=second,
                panel_level=_lower_median(list(second.values())),
                spread=spread,
                routed=bool(second) and spread > threshold,
            )
        )
        units1.append([float(marker[key]), *(float(v) for v in first.values())])
        units2.append([float(marker[key]), *(float(v) for v in second.values())])
    return agreements, krippendorff_alpha(units1), krippendorff_alpha(units2)


def run_panel(
    config: MarkingConfig,
    log: SessionLog,
    result: MarkingResult,
    members: Sequence[PanelMember],
    client: ChatClient,
) -> PanelResult:
    """Run both rounds for every member and compare with the deterministic marks."""
    targets = [t for _, t in scored_targets(config, result.visited_nodes)]
    keys = [t.key for t in targets]
    node_ids = list(dict.fromkeys(t.node_id for t in targets))
    rubric = rubric_text(targets, config)
    transcript = transcript_text(log, config, node_ids)
    round1 = [
        _ask(client, member, 1, first_round_messages(rubric, transcript), keys)
        for member in members
    ]
    answered = [r for r in round1 if r.error is None]
    round2: list[MemberRound] = []
    for member, own in zip(members, round1, strict=True):
        if own.error is not None:
            continue
        others = [r for r in answered if r is not own]
        round2.append(
            _ask(client, member, 2, second_round_messages(rubric, transcript, own, others), keys)
        )
    threshold = config.rules.panel_threshold
    marker = result.levels()
    agreements, alpha1, alpha2 = agreement(
        keys, marker, answered, [r for r in round2 if r.error is None], threshold
    )
    return PanelResult(
        members=tuple(members),
        rounds=[*round1, *round2],
        agreements=agreements,
        alpha_round1=alpha1,
        alpha_round2=alpha2,
        threshold=threshold,
    )
