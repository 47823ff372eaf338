"""The Pipecat adapter compiler: assessment package -> :class:`CompiledFlow` (chapter 07).

Pure, stateless and deterministic (A-4, A-6): the same package always gives the same flow, with
no clock, randomness, environment or set iteration involved. Lossless for critical data (A-5):
node ids, question texts, evidence targets, time budgets, allowed and forbidden actions and
transition conditions are copied verbatim into the output. Everything Pipecat cannot express is
kept as runtime metadata (A-7, ADP-015); a construct the compiler does not know is a compile
error, never silently dropped.
"""

from __future__ import annotations

import copy
import hashlib
import json
import marshal
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple, TypeGuard, cast

from ioa.canonical import CHECKSUM_ALGORITHM, checksum
from ioa.compiler.errors import COMPILE_RULES, CompileError, CompileFinding, CompileSeverity
from ioa.compiler.output_filters import output_validation_config
from ioa.compiler.report_observation import (
    ALWAYS_ALLOWED_COMMANDS,
    COMMAND_ALIASES,
    REPORT_OBSERVATION,
    report_observation_schema,
)
from ioa.compiler.task_message import TaskMessageInputs, build_task_message
from ioa.compiler.types import (
    ActionSpec,
    CompiledEdge,
    CompiledFlow,
    CompiledNode,
    ContextStrategyName,
    ContextStrategySpec,
    JSONObject,
    NodeMetadata,
    RuntimeSpec,
)
from ioa.languages import DEFAULT_LANGUAGE, language_directive, supported_language
from ioa.schema import AssessmentPackage, ConditionType, NodeKind, load_package
from ioa.schema.enums import EVIDENCE_SUFFICIENT_ALIAS
from ioa.schema.paths import JsonPath, render_path, usable_node_labels

ADAPTER_VERSION: Final = "pipecat-adapter/0.2"
"""Versions the report_observation schema, the task message template, the node compilation rules
and the data-channel event schemas (chapter 07 §12). Bump it with any change of the output."""

DEFAULT_ROLE_MESSAGE: Final = "You are an examiner conducting an oral assessment."
DATA_CHANNEL_TOPIC: Final = "exam-runtime-events"
RUNTIME_CONTROLLER_GUARD: Final = "runtime_controller_approval"

SUMMARY_PROMPT: Final = (
    "Summarise the examination conversation so far in three to five neutral sentences for the "
    "examiner's continuity: which topics were covered and which questions were asked. Do not "
    "judge, grade or praise the candidate's answers and do not mention marking criteria."
)
"""The instruction a ``reset_with_summary`` summary is generated with (§6)."""

ASSESSMENT_KINDS: Final = frozenset(
    {NodeKind.QUESTION, NodeKind.SCENARIO, NodeKind.TASK, NodeKind.DISCUSSION}
)
"""Node kinds that gather evidence: an opening prompt is mandatory (§11). The other non-end
kinds (warmup, wrapup, branch, identity_check) are scaffolding: a missing opening is a warning."""

CONTEXT_STRATEGIES: Final[tuple[ContextStrategyName, ...]] = (
    "reset",
    "append",
    "reset_with_summary",
)

EVERY_TURN_CONDITIONS: Final = frozenset(
    {
        ConditionType.TIME_ELAPSED,
        ConditionType.TURN_COUNT_REACHED,
        ConditionType.CANDIDATE_COMMAND,
        ConditionType.POLICY_ESCALATION,
    }
)
NATURAL_COMPLETION_CONDITIONS: Final = frozenset(
    {ConditionType.ALWAYS, ConditionType.EVIDENCE_SATISFIED, EVIDENCE_SUFFICIENT_ALIAS}
)
"""When the runtime checks each condition type (spec-notes §2)."""
KNOWN_CONDITIONS: Final = EVERY_TURN_CONDITIONS | NATURAL_COMPLETION_CONDITIONS

