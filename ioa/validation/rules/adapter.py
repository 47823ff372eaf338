"""Step 9: adapter rules (ADP-001..016) and the policy rules that need the compiled task
messages (POL-005, POL-007, POL-008).

They run on every compile, after ``ioa.compiler.compile_package`` produced the flow, and compare
the flow with the package it was compiled from: a compiler bug (or a hand-edited flow) that
drops, renames or rewrites a critical construct is caught here before publication (A-5, A-7).
Each rule is a pure function ``(view) -> issues`` registered for the adapter phase, where
``view.package`` is the normalised document the compiler saw (``ioa.compiler.package_document``)
and ``view.flow`` the compiled flow. One :class:`FlowView` is shared by the rules of a validation:
the document is dumped once (or taken from the compile, ``RuleInput.compiled_from``), and the
lookups several rules need (node pairs, task message texts, blocks) are computed once.

Compile errors (chapter 07 §11: ADP-C001..C005) are raised by the compiler itself
(``CompileError``, whose findings the pipeline reports under these ids); they are declared here
so the rule catalogue lists them. ADP-C004 (a warning) is a real rule, so the warnings of a
successful compile reach the report too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, Final, TypeGuard

from ioa.compiler import DATA_CHANNEL_TOPIC, REPORT_OBSERVATION, RUNTIME_CONTROLLER_GUARD
from ioa.compiler.compiler import (
    NODE_FIELDS,
    PACKAGE_FIELDS,
    VERBATIM_NODE_FIELDS,
    compile_normalised,
    package_document,
)
from ioa.compiler.errors import COMPILE_RULES
from ioa.compiler.output_filters import MAX_SPOKEN_CHARS, REQUIRED_FILTERS
from ioa.compiler.report_observation import SIGNAL_KINDS
from ioa.compiler.task_message import (
    ANXIETY_HEADER,
    CONSISTENCY_HEADER,
    DO_NOT_HEADER,
    YOU_MAY_HEADER,
    block_action_ids,
    find_block_in_lines,
)
from ioa.schema.package import AssessmentPackage
from ioa.schema.paths import ROOT, JsonPath
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import PUBLISH, RuleInput, declare, rule

Package = Mapping[str, Any]
Flow = Mapping[str, Any]

ADP_005_MINIMUM: Final[tuple[str, ...]] = (
    "repeat",
    "clarify",
    "rephrase",
    "slow_down",
    "pause",
    "thinking_time",
    "help",
    "skip",
    "revise",
    "finish",
)
"""The ``commandDetected`` values ADP-005 names (the aliases of spec-notes §3)."""

CANONICAL_LLM_COMMANDS: Final[tuple[str, ...]] = (
    "repeat",
    "clarification",
    "request_rephrase",
    "slow_down",
    "pause",
    "thinking_aloud",
    "help",
    "skip",
    "revise_earlier_answer",
    "finish",
)
"""The canonical spellings of the same commands (spec-notes §3, LLM column)."""

CONSISTENCY_PHRASES: Final[tuple[str, ...]] = (
    "same questioning approach for all candidates",
    "do not vary your level of scaffolding",
    "perceived candidate ability",
)
"""What makes a consistency directive recognisable (POL-007)."""

ANXIETY_PHRASES: Final[tuple[str, ...]] = (
    "anxietydetected",
    "only neutral procedural support",
    "never give assessment-relevant reassurance",
)
"""What makes the anxiety directive recognisable (POL-008)."""

REASSURANCE_PATTERNS: Final[tuple[str, ...]] = (
    "you're doing great",
    "you are doing great",
    "good answer",
    "that's correct",
    "that is correct",
    "well done",
    "you're on the right track",
    "you are on the right track",
)
"""Assessment-relevant reassurance (chapter 07 §5) that no task message may ask for."""

COMPILE_WARNING_RULE: Final = "ADP-C004"
"""The only compile check that warns instead of failing the compile."""

MIN_RUBRIC_TEXT_CHARS: Final = 20
"""Rubric texts shorter than this (level labels like "Absent") are not searched for verbatim."""


# -- helpers ---------------------------------------------------------------------------------


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with a fast path for the usual dict."""
    return type(value) is dict or isinstance(value, Mapping)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if _is_mapping(value) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _package_nodes(package: Package) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, node) for i, node in enumerate(_list(package.get("nodes"))) if _is_mapping(node)]


