"""The marking configuration: the IR's third compilation target (decision 1, option C).

The adapter compiler turns a package into the examiner's flow, the runtime plan into what the
controller enforces; :func:`compile_marking` turns the same package into what marking needs and
nothing else: the assessed slots and their weights, every evidence target with its normalised
weight, dimension, rubric levels and learning outcomes, the texts the examiner must never say
(for the spoken-leak audit) and the parameters of the level rules.

The result is pure data, byte-deterministic (:meth:`MarkingConfig.to_dict` is canonical-JSON
ready and :meth:`MarkingConfig.from_dict` reads it back unchanged), so it can be stored with the
published version and the marks that used it stay reproducible even when the rules' defaults
change later (``compilerVersion`` and ``rules`` are part of the artefact).

Choices (``docs/spec/marking.md`` §2):

* an **assessed node** is a non-end node with at least one evidence target;
* a **slot** is one assessed node, or one question pool (its members are interchangeable: a
  candidate is marked on the member they were given);
* slot weights come from ``metadata.extensions.marking.slotWeights`` when present, else every
  slot counts the same; they are normalised to sum to 1;
* target weights are normalised per node (EVD-005 says they should sum to 1); a node whose
  targets declare no weight weighs them equally; a target without a weight next to weighted
  ones weighs 0 (as ledger coverage does);
* a missing rubric level gets the generic descriptor of :data:`DEFAULT_DESCRIPTORS`, marked
  ``declared: false`` so reports can say so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ioa.marking.errors import MarkingConfigError
from ioa.marking.levels import LEVELS_DESCENDING, Level
from ioa.schema import AssessmentPackage, EvidenceTarget, Node, NodeKind

COMPILER_VERSION: Final = "ioa-marking/1"
"""Changes whenever the compiled shape or the level rules change meaning."""

DEFAULT_DESCRIPTORS: Final[Mapping[Level, tuple[str, str]]] = {
    Level.EXCELLENT: ("Excellent", "Complete and correct, reached without substantial help."),
    Level.SATISFACTORY: (
        "Satisfactory",
        "Correct in substance, with minor gaps, some help, or after correcting themselves.",
    ),
    Level.PARTIAL: ("Partial", "Partly correct or incomplete, or correct with flawed reasoning."),
    Level.ABSENT: ("Absent", "No evidence of the target, or a misconception."),
}


@dataclass(frozen=True, slots=True)
class RuleParameters:
    """The thresholds of the level rules (``docs/spec/marking.md`` §3), stored with the scheme."""

    strong_confidence: float = 0.7
    """A signal at or above this LLM confidence is *strong*; below it, *moderate*."""
    min_confidence: float = 0.5
    """Below this a signal is *weak*: it can raise a target to partial at most, and as a
    negative signal it caps nothing (flagged for review instead)."""
    stt_marginal: float = 0.6
    """A signal resting on a turn heard below this STT confidence (EVD-010 already refuses
    below 0.5) cannot make a target excellent and is flagged for review (POL-R005's 0.6)."""
    scaffolding_satisfactory: int = 2
    """Reported scaffolding intensity from which a signal is capped at satisfactory."""
    scaffolding_partial: int = 3
    """Reported scaffolding intensity from which a signal is capped at partial."""
    scaffolded_follow_ups: int = 2
    """Without a reported intensity: this many ``evidence_gap`` follow-ups at the node before
    the signal count as scaffolding at intensity 2."""
    panel_threshold: int = 1
    """A target is routed to human moderation when two raters (panel models and the
    deterministic marker) are more than this many levels apart."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "strongConfidence": self.strong_confidence,
            "minConfidence": self.min_confidence,
            "sttMarginal": self.stt_marginal,
            "scaffoldingSatisfactory": self.scaffolding_satisfactory,
            "scaffoldingPartial": self.scaffolding_partial,
            "scaffoldedFollowUps": self.scaffolded_follow_ups,
            "panelThreshold": self.panel_threshold,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleParameters:
        return cls(
            strong_confidence=float(data["strongConfidence"]),
            min_confidence=float(data["minConfidence"]),
            stt_marginal=float(data["sttMarginal"]),
            scaffolding_satisfactory=int(data["scaffoldingSatisfactory"]),
            scaffolding_partial=int(data["scaffoldingPartial"]),
            scaffolded_follow_ups=int(data["scaffoldedFollowUps"]),
            panel_threshold=int(data["panelThreshold"]),
        )


@dataclass(frozen=True, slots=True)
class Descriptor:
    """One rubric level of a target."""

    level: Level
    label: str
    description: str
    declared: bool
    """False when the package has no text for this level (a generic one is used)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A learning outcome (``metadata.learningOutcomes``)."""

    outcome_id: str
    text: str


@dataclass(frozen=True, slots=True)
class TargetScheme:
    """One evidence target as marking sees it."""

    key: str
    """Unique in the package: the target id, or ``node.target`` when the id repeats (EVD-002)."""
    target_id: str
    node_id: str
    label: str
    description: str
    weight: float
    """Normalised within the node (the node's weights sum to 1)."""
    declared_weight: float | None
    dimension: str
    outcome_ids: tuple[str, ...]
    """``markingCriteria`` (learning outcome ids), in the package's order."""
    descriptors: tuple[Descriptor, ...]
    """Excellent, satisfactory, partial, absent."""

    def descriptor(self, level: Level) -> Descriptor:
        for item in self.descriptors:
            if item.level is level:
                return item
        raise KeyError(level)  # pragma: no cover - every level is compiled


@dataclass(frozen=True, slots=True)
class NodeScheme:
    """An assessed node."""

    node_id: str
    title: str
    kind: str
    slot_id: str
    targets: tuple[TargetScheme, ...]
    question: str
    """The node's opening (or prompt seed), for reports and the panel."""


@dataclass(frozen=True, slots=True)
class SlotScheme:
    """One assessment slot: a node, or a pool of interchangeable nodes."""

    slot_id: str
    title: str
    node_ids: tuple[str, ...]
    weight: float
    is_pool: bool


@dataclass(frozen=True, slots=True)
class MarkingConfig:
    """Everything marking needs from a published package."""

    package_id: str
    title: str
    ir_version: str
    package_version: str
    outcomes: tuple[Outcome, ...]
    slots: tuple[SlotScheme, ...]
    nodes: tuple[NodeScheme, ...]
    rules: RuleParameters = field(default_factory=RuleParameters)
    compiler_version: str = COMPILER_VERSION

    # -- lookups ---------------------------------------------------------------------------------

    def targets(self) -> Iterator[TargetScheme]:
        for node in self.nodes:
            yield from node.targets

    def node(self, node_id: str) -> NodeScheme | None:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        return None

    def slot(self, slot_id: str) -> SlotScheme | None:
        for slot in self.slots:
            if slot.slot_id == slot_id:
                return slot
        return None

    def target(self, key: str) -> TargetScheme | None:
        for target in self.targets():
            if target.key == key:
                return target
        return None

    def target_at(self, node_id: str, target_id: str) -> TargetScheme | None:
        node = self.node(node_id)
        if node is None:
            return None
        for target in node.targets:
            if target.target_id == target_id:
                return target
        return None

    def outcome_text(self, outcome_id: str) -> str:
        for outcome in self.outcomes:
            if outcome.outcome_id == outcome_id:
                return outcome.text
        return ""

    # -- serialisation ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (canonical-JSON ready: no floats that are not finite, no tuples)."""
        return {
            "compilerVersion": self.compiler_version,
            "packageId": self.package_id,
            "title": self.title,
            "irVersion": self.ir_version,
            "packageVersion": self.package_version,
            "learningOutcomes": [{"id": o.outcome_id, "text": o.text} for o in self.outcomes],
            "slots": [
                {
                    "slotId": s.slot_id,
                    "title": s.title,
                    "nodeIds": list(s.node_ids),
                    "weight": s.weight,
                    "isPool": s.is_pool,
                }
                for s in self.slots
            ],
            "nodes": [
                {
                    "nodeId": n.node_id,
                    "title": n.title,
                    "kind": n.kind,
                    "slotId": n.slot_id,
                    "question": n.question,
                    "targets": [_target_dict(t) for t in n.targets],
                }
                for n in self.nodes
            ],
            "rules": self.rules.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MarkingConfig:
        """Read back :meth:`to_dict`; :class:`MarkingConfigError` when it is not that shape."""
        try:
            return cls(
                package_id=str(data["packageId"]),
                title=str(data["title"]),
                ir_version=str(data["irVersion"]),
                package_version=str(data["packageVersion"]),
                outcomes=tuple(
                    Outcome(str(o["id"]), str(o["text"])) for o in data["learningOutcomes"]
                ),
                slots=tuple(
                    SlotScheme(
                        slot_id=str(s["slotId"]),
                        title=str(s["title"]),
                        node_ids=tuple(str(n) for n in s["nodeIds"]),
                        weight=float(s["weight"]),
                        is_pool=bool(s["isPool"]),
                    )
                    for s in data["slots"]
                ),
                nodes=tuple(
                    NodeScheme(
                        node_id=str(n["nodeId"]),
                        title=str(n["title"]),
                        kind=str(n["kind"]),
                        slot_id=str(n["slotId"]),
                        question=str(n["question"]),
                        targets=tuple(_target_from(t, str(n["nodeId"])) for t in n["targets"]),
                    )
                    for n in data["nodes"]
                ),
                rules=RuleParameters.from_dict(data["rules"]),
                compiler_version=str(data["compilerVersion"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MarkingConfigError(f"not a marking configuration: {exc!r}") from exc


def _target_dict(t: TargetScheme) -> dict[str, Any]:
    return {
        "key": t.key,
        "targetId": t.target_id,
        "label": t.label,
        "description": t.description,
        "weight": t.weight,
        "declaredWeight": t.declared_weight,
        "dimension": t.dimension,
        "learningOutcomeIds": list(t.outcome_ids),
        "rubricLevels": [
            {
                "level": d.level.label,
                "label": d.label,
                "description": d.description,
                "declared": d.declared,
            }
            for d in t.descriptors
        ],
    }


def _target_from(data: Mapping[str, Any], node_id: str) -> TargetScheme:
    declared = data["declaredWeight"]
    return TargetScheme(
        key=str(data["key"]),
        target_id=str(data["targetId"]),
        node_id=node_id,
        label=str(data["label"]),
        description=str(data["description"]),
        weight=float(data["weight"]),
        declared_weight=None if declared is None else float(declared),
        dimension=str(data["dimension"]),
        outcome_ids=tuple(str(o) for o in data["learningOutcomeIds"]),
        descriptors=tuple(
            Descriptor(
                level=Level.parse(d["level"]),
                label=str(d["label"]),
                description=str(d["description"]),
                declared=bool(d["declared"]),
            )
            for d in data["rubricLevels"]
        ),
    )


def _normalise(weights: list[float | None]) -> list[float]:
    """Target weights of one node, normalised (see the module docstring)."""
    if not weights:
        return []
    if all(w is None for w in weights):
        return [round(1 / len(weights), 6)] * len(weights)
    values = [w or 0.0 for w in weights]
    total = sum(values)
    if total <= 0:
        return [round(1 / len(weights), 6)] * len(weights)
    return [round(v / total, 6) for v in values]


def _slot_weights(package: AssessmentPackage, slot_ids: list[str]) -> list[float]:
    extension = package.metadata.extensions.get("marking")
    declared: Mapping[str, Any] = {}
    if isinstance(extension, Mapping) and isinstance(extension.get("slotWeights"), Mapping):
        declared = extension["slotWeights"]
    raw: list[float] = []
    for slot_id in slot_ids:
        value = declared.get(slot_id, None if declared else 1.0)
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        raw.append(float(value) if ok and value is not None else 0.0)
    total = sum(raw)
    if total <= 0:
        return [round(1 / len(slot_ids), 6)] * len(slot_ids) if slot_ids else []
    return [round(v / total, 6) for v in raw]


def _rule_parameters(package: AssessmentPackage) -> RuleParameters:
    """Defaults, with ``metadata.extensions.marking.rules`` overriding known numeric keys."""
    values = RuleParameters().to_dict()
    extension = package.metadata.extensions.get("marking")
    overrides = extension.get("rules") if isinstance(extension, Mapping) else None
    if isinstance(overrides, Mapping):
        for key, default in values.items():
            value = overrides.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                values[key] = type(default)(value)
    return RuleParameters.from_dict(values)


def compile_marking(
    package: AssessmentPackage, rules: RuleParameters | None = None
) -> MarkingConfig:
    """The marking configuration of a (validated) package. Pure and deterministic."""
    counts: dict[str, int] = {}
    for node in package.nodes:
        for target in node.evidenceTargets:
            counts[target.id] = counts.get(target.id, 0) + 1
    pool_of: dict[str, str] = {}
    for pool in package.questionPools:
        for member in pool.nodeIds:
            pool_of.setdefault(member, pool.poolId)
    known_outcomes = {o.id for o in package.metadata.learningOutcomes}
    marked = [n for n in package.nodes if n.kind is not NodeKind.END and n.evidenceTargets]
    nodes = tuple(
        _node_scheme(node, pool_of.get(node.nodeId, node.nodeId), counts, known_outcomes)
        for node in marked
    )
    metadata = package.metadata
    return MarkingConfig(
        package_id=metadata.packageId,
        title=metadata.title,
        ir_version=package.irVersion,
        package_version=metadata.version or "",
        outcomes=tuple(Outcome(o.id, o.text) for o in metadata.learningOutcomes),
        slots=_slot_schemes(package, nodes, set(pool_of.values())),
        nodes=nodes,
        rules=rules or _rule_parameters(package),
    )


def _slot_schemes(
    package: AssessmentPackage, nodes: Sequence[NodeScheme], pool_ids: set[str]
) -> tuple[SlotScheme, ...]:
    """One slot per marked node, or per pool (its members' titles joined), in package order."""
    members: dict[str, list[NodeScheme]] = {}
    for node in nodes:
        members.setdefault(node.slot_id, []).append(node)
    slot_order = list(members)
    weights = _slot_weights(package, slot_order)
    return tuple(
        SlotScheme(
            slot_id=slot_id,
            title=" / ".join(n.title for n in members[slot_id]),
            node_ids=tuple(n.node_id for n in members[slot_id]),
            weight=weight,
            is_pool=slot_id in pool_ids,
        )
        for slot_id, weight in zip(slot_order, weights, strict=True)
    )


def _node_scheme(
    node: Node, slot_id: str, counts: Mapping[str, int], known_outcomes: set[str]
) -> NodeScheme:
    """A marked node: its targets with normalised weights (a target id used by several nodes
    is keyed ``node.target``)."""
    weights = _normalise([t.weight for t in node.evidenceTargets])
    targets = tuple(
        TargetScheme(
            key=target.id if counts[target.id] == 1 else f"{node.nodeId}.{target.id}",
            target_id=target.id,
            node_id=node.nodeId,
            label=target.label,
            description=target.description or "",
            weight=weight,
            declared_weight=target.weight,
            dimension=(
                target.dimension.value
                if target.dimension is not None
                else "knowledge_understanding"
            ),
            outcome_ids=tuple(c for c in target.markingCriteria if c in known_outcomes)
            or tuple(target.markingCriteria),
            descriptors=_descriptors(target),
        )
        for target, weight in zip(node.evidenceTargets, weights, strict=True)
    )
    question = (node.prompt.opening if node.prompt and node.prompt.opening else None) or (
        node.promptSeed
    )
    return NodeScheme(
        node_id=node.nodeId,
        title=node.title or node.nodeId,
        kind=node.kind.value,
        slot_id=slot_id,
        targets=targets,
        question=question,
    )


def _descriptors(target: EvidenceTarget) -> tuple[Descriptor, ...]:
    """The target's rubric descriptors, highest level first; a level it does not declare gets
    the default descriptor."""
    levels = target.rubricDescriptor.levels if target.rubricDescriptor else None
    descriptors: list[Descriptor] = []
    for level in LEVELS_DESCENDING:
        declared = getattr(levels, level.label) if levels is not None else None
        if declared is not None:
            descriptors.append(Descriptor(level, declared.label, declared.description, True))
        else:
            label, text = DEFAULT_DESCRIPTORS[level]
            descriptors.append(Descriptor(level, label, text, False))
    return tuple(descriptors)