PACKAGE_FIELDS: Final = frozenset(
    {
        "irVersion",
        "metadata",
        "persona",
        "globalPolicies",
        "initialNodeId",
        "questionPools",
        "nodes",
    }
)
NODE_FIELDS: Final = frozenset(
    {
        "nodeId",
        "kind",
        "title",
        "endType",
        "promptSeed",
        "scenario",
        "prompt",
        "evidenceTargets",
        "followUpPolicy",
        "completionPolicy",
        "timeBudget",
        "forbiddenActions",
        "allowedActions",
        "candidateCommands",
        "recoveryHandlers",
        "contextPolicy",
        "transitions",
        "grounding",
    }
)
"""Every package and node field the compiler maps (docs/spec/adapter.md, mapping table). A
field outside these sets is a compile error (ADP-015): the schema grew and the adapter did not."""

PackageInput = AssessmentPackage | Mapping[str, Any]

_CANONICAL_ENCODER: Final = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    check_circular=False,
)
"""The canonical JSON text of ``ioa.canonical`` (same options) without the cycle check, for
documents known to be plain, acyclic JSON (see :meth:`_Compilation.checksum`)."""


def json_copy[T](value: T) -> T:
    """A deep copy of ``value``, fast for plain JSON data.

    ``marshal`` copies trees of exact ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``
    at C speed (same values, same key order); anything it cannot copy (subclasses, other
    objects, very deep nesting) goes through :func:`copy.deepcopy`.
    """
    try:
        # Safe: the bytes were produced by marshal.dumps just now, in this process.
        return cast(T, marshal.loads(marshal.dumps(cast(Any, value))))  # noqa: S302
    except ValueError:
        return copy.deepcopy(value)


def _keep[T](value: T) -> T:
    """The identity: used instead of a copy when the compilation owns its document."""
    return value


def package_document(package: PackageInput) -> dict[str, Any]:
    """The normalised package the compiler works on, as a JSON dict.

    An ``AssessmentPackage`` is dumped by alias without nulls; a dict is loaded first
    (``ioa.schema.load_package``: schema check and normalisation of deprecated spellings, raising
    ``PackageLoadError``), so both inputs give byte-identical flows.
    """
    model = package if isinstance(package, AssessmentPackage) else load_package(dict(package))
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with a fast path for the usual dict."""
    return type(value) is dict or isinstance(value, Mapping)


def _ids(items: Iterable[Mapping[str, Any]], key: str) -> list[str]:
    return [str(item[key]) for item in items if _is_mapping(item) and key in item]


class _Ids:
    """A list of ids with set-speed membership (``in`` means what it means for the list)."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        self.set = frozenset(ids)

    def __contains__(self, item: object) -> bool:
        try:
            return item in self.set
        except TypeError:  # unhashable: compare with each id, as the list would
            return item in self.ids