def _compiled_nodes(flow: Flow) -> list[Mapping[str, Any]]:
    return [node for node in _list(flow.get("nodes")) if _is_mapping(node)]


def _compiled_by_name(flow: Flow) -> dict[str, Mapping[str, Any]]:
    by_name: dict[str, Mapping[str, Any]] = {}
    for node in _compiled_nodes(flow):
        by_name.setdefault(str(node.get("name")), node)
    return by_name


def _node_id(node: Mapping[str, Any]) -> str:
    return str(node.get("nodeId", ""))


def _is_end(node: Mapping[str, Any]) -> bool:
    return node.get("kind") == "end"


def _task_text(compiled: Mapping[str, Any]) -> str:
    """All task message contents of a compiled node, in order."""
    contents = [_mapping(m).get("content") for m in _list(compiled.get("task_messages"))]
    return "\n\n".join(c for c in contents if isinstance(c, str))


def _metadata(compiled: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(compiled.get("metadata"))


def _global_forbidden(package: Package) -> list[str]:
    return [str(a) for a in _list(_mapping(package.get("globalPolicies")).get("forbiddenActions"))]


def _report_observation(flow: Flow) -> Mapping[str, Any]:
    return _mapping(_mapping(flow.get("functions")).get(REPORT_OBSERVATION))


def _max_follow_ups(node: Mapping[str, Any]) -> int:
    value = _mapping(node.get("followUpPolicy")).get("maxFollowUps")
    return value if isinstance(value, int) else 0


# -- the shared view ------------------------------------------------------------------------

Pair = tuple[int, Mapping[str, Any], Mapping[str, Any]]
"""``(index, package node, compiled node)``."""


class FlowView:
    """The package the compiler saw and the compiled flow, with the lookups the rules share.

    Built once per validation (:meth:`RuleInput.memo`); every lookup is computed on first use.
    Neither the package nor the flow may change while the view is in use.
    """

    def __init__(
        self,
        package: Package,
        flow: Flow,
        compile_findings: Sequence[tuple[str, Issue]] | None = None,
    ) -> None:
        self.package = package
        self.flow = flow
        self._compile_findings = compile_findings
        self._texts: dict[int, str] = {}
        self._lines: dict[int, list[str]] = {}
        self._prompts: dict[int, str] = {}
        self._blocks: dict[tuple[int, str], list[str] | None] = {}
        self._listed: dict[tuple[int, str], set[str] | None] = {}
        self._block_texts: dict[tuple[int, str], str | None] = {}

    @cached_property
    def package_nodes(self) -> list[tuple[int, Mapping[str, Any]]]:
        """``(index, node)`` for every package node that is an object."""
        return _package_nodes(self.package)

    @cached_property
    def compiled_nodes(self) -> list[Mapping[str, Any]]:
        """The compiled node configs that are objects, in flow order."""
        return _compiled_nodes(self.flow)

    @cached_property
    def pairs(self) -> list[Pair]:
        """``(index, package node, compiled node)`` for every package node that has a config
        (the first config named with its nodeId)."""
        by_name = _compiled_by_name(self.flow)
        pairs: list[Pair] = []
        for index, node in self.package_nodes:
            compiled = by_name.get(str(node.get("nodeId")))
            if compiled is not None:
                pairs.append((index, node, compiled))
        return pairs

    @cached_property
    def report_observation(self) -> Mapping[str, Any]:
        """The flow's report_observation schema ({} if missing)."""
        return _report_observation(self.flow)

    def compile_findings(self) -> Sequence[tuple[str, Issue]]:
        """The findings of the compile (rule id, issue): from the compile that produced the flow
        when the pipeline handed them over, else from compiling the package again."""
        if self._compile_findings is None:
            _flow, findings = compile_normalised(self.package)
            self._compile_findings = [
                (f.rule_id, Issue(f.path, f.message, f.node_id)) for f in findings
            ]
        return self._compile_findings

    def task_text(self, compiled: Mapping[str, Any]) -> str:
        """All task message contents of a compiled node, in order."""
        key = id(compiled)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = _task_text(compiled)
        return text

    def prompt(self, compiled: Mapping[str, Any]) -> str:
        """The task message text, case-folded."""
        key = id(compiled)
        prompt = self._prompts.get(key)
        if prompt is None:
            prompt = self._prompts[key] = self.task_text(compiled).casefold()
        return prompt

    def lines(self, compiled: Mapping[str, Any]) -> list[str]:
        """The task message text split into lines."""
        key = id(compiled)
        lines = self._lines.get(key)
        if lines is None:
            lines = self._lines[key] = self.task_text(compiled).split("\n")
        return lines

    @cached_property
    def prompt_lines(self) -> str:
        """Every distinct line of the paired nodes' task messages, case-folded, one per line.

        A text without a line break is in some node's case-folded task message exactly when it
        is in this (``casefold`` maps character by character and never yields a line break): a
        quick test before searching node by node.
        """
        distinct = dict.fromkeys(
            line for _index, _node, compiled in self.pairs for line in self.lines(compiled)
        )
        return "\n".join(distinct).casefold()

    def block(self, compiled: Mapping[str, Any], header: str) -> list[str] | None:
        """The lines of the task message's block under ``header`` (``find_block``)."""
        key = (id(compiled), header)
        if key not in self._blocks:
            self._blocks[key] = find_block_in_lines(self.lines(compiled), header)
        return self._blocks[key]

    def listed(self, compiled: Mapping[str, Any], header: str) -> set[str] | None:
        """The action ids the block under ``header`` lists; None if there is no such block."""
        key = (id(compiled), header)
        if key not in self._listed:
            block = self.block(compiled, header)
            self._listed[key] = None if block is None else set(block_action_ids(block))
        return self._listed[key]

    def block_text(self, compiled: Mapping[str, Any], header: str) -> str | None:
        """The block under ``header`` as one case-folded line; None if there is no such block."""
        key = (id(compiled), header)
        if key not in self._block_texts:
            block = self.block(compiled, header)
            self._block_texts[key] = None if block is None else " ".join(block).casefold()
        return self._block_texts[key]


Check = Callable[[FlowView], Iterator[Issue]]

VIEW_MEMO_KEY: Final = f"{__name__}.FlowView"


def flow_view(inp: RuleInput, package: AssessmentPackage, flow: Flow) -> FlowView:
    """The view shared by the adapter rules run on ``inp`` (``inp.package`` is ``package``,
    ``inp.compiled`` is ``flow``). The package is the one the compiler saw: handed over by the
    compile step (``inp.compiled_from``), else dumped here, once."""

    def build() -> FlowView:
        document = inp.compiled_from
        if document is None:
            document = package_document(package)
        return FlowView(document, flow, inp.compile_findings)

    return inp.memo(VIEW_MEMO_KEY, build)


# -- registration ----------------------------------------------------------------------------


def adapter_rule(
    rule_id: str, summary: str, severity: Severity = Severity.ERROR
) -> Callable[[Check], Check]:
    """Register ``check`` as an adapter-phase rule run on the compiled flow."""

    def register(check: Check) -> Check:
        def run(inp: RuleInput) -> Iterator[Issue]:
            if inp.package is None or inp.compiled is None:
                return
            if not _is_mapping(inp.compiled):
                if rule_id == "ADP-001":
                    yield Issue(ROOT, "the adapter did not produce a compiled flow object")
                return
            yield from check(flow_view(inp, inp.package, inp.compiled))

        run.__name__ = check.__name__
        run.__doc__ = check.__doc__
        rule(rule_id, phase=Phase.ADAPTER, severity=severity, summary=summary)(run)
        return check

    return register


for _rule_id, (_severity, _summary) in COMPILE_RULES.items():
    if _rule_id == COMPILE_WARNING_RULE:
        continue  # a real rule below: the warnings of a successful compile reach the report
    declare(
        _rule_id,
        phase=Phase.ADAPTER,
        severity=Severity(_severity),
        summary=_summary,
        enforced_by="ioa.compiler (compile step, CompileError)",
        stages=PUBLISH,
        module=__name__,
    )


# -- compile warnings and ADP-001..016 ------------------------------------------------------


@adapter_rule(
    COMPILE_WARNING_RULE, COMPILE_RULES[COMPILE_WARNING_RULE][1], severity=Severity.WARNING
)
def compile_warnings(view: FlowView) -> Iterator[Issue]:
    """The compiler's warnings (a scaffolding node without an opening, an end node without a
    closing), which a successful compile only records in ``compileWarnings``."""
    for rule_id, issue in view.compile_findings():
        if rule_id == COMPILE_WARNING_RULE:
            yield issue


@adapter_rule(
    "ADP-001", "Every specification node MUST produce exactly one NodeConfig in the adapter output."
)
def one_config_per_node(view: FlowView) -> Iterator[Issue]:
    """Each package node has exactly one compiled node config, and there are no others."""
    names = [str(node.get("name")) for node in view.compiled_nodes]
    counts = Counter(names)
    node_ids = set()
    for index, node in view.package_nodes:
        node_id = _node_id(node)
        node_ids.add(node_id)
        count = counts[node_id]
        if count != 1:
            yield Issue(
                ("nodes", index),
                f"the compiled flow has {count} node configs for node '{node_id}', expected "
                "exactly one",
                node_id,
            )
    for name in sorted(set(names) - node_ids):
        yield Issue(ROOT, f"the compiled flow has a node config '{name}' for no package node")


@adapter_rule("ADP-002", "NodeConfig.id (Pipecat name) MUST equal the specification nodeId.")
def config_name_is_node_id(view: FlowView) -> Iterator[Issue]:
    """Compiled nodes come in package order and are named with the verbatim nodeId."""
    compiled = view.compiled_nodes
    for index, node in view.package_nodes:
        name = compiled[index].get("name") if index < len(compiled) else None
        if name != node.get("nodeId"):
            yield Issue(
                ("nodes", index, "nodeId"),
                f"node config #{index} is named {name!r}, expected the nodeId "
                f"{node.get('nodeId')!r} verbatim",
                _node_id(node),
            )


@adapter_rule(
    "ADP-003",
    "The report_observation function MUST be registered on every non-end node; no other "
    "domain-level functions are permitted.",
)
def report_observation_registered(view: FlowView) -> Iterator[Issue]:
    """Non-end nodes offer exactly report_observation; the flow defines no other function."""
    extra = sorted(set(_mapping(view.flow.get("functions"))) - {REPORT_OBSERVATION})
    if extra:
        yield Issue(
            ROOT, f"the compiled flow defines other functions than {REPORT_OBSERVATION}: {extra}"
        )
    if not view.report_observation:
        yield Issue(ROOT, f"the compiled flow does not define {REPORT_OBSERVATION}")
    for index, node, compiled in view.pairs:
        functions = _list(compiled.get("functions"))
        allowed = [] if _is_end(node) else [REPORT_OBSERVATION]
        if functions != allowed:
            yield Issue(
                ("nodes", index),
                f"node config offers the functions {functions}, expected {allowed}",
                _node_id(node),
            )


@adapter_rule(
    "ADP-004",
    "The report_observation schema MUST include a signals array with at least signalType "
    "(string), excerpt (string) and confidence (number 0.0-1.0).",
)
def signals_schema(view: FlowView) -> Iterator[Issue]:
    """signals items: signalType, signalKind (the eight kinds), excerpt, confidence in [0, 1]."""
    properties = _mapping(view.report_observation.get("properties"))
    signals = _mapping(properties.get("signals"))
    items = _mapping(signals.get("items"))
    fields = _mapping(items.get("properties"))
    required = _list(items.get("required"))
    if signals.get("type") != "array":
        yield Issue(ROOT, f"{REPORT_OBSERVATION}.signals must be an array")
    expected = {
        "signalType": "string",
        "signalKind": "string",
        "excerpt": "string",
        "confidence": "number",
    }
    for name, kind in expected.items():
        if _mapping(fields.get(name)).get("type") != kind or name not in required:
            yield Issue(
                ROOT, f"{REPORT_OBSERVATION}.signals[] must require '{name}' of type {kind}"
            )
    confidence = _mapping(fields.get("confidence"))
    if confidence.get("minimum") != 0 or confidence.get("maximum") != 1:
        yield Issue(ROOT, f"{REPORT_OBSERVATION}.signals[].confidence must be bounded to 0.0-1.0")
    kinds = _list(_mapping(fields.get("signalKind")).get("enum"))
    if sorted(kinds) != sorted(SIGNAL_KINDS):
        yield Issue(
            ROOT,
            f"{REPORT_OBSERVATION}.signals[].signalKind must enumerate the eight kinds of "
            f"EVD-008 {list(SIGNAL_KINDS)}, got {kinds}",
        )


@adapter_rule(
    "ADP-005",
    "The report_observation schema MUST include a commandDetected field with enum values "
    "covering at least: repeat, clarify, rephrase, slow_down, pause, thinking_time, help, skip, "
    "revise, finish.",
)
def command_detected_schema(view: FlowView) -> Iterator[Issue]:
    """commandDetected enumerates the ADP-005 spellings and the canonical ones."""
    properties = _mapping(view.report_observation.get("properties"))
    values = set(_list(_mapping(properties.get("commandDetected")).get("enum")))
    missing = [v for v in (*ADP_005_MINIMUM, *CANONICAL_LLM_COMMANDS) if v not in values]
    if missing:
        yield Issue(ROOT, f"{REPORT_OBSERVATION}.commandDetected lacks the values {missing}")


def _missing_from_block(
    view: FlowView, compiled: Mapping[str, Any], header: str, actions: Sequence[str]
) -> tuple[bool, list[str]]:
    listed = view.listed(compiled, header)
    if listed is None:
        return False, list(actions)
    return True, [a for a in actions if a not in listed]


@adapter_rule(
    "ADP-006",
    "forbiddenActions MUST appear in the generated task_messages developer message in a "
    "recognizable 'Do NOT' block.",
)
def forbidden_actions_in_do_not_block(view: FlowView) -> Iterator[Issue]:
    """Every node's own forbidden actions are listed in its "Do NOT" block."""
    for index, node, compiled in view.pairs:
        actions = [str(a) for a in _list(node.get("forbiddenActions"))]
        if not actions:
            continue
        found, missing = _missing_from_block(view, compiled, DO_NOT_HEADER, actions)
        for action in missing:
            where = "has no 'Do NOT' block" if not found else "does not list it in 'Do NOT'"
            yield Issue(
                ("nodes", index, "forbiddenActions", actions.index(action)),
                f"forbidden action '{action}' is missing from the task message, which {where}",
                _node_id(node),
            )


@adapter_rule(
    "ADP-007",
    "allowedActions MUST appear in the generated task_messages developer message in a "
    "recognizable 'You may' block.",
)
def allowed_actions_in_you_may_block(view: FlowView) -> Iterator[Issue]:
    """Every non-end node has a "You may" block listing its allowed actions."""
    for index, node, compiled in view.pairs:
        if _is_end(node):
            continue
        actions = [str(a) for a in _list(node.get("allowedActions"))]
        found, missing = _missing_from_block(view, compiled, YOU_MAY_HEADER, actions)
        if not found:
            yield Issue(
                ("nodes", index),
                "the task message has no 'You may' block",
                _node_id(node),
            )
            continue
        for action in missing:
            yield Issue(
                ("nodes", index, "allowedActions", actions.index(action)),
                f"allowed action '{action}' is missing from the task message's 'You may' block",
                _node_id(node),
            )


@adapter_rule(
    "ADP-008", "metadata.maxFollowUps MUST be present and equal to the specification value."
)
def max_follow_ups_metadata(view: FlowView) -> Iterator[Issue]:
    """metadata.maxFollowUps = followUpPolicy.maxFollowUps (0 without a follow-up policy)."""
    for index, node, compiled in view.pairs:
        expected = _max_follow_ups(node)
        actual = _metadata(compiled).get("maxFollowUps")
        if type(actual) is not int or actual != expected:
            yield Issue(
                ("nodes", index, "followUpPolicy", "maxFollowUps"),
                f"metadata.maxFollowUps is {actual!r}, expected {expected}",
                _node_id(node),
            )


@adapter_rule(
    "ADP-009",
    "metadata.timeBudgetSec MUST be present and equal to the specification value when "
    "timeBudget is specified.",
)
def time_budget_metadata(view: FlowView) -> Iterator[Issue]:
    """metadata.timeBudgetSec = timeBudget.maxDurationSec whenever the node has a time budget."""
    for index, node, compiled in view.pairs:
        expected = _mapping(node.get("timeBudget")).get("maxDurationSec")
        if expected is None:
            continue
        actual = _metadata(compiled).get("timeBudgetSec")
        if isinstance(actual, bool) or actual != expected:
            yield Issue(
                ("nodes", index, "timeBudget", "maxDurationSec"),
                f"metadata.timeBudgetSec is {actual!r}, expected {expected!r}",
                _node_id(node),
            )


@adapter_rule(
    "ADP-010",
    "metadata.evidenceTargets MUST list all evidence target IDs from the specification node.",
)
def evidence_targets_metadata(view: FlowView) -> Iterator[Issue]:
    """metadata.evidenceTargets lists exactly the node's target ids, in order."""
    for index, node, compiled in view.pairs:
        expected = [str(_mapping(t).get("id")) for t in _list(node.get("evidenceTargets"))]
        actual = _metadata(compiled).get("evidenceTargets")
        if actual != expected:
            yield Issue(
                ("nodes", index, "evidenceTargets"),
                f"metadata.evidenceTargets is {actual!r}, expected {expected}",
                _node_id(node),
            )


@adapter_rule("ADP-011", "metadata.irNodeId MUST be present and equal to the specification nodeId.")
def ir_node_id_metadata(view: FlowView) -> Iterator[Issue]:
    """The config at the node's position carries metadata.irNodeId = nodeId."""
    compiled = view.compiled_nodes
    for index, node in view.package_nodes:
        actual = _metadata(compiled[index]).get("irNodeId") if index < len(compiled) else None
        if actual != node.get("nodeId"):
            yield Issue(
                ("nodes", index, "nodeId"),
                f"metadata.irNodeId is {actual!r}, expected {node.get('nodeId')!r}",
                _node_id(node),
            )


def _edge_key(edge: Mapping[str, Any]) -> tuple[object, object] | None:
    """An edge's ``(id, source)`` for the index of :func:`edges_reflect_transitions`; None if
    unhashable (a list or an object: never equal to a transition's id or nodeId)."""
    key = (edge.get("id"), edge.get("source"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


@adapter_rule(
    "ADP-012",
    "edges MUST reflect all valid transitions from the specification, with guard: "
    '"runtime_controller_approval".',
)
def edges_reflect_transitions(view: FlowView) -> Iterator[Issue]:
    """One guarded edge per transition, with the condition verbatim, and no other edge."""
    edges = [e for e in _list(view.flow.get("edges")) if _is_mapping(e)]
    # Each transition takes the first unused edge (in flow order) that reflects it: same id,
    # source, target, order (position in the node's transitions), condition and guard. Only
    # edges with the transition's id and source can, so edges are indexed by (id, source).
    by_key: dict[tuple[object, object], list[int]] = {}
    for position, edge in enumerate(edges):
        key = _edge_key(edge)
        if key is not None:
            by_key.setdefault(key, []).append(position)
    used = [False] * len(edges)
    for index, node in view.package_nodes:
        source = node.get("nodeId")
        for t_index, transition in enumerate(_list(node.get("transitions"))):
            transition = _mapping(transition)
            edge_id = transition.get("id") or f"{source}#{t_index}"
            target = transition.get("targetNodeId")
            condition = transition.get("condition")
            try:
                candidates: Sequence[int] = by_key.get((edge_id, source), ())
            except TypeError:  # an unhashable id or nodeId: compare with every edge
                candidates = range(len(edges))
            match = None
            for position in candidates:
                edge = edges[position]
                if (
                    not used[position]
                    and edge.get("id") == edge_id
                    and edge.get("source") == source
                    and edge.get("target") == target
                    and edge.get("order") == t_index
                    and edge.get("condition") == condition
                    and edge.get("guard") == RUNTIME_CONTROLLER_GUARD
                ):
                    match = position
                    break
            if match is None:
                yield Issue(
                    ("nodes", index, "transitions", t_index),
                    "no edge reflects this transition verbatim with guard "
                    f"'{RUNTIME_CONTROLLER_GUARD}'",
                    _node_id(node),
                )
            else:
                used[match] = True
    for edge, taken in zip(edges, used, strict=True):
        if not taken:
            yield Issue(
                ROOT,
                f"edge {edge.get('id')!r} ({edge.get('source')} -> {edge.get('target')}, guard "
                f"{edge.get('guard')!r}) reflects no transition of the package",
            )


@adapter_rule(
    "ADP-013", "transcript hooks MUST be configured to forward to the Runtime Controller."
)
def transcript_hooks(view: FlowView) -> Iterator[Issue]:
    """transcriptHooks forward the candidate's and the examiner's speech to the controller."""
    hooks = _mapping(view.flow.get("transcriptHooks"))
    speakers = _list(hooks.get("speakers"))
    if hooks.get("forwardTo") != "runtime_controller" or "candidate" not in speakers:
        yield Issue(
            ROOT,
            "transcriptHooks must forward (forwardTo: runtime_controller) at least the "
            f"candidate's speech; got {dict(hooks)!r}",
        )


@adapter_rule("ADP-014", "dataChannel.topic MUST be specified.")
def data_channel_topic(view: FlowView) -> Iterator[Issue]:
    """dataChannel.topic is a non-empty string."""
    topic = _mapping(view.flow.get("dataChannel")).get("topic")
    if not isinstance(topic, str) or not topic.strip():
        yield Issue(
            ROOT, f"dataChannel.topic must be set (the runtime uses '{DATA_CHANNEL_TOPIC}')"
        )


_RUNTIME_VERBATIM: Final[tuple[tuple[str, str], ...]] = (
    ("persona", "persona"),
    ("globalPolicies", "globalPolicies"),
    ("metadata", "packageMetadata"),
)


@adapter_rule(
    "ADP-015",
    "The adapter MUST NOT drop specification constructs that have no Pipecat equivalent: they "
    "are encoded as metadata for the Runtime Controller.",
)
def nothing_dropped(view: FlowView) -> Iterator[Issue]:
    """Every package construct survives verbatim in node metadata or the runtime section."""
    package = view.package
    runtime = _mapping(view.flow.get("runtime"))
    for field in sorted(set(package) - PACKAGE_FIELDS):
        yield Issue((field,), f"package field '{field}' has no adapter mapping")
    for key, location in _RUNTIME_VERBATIM:
        if key in package and runtime.get(location) != package[key]:
            yield Issue((key,), f"runtime.{location} does not hold {key} verbatim")
    if _list(runtime.get("questionPools")) != _list(package.get("questionPools")):
        yield Issue(("questionPools",), "runtime.questionPools does not hold the pools verbatim")
    for index, node, compiled in view.pairs:
        metadata = _metadata(compiled)
        for field in sorted(set(node) - NODE_FIELDS):
            yield Issue(("nodes", index, field), f"node field '{field}' has no adapter mapping")
        checks: list[tuple[str, str, object]] = [
            (key, key, node[key]) for key in VERBATIM_NODE_FIELDS if key in node
        ]
        checks += [
            ("kind", "kind", node.get("kind")),
            ("evidenceTargets", "evidenceTargetDefinitions", _list(node.get("evidenceTargets"))),
            ("forbiddenActions", "forbiddenActions", _list(node.get("forbiddenActions"))),
            ("allowedActions", "allowedActions", _list(node.get("allowedActions"))),
            ("recoveryHandlers", "recoveryHandlers", _list(node.get("recoveryHandlers"))),
            ("transitions", "transitions", _list(node.get("transitions"))),
        ]
        for field, location, expected in checks:
            if metadata.get(location) != expected:
                yield Issue(
                    ("nodes", index, field),
                    f"metadata.{location} does not hold the node's {field} verbatim",
                    _node_id(node),
                )


def _rubric_texts(target: object) -> list[str]:
    """The label and description of every rubric level of one evidence target."""
    levels = _mapping(_mapping(_mapping(target).get("rubricDescriptor")).get("levels"))
    return [
        str(value)
        for level in levels.values()
        for key, value in _mapping(level).items()
        if key in ("label", "description")
    ]


@adapter_rule(
    "ADP-016",
    "The compiled flow MUST configure outputValidationFilters: at least persona_break, "
    "rubric_leak, topic_containment and length.",
)
def output_validation_filters(view: FlowView) -> Iterator[Issue]:
    """The filters are configured, every node gives rubric_leak its texts, and rubric level
    text stays out of the LLM's prompt (A-2)."""
    filters = {
        str(f.get("name")): f
        for f in _list(_mapping(view.flow.get("outputValidationFilters")).get("filters"))
        if _is_mapping(f)
    }
    for name in REQUIRED_FILTERS:
        if filters.get(name, {}).get("enabled") is not True:
            yield Issue(ROOT, f"outputValidationFilters lacks an enabled '{name}' filter")
    max_chars = filters.get("length", {}).get("maxChars")
    if "length" in filters and (not isinstance(max_chars, int) or max_chars > MAX_SPOKEN_CHARS):
        yield Issue(ROOT, f"the length filter must cap spokenText at {MAX_SPOKEN_CHARS} characters")
    for index, node, compiled in view.pairs:
        leak_texts = _list(
            _mapping(_metadata(compiled).get("outputFilterContext")).get("rubricLeakTexts")
        )
        for t_index, target in enumerate(_list(node.get("evidenceTargets"))):
            where: JsonPath = ("nodes", index, "evidenceTargets", t_index)
            rubric_texts = _rubric_texts(target)
            for text in [_mapping(target).get("description"), *rubric_texts]:
                if isinstance(text, str) and text and text not in leak_texts:
                    yield Issue(
                        where,
                        f"metadata.outputFilterContext.rubricLeakTexts lacks {text!r}, so the "
                        "rubric_leak filter cannot catch it",
                        _node_id(node),
                    )
            for text in rubric_texts:
                if len(text) >= MIN_RUBRIC_TEXT_CHARS and text.casefold() in view.prompt(compiled):
                    yield Issue(
                        (*where, "rubricDescriptor"),
                        f"rubric level text {text!r} appears in the task message; rubric levels "
                        "must never reach the LLM's prompt",
                        _node_id(node),
                    )


# -- POL-005, POL-007, POL-008 ---------------------------------------------------------------


@adapter_rule(
    "POL-005",
    "forbiddenActions from GlobalRuntimePolicies MUST be propagated into the Pipecat adapter's "
    "task_messages.",
)
def global_forbidden_actions_propagated(view: FlowView) -> Iterator[Issue]:
    """Every node's "Do NOT" block lists every global forbidden action."""
    actions = _global_forbidden(view.package)
    if not actions:
        return
    for _index, node, compiled in view.pairs:
        _found, missing = _missing_from_block(view, compiled, DO_NOT_HEADER, actions)
        for action in missing:
            yield Issue(
                ("globalPolicies", "forbiddenActions", actions.index(action)),
                f"global forbidden action '{action}' is missing from the 'Do NOT' block of node "
                f"'{_node_id(node)}'",
                _node_id(node),
            )


@adapter_rule(
    "POL-007",
    "The task_messages generated by the adapter MUST include a prompting consistency directive "
    "(same questioning approach for all candidates, no scaffolding varied by perceived ability).",
)
def consistency_directive(view: FlowView) -> Iterator[Issue]:
    """Every non-end node's task message carries the consistency directive."""
    for index, node, compiled in view.pairs:
        if _is_end(node):
            continue
        text = view.block_text(compiled, CONSISTENCY_HEADER)
        missing = [p for p in CONSISTENCY_PHRASES if text is None or p not in text]
        if missing:
            yield Issue(
                ("nodes", index),
                f"the task message lacks the prompting consistency directive ({missing[0]!r})",
                _node_id(node),
            )


@adapter_rule(
    "POL-008",
    "When anxiety is detected the examiner gives only neutral procedural support, never "
    "assessment-relevant reassurance: the task messages say so and never ask for reassurance.",
)
def anxiety_directive(view: FlowView) -> Iterator[Issue]:
    """Every non-end node carries the anxiety directive; no task message asks for reassurance;
    the LLM can report anxiety (anxietyDetected is a required boolean)."""
    properties = _mapping(view.report_observation.get("properties"))
    required = _list(view.report_observation.get("required"))
    if _mapping(properties.get("anxietyDetected")).get("type") != "boolean" or (
        "anxietyDetected" not in required
    ):
        yield Issue(ROOT, f"{REPORT_OBSERVATION} must require a boolean anxietyDetected")
    # The patterns have no line break: one search of the distinct lines rules most of them out.
    present = [pattern for pattern in REASSURANCE_PATTERNS if pattern in view.prompt_lines]
    for index, node, compiled in view.pairs:
        for pattern in present:
            if pattern in view.prompt(compiled):
                yield Issue(
                    ("nodes", index),
                    f"the task message contains the assessment-relevant reassurance {pattern!r}",
                    _node_id(node),
                )
        if _is_end(node):
            continue
        text = view.block_text(compiled, ANXIETY_HEADER)
        missing = [p for p in ANXIETY_PHRASES if text is None or p not in text]
        if missing:
            yield Issue(
                ("nodes", index),
                f"the task message lacks the anxiety directive ({missing[0]!r})",
                _node_id(node),
            )