def _unique(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


def _time_budget_sec(node: Mapping[str, Any]) -> int | float | None:
    """``timeBudget.maxDurationSec`` verbatim (the loader already converted ``timeBudgetMs``)."""
    budget = node.get("timeBudget")
    if _is_mapping(budget) and isinstance(budget.get("maxDurationSec"), int | float):
        return cast(int | float, budget["maxDurationSec"])
    return None


def _max_follow_ups(node: Mapping[str, Any]) -> int:
    policy = node.get("followUpPolicy")
    if _is_mapping(policy) and policy.get("maxFollowUps") is not None:
        return int(policy["maxFollowUps"])
    return 0  # no follow-up policy: the opening question only (POL-F002)


class _Compilation:
    """One compile run: collects findings, then builds the flow if there are no errors."""

    def __init__(self, document: Mapping[str, Any], *, owned: bool = False) -> None:
        self.document = document
        self.owned = owned
        self.copy: Callable[[Any], Any] = _keep if owned else json_copy
        """How a part of the document is put into the flow. Every part appears once in the flow
        (a part needed twice is copied with :func:`json_copy` the second time), so the flow never
        shares objects with itself; it shares them with the document only if ``owned`` (the
        document was made for this compilation, see :func:`package_document`)."""
        self.findings: list[CompileFinding] = []
        self.labels = usable_node_labels(document)
        self.nodes: list[Mapping[str, Any]] = list(document.get("nodes") or [])
        self.node_ids = _ids(self.nodes, "nodeId")
        self.pools: list[Mapping[str, Any]] = list(document.get("questionPools") or [])
        self.pool_ids = _ids(self.pools, "poolId")
        self.node_id_set = _Ids(self.node_ids)
        self.pool_id_set = _Ids(self.pool_ids)
        policies = document.get("globalPolicies") or {}
        self.global_forbidden = [str(a) for a in policies.get("forbiddenActions") or []]
        self.default_commands: JSONObject = json_copy(
            policies.get("defaultCandidateCommands") or {"allowed": [], "forbidden": []}
        )
        self.pool_index: dict[str, list[Mapping[str, Any]]] | None = None
        """Node id -> the pools naming it (set by :meth:`build`; None: scan the pools)."""

    def report(
        self, rule_id: str, message: str, path: JsonPath, node_id: str | None = None
    ) -> None:
        severity: CompileSeverity = COMPILE_RULES.get(rule_id, ("error", ""))[0]
        self.findings.append(
            CompileFinding(
                rule_id=rule_id,
                severity=severity,
                message=message,
                path=path,
                node_id=node_id,
                rendered_path=render_path(path, self.labels),
            )
        )

    # -- checks (§11) --------------------------------------------------------------------------

    def check(self) -> None:
        for field in sorted(set(self.document) - PACKAGE_FIELDS):
            self.report(
                "ADP-015",
                f"package field '{field}' has no adapter mapping; the adapter refuses to drop "
                "it silently: extend ioa.compiler or remove the field",
                (field,),
            )
        seen: set[str] = set()
        for index, node_id in enumerate(self.node_ids):
            if node_id in seen:
                self.report(
                    "ADP-001",
                    f"node id '{node_id}' is used twice; every node needs its own config",
                    ("nodes", index, "nodeId"),
                    node_id,
                )
            seen.add(node_id)
        initial = self.document.get("initialNodeId")
        if initial not in self.node_id_set:
            self.report(
                "ADP-C002", f"initialNodeId '{initial}' does not name a node", ("initialNodeId",)
            )
        for p_index, pool in enumerate(self.pools):
            for m_index, member in enumerate(pool.get("nodeIds") or []):
                if member not in self.node_id_set:
                    self.report(
                        "ADP-C002",
                        f"question pool '{pool.get('poolId')}' names a missing node '{member}'",
                        ("questionPools", p_index, "nodeIds", m_index),
                    )
        for index, node in enumerate(self.nodes):
            self.check_node(index, node)

    def check_node(self, index: int, node: Mapping[str, Any]) -> None:
        node_id = str(node.get("nodeId", ""))
        where: JsonPath = ("nodes", index)
        for field in sorted(set(node) - NODE_FIELDS):
            self.report(
                "ADP-015",
                f"node field '{field}' has no adapter mapping; the adapter refuses to drop it "
                "silently: extend ioa.compiler or remove the field",
                (*where, field),
                node_id,
            )
        targets = set(_ids(node.get("evidenceTargets") or [], "id"))
        completion = node.get("completionPolicy") or {}
        for t_index, target in enumerate(completion.get("requiredEvidenceTargetIds") or []):
            if target not in targets:
                self.report(
                    "ADP-C001",
                    f"completionPolicy requires evidence target '{target}', which this node "
                    "does not define; define it in evidenceTargets or remove the reference",
                    (*where, "completionPolicy", "requiredEvidenceTargetIds", t_index),
                    node_id,
                )
        for t_index, transition in enumerate(node.get("transitions") or []):
            self.check_transition(node_id, (*where, "transitions", t_index), targets, transition)
        self.check_prompt(node_id, where, node)
        forbidden = set(node.get("forbiddenActions") or []) | set(self.global_forbidden)
        for a_index, action in enumerate(node.get("allowedActions") or []):
            if action in forbidden:
                self.report(
                    "ADP-C005",
                    f"action '{action}' is both allowed here and forbidden (by the node or "
                    "globalPolicies); the LLM would get contradictory instructions",
                    (*where, "allowedActions", a_index),
                    node_id,
                )
        strategy = (node.get("contextPolicy") or {}).get("strategy")
        if strategy is not None and strategy not in CONTEXT_STRATEGIES:
            self.report(
                "ADP-015",
                f"context strategy '{strategy}' has no Pipecat mapping",
                (*where, "contextPolicy", "strategy"),
                node_id,
            )

    def check_transition(
        self, node_id: str, where: JsonPath, targets: set[str], transition: Mapping[str, Any]
    ) -> None:
        target = transition.get("targetNodeId")
        if target not in self.node_id_set and target not in self.pool_id_set:
            self.report(
                "ADP-C002",
                f"transition targets '{target}', which is neither a node nor a question pool",
                (*where, "targetNodeId"),
                node_id,
            )
        condition = transition.get("condition") or {}
        kind = condition.get("type")
        if kind not in KNOWN_CONDITIONS:
            self.report(
                "ADP-015",
                f"condition type '{kind}' has no runtime mapping",
                (*where, "condition", "type"),
                node_id,
            )
        for key in ("targetIds", "requiredEvidence"):
            for r_index, reference in enumerate(condition.get(key) or []):
                if reference not in targets:
                    self.report(
                        "ADP-C001",
                        f"transition condition references evidence target '{reference}', "
                        "which this node does not define",
                        (*where, "condition", key, r_index),
                        node_id,
                    )

    def check_prompt(self, node_id: str, where: JsonPath, node: Mapping[str, Any]) -> None:
        prompt = node.get("prompt") or {}
        kind = node.get("kind")
        if kind == NodeKind.END:
            if not prompt.get("closing"):
                self.report(
                    "ADP-C004",
                    "end node has no prompt.closing; the session ends without a spoken closing",
                    (*where, "prompt", "closing"),
                    node_id,
                )
        elif not prompt.get("opening") and not isinstance(node.get("grounding"), Mapping):
            # A grounded node asks about the drawn passage (or its fallbackQuestion), GRD-002.
            rule_id = "ADP-C003" if kind in ASSESSMENT_KINDS else "ADP-C004"
            consequence = (
                "the adapter has no question to ask"
                if rule_id == "ADP-C003"
                else "the LLM opens from promptSeed alone"
            )
            self.report(
                rule_id,
                f"{kind} node has no prompt.opening; {consequence}",
                (*where, "prompt", "opening"),
                node_id,
            )

    # -- output --------------------------------------------------------------------------------

    def role_message(self) -> str:
        """The persona's role message; for an exam not in English, followed by the instruction
        to examine in its language (an English package's message is unchanged)."""
        persona = self.document.get("persona") or {}
        message = str(persona.get("roleMessage") or DEFAULT_ROLE_MESSAGE)
        metadata = self.document.get("metadata") or {}
        tag = metadata.get("language") if isinstance(metadata, Mapping) else None
        language = supported_language(tag if isinstance(tag, str) else None)
        if language is None or language == DEFAULT_LANGUAGE:
            return message
        return f"{message}\n\n{language_directive(language)}"

    def compile_node(self, node: Mapping[str, Any], role_message: str) -> CompiledNode:
        node_id = str(node["nodeId"])
        is_end = node.get("kind") == NodeKind.END
        max_follow_ups = _max_follow_ups(node)
        time_budget = _time_budget_sec(node)
        forbidden = _unique([*(node.get("forbiddenActions") or []), *self.global_forbidden])
        content = build_task_message(
            TaskMessageInputs(
                node=node,
                forbidden_actions=forbidden,
                max_follow_ups=max_follow_ups,
                time_budget_sec=time_budget,
            )
        )
        closing = (node.get("prompt") or {}).get("closing")
        pre_actions: list[ActionSpec] = []
        if is_end:
            # The closing is spoken verbatim (no LLM run), then the pipeline ends.
            end_action: ActionSpec = {"type": "end_conversation"}
            if closing:
                end_action["text"] = str(closing)
            pre_actions.append(end_action)
        return {
            "name": node_id,
            "role_message": role_message,
            "task_messages": [{"role": "developer", "content": content}],
            "functions": [] if is_end else [REPORT_OBSERVATION],
            "pre_actions": pre_actions,
            "post_actions": [],
            "context_strategy": context_strategy(node),
            "respond_immediately": not is_end,
            "metadata": self.node_metadata(node, forbidden, max_follow_ups, time_budget),
        }

    def node_metadata(
        self,
        node: Mapping[str, Any],
        forbidden: Sequence[str],
        max_follow_ups: int,
        time_budget: int | float | None,
    ) -> NodeMetadata:
        node_id = str(node["nodeId"])
        own = self.copy
        targets = [own(_as_dict(t)) for t in node.get("evidenceTargets") or []]
        metadata: NodeMetadata = {
            "irNodeId": node_id,
            "kind": str(node.get("kind", "")),
            "maxFollowUps": max_follow_ups,
            "evidenceTargets": _ids(targets, "id"),
            "evidenceTargetDefinitions": targets,
            "forbiddenActions": [str(a) for a in node.get("forbiddenActions") or []],
            "allowedActions": [str(a) for a in node.get("allowedActions") or []],
            "effectiveForbiddenActions": list(forbidden),
            # A second copy: candidateCommands is also kept verbatim below.
            "effectiveCandidateCommands": json_copy(
                node.get("candidateCommands") or self.default_commands
            ),
            "recoveryHandlers": own(_as_list(node.get("recoveryHandlers") or [])),
            "transitions": own(_as_list(node.get("transitions") or [])),
            "questionPoolIds": [str(pool["poolId"]) for pool in self.pools_of(node_id)],
            "outputFilterContext": {
                "rubricLeakTexts": _rubric_leak_texts(targets),
                "scenarioDomain": _scenario_domain(node),
            },
        }
        if time_budget is not None:
            metadata["timeBudgetSec"] = time_budget
        verbatim = cast(dict[str, Any], metadata)
        for key in VERBATIM_NODE_FIELDS:
            if key in node:
                verbatim[key] = own(node[key])
        return metadata

    def pools_of(self, node_id: str) -> list[Mapping[str, Any]]:
        """The pools whose ``nodeIds`` contain ``node_id``, in package order."""
        if self.pool_index is None:
            return [pool for pool in self.pools if node_id in (pool.get("nodeIds") or [])]
        return self.pool_index.get(node_id, [])

    def edges(self) -> list[CompiledEdge]:
        edges: list[CompiledEdge] = []
        pool_ids = self.pool_id_set.set  # targets are strings here
        for node in self.nodes:
            node_id = str(node["nodeId"])
            for index, transition in enumerate(node.get("transitions") or []):
                # A copy: the transition itself is kept in the node's metadata.
                condition = json_copy(_as_dict(transition.get("condition") or {}))
                target = str(transition["targetNodeId"])
                edges.append(
                    {
                        "id": str(transition.get("id") or f"{node_id}#{index}"),
                        "source": node_id,
                        "target": target,
                        "targetKind": "pool" if target in pool_ids else "node",
                        "order": index,
                        "condition": condition,
                        "checkedOn": (
                            "every_turn"
                            if condition.get("type") in EVERY_TURN_CONDITIONS
                            else "natural_completion"
                        ),
                        "guard": RUNTIME_CONTROLLER_GUARD,
                    }
                )
        return edges

    def runtime(self) -> RuntimeSpec:
        metadata = self.document.get("metadata") or {}
        own = self.copy
        runtime: RuntimeSpec = {
            "packageMetadata": own(_as_dict(metadata)),
            "questionPools": [own(_as_dict(pool)) for pool in self.pools],
            "commandAliases": dict(COMMAND_ALIASES),
            "alwaysAllowedCommands": list(ALWAYS_ALLOWED_COMMANDS),
        }
        if "persona" in self.document:
            runtime["persona"] = own(self.document["persona"])
        if "globalPolicies" in self.document:
            runtime["globalPolicies"] = own(self.document["globalPolicies"])
        if isinstance(metadata.get("totalTimeBudgetSec"), int | float):
            runtime["totalTimeBudgetSec"] = metadata["totalTimeBudgetSec"]
        return runtime

    def checksum(self) -> str:
        """``ioa.canonical.checksum`` of the document.

        An owned document is a ``model_dump(mode="json")`` (:func:`package_document`): plain,
        acyclic JSON by construction, so the checks ``ioa.canonical`` makes (cycles; serialise,
        parse back, compare) are skipped; if serialising fails, ``checksum`` runs and raises as
        it would have.
        """
        if self.owned:
            try:
                text = _CANONICAL_ENCODER.encode(self.document).encode("utf-8")
            except (TypeError, ValueError, RecursionError):
                pass
            else:
                return f"{CHECKSUM_ALGORITHM}:{hashlib.sha256(text).hexdigest()}"
        return checksum(self.document)

    def build(self) -> CompiledFlow:
        self.pool_index = _index_pools(self.pools)
        role_message = self.role_message()
        metadata = self.document.get("metadata") or {}
        return {
            "adapterVersion": ADAPTER_VERSION,
            "irVersion": str(self.document.get("irVersion", "")),
            "packageId": str(metadata.get("packageId", "")),
            "packageChecksum": self.checksum(),
            "initialNode": str(self.document["initialNodeId"]),
            "functions": {REPORT_OBSERVATION: report_observation_schema()},
            "nodes": [self.compile_node(node, role_message) for node in self.nodes],
            "edges": self.edges(),
            "transcriptHooks": {
                "forwardTo": "runtime_controller",
                "speakers": ["candidate", "examiner"],
                "finalOnly": True,
                "event": "transcript_final",
            },
            "dataChannel": {"topic": DATA_CHANNEL_TOPIC, "reliable": True},
            "outputValidationFilters": output_validation_config(),
            "runtime": self.runtime(),
            "compileWarnings": [f.to_dict() for f in self.findings if f.severity != "error"],
        }


VERBATIM_NODE_FIELDS: Final[tuple[str, ...]] = (
    "title",
    "endType",
    "promptSeed",
    "scenario",
    "prompt",
    "timeBudget",
    "followUpPolicy",
    "completionPolicy",
    "candidateCommands",
    "contextPolicy",
    "grounding",
)
"""Node fields copied as they are into ``metadata`` (besides the ones with their own key)."""


def _index_pools(pools: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]] | None:
    """Node id -> the pools whose ``nodeIds`` list names it (each pool once, in package order);
    None if a ``nodeIds`` is not a list (then membership is tested pool by pool)."""
    index: dict[str, list[Mapping[str, Any]]] = {}
    for pool in pools:
        members = pool.get("nodeIds") or []
        if type(members) is not list:
            return None
        for member in dict.fromkeys(m for m in members if isinstance(m, str)):
            index.setdefault(member, []).append(pool)
    return index


def _as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` if it is a dict, else a dict of its items (what ``dict(value)`` gives)."""
    return value if type(value) is dict else dict(value)


def _as_list(value: Iterable[Any]) -> list[Any]:
    """``value`` if it is a list, else a list of its items (what ``list(value)`` gives)."""
    return value if type(value) is list else list(value)


def context_strategy(node: Mapping[str, Any]) -> ContextStrategySpec:
    """The node's ``contextPolicy.strategy``; default ``reset``, ``reset_with_summary`` for the
    wrap-up (spec-notes §1, beats chapter)."""
    policy = node.get("contextPolicy") or {}
    default = "reset_with_summary" if node.get("kind") == NodeKind.WRAPUP else "reset"
    strategy = cast(ContextStrategyName, policy.get("strategy") or default)
    spec: ContextStrategySpec = {"strategy": strategy}
    if strategy == "reset_with_summary":
        spec["summaryPrompt"] = SUMMARY_PROMPT
    return spec


def _rubric_leak_texts(targets: Sequence[Mapping[str, Any]]) -> list[str]:
    """Target descriptions and rubric level texts: what ``spokenText`` must never echo."""
    texts: list[str] = []
    for target in targets:
        if target.get("description"):
            texts.append(str(target["description"]))
        levels = (target.get("rubricDescriptor") or {}).get("levels") or {}
        for level in levels.values():
            if _is_mapping(level):
                texts.extend(str(level[key]) for key in ("label", "description") if level.get(key))
    return _unique(texts)


def _scenario_domain(node: Mapping[str, Any]) -> str:
    prompt = node.get("prompt") or {}
    parts = [node.get("title"), node.get("scenario"), node.get("promptSeed"), prompt.get("opening")]
    return "\n".join(str(part) for part in parts if part)


def _compile(
    document: Mapping[str, Any], *, owned: bool
) -> tuple[CompiledFlow | None, list[CompileFinding]]:
    compilation = _Compilation(document, owned=owned)
    compilation.check()
    if any(finding.severity == "error" for finding in compilation.findings):
        return None, compilation.findings
    return compilation.build(), compilation.findings


def compile_normalised(
    document: Mapping[str, Any],
) -> tuple[CompiledFlow | None, list[CompileFinding]]:
    """Compile an already normalised package dict (see :func:`package_document`).

    Returns the flow (``None`` on any error) and every finding (errors and warnings). The flow
    shares no object with ``document``.
    """
    return _compile(document, owned=False)


def compile_with_findings(
    package: PackageInput,
) -> tuple[CompiledFlow | None, list[CompileFinding]]:
    """Compile, returning the flow (``None`` on any error) and every finding (errors, warnings)."""
    return _compile(package_document(package), owned=True)


class ValidationCompile(NamedTuple):
    """What :func:`compile_for_validation` returns."""

    flow: CompiledFlow
    document: dict[str, Any]
    """The normalised package the flow was compiled from (:func:`package_document`). The flow
    holds parts of it: neither may be modified."""
    findings: tuple[CompileFinding, ...]
    """Every finding of the compile (warnings only: an error raises)."""


def compile_for_validation(package: PackageInput) -> ValidationCompile:
    """:func:`compile_package`, also returning the document the flow was compiled from and the
    compile findings, so the validation pipeline (step 9) compiles and dumps the package once.

    Raises :class:`CompileError` exactly when :func:`compile_package` does.
    """
    document = package_document(package)
    flow, findings = _compile(document, owned=True)
    if flow is None:
        raise CompileError(findings)
    return ValidationCompile(flow, document, tuple(findings))


def compile_package(package: PackageInput) -> CompiledFlow:
    """Compile a validated package into its Pipecat flow.

    Accepts the schema's ``AssessmentPackage`` or a package dict (loaded and normalised first,
    see :func:`package_document`). Fails closed: raises
    :class:`CompileError` (carrying the findings) when the package cannot be compiled
    faithfully. Compile warnings are recorded in the flow's ``compileWarnings``.
    """
    flow, findings = compile_with_findings(package)
    if flow is None:
        raise CompileError(findings)
    return flow
