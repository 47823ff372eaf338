"""The compiled flow: the adapter's output format (``pipecat-adapter/0.2``).

Everything here is plain JSON (dicts, lists, strings, numbers, booleans), so a compiled flow
can be serialised, stored next to the published package, diffed and audited. The keys of a
:class:`CompiledNode` that Pipecat Flows understands (``name``, ``role_message``,
``task_messages``, ``functions``, ``pre_actions``, ``post_actions``, ``context_strategy``,
``respond_immediately``) keep Pipecat's ``NodeConfig`` spelling; everything the runtime needs and
Pipecat cannot express lives under ``metadata`` (per node) or ``runtime`` (per package).
``docs/spec/adapter.md`` describes every field.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

JSONObject = dict[str, Any]
"""A JSON object copied verbatim from the package (never interpreted by the compiler)."""

ContextStrategyName = Literal["reset", "append", "reset_with_summary"]


class TaskMessage(TypedDict):
    """One of a node's task messages: the LLM's instructions for the node."""

    role: Literal["developer"]
    content: str


class ContextStrategySpec(TypedDict):
    """How the LLM context is treated when the node is entered (Pipecat ``context_strategy``)."""

    strategy: ContextStrategyName
    summaryPrompt: NotRequired[str]
    """Only for ``reset_with_summary``: the instruction the summary is generated with."""


class ActionSpec(TypedDict):
    """A Pipecat built-in action (``tts_say`` or ``end_conversation``)."""

    type: Literal["tts_say", "end_conversation"]
    text: NotRequired[str]


class FunctionSchemaSpec(TypedDict):
    """A tool offered to the LLM, in Pipecat ``FlowsFunctionSchema`` terms (without handler)."""

    name: str
    description: str
    properties: JSONObject
    required: list[str]


class OutputFilterContext(TypedDict):
    """Per-node inputs of the runtime output filters (never sent to the LLM)."""

    rubricLeakTexts: list[str]
    """Texts ``spokenText`` is checked against by the ``rubric_leak`` filter (OUT-002)."""
    scenarioDomain: str
    """What the ``topic_containment`` filter treats as on-topic for the node (OUT-003)."""


class NodeMetadata(TypedDict):
    """Runtime metadata of one node: never part of the LLM's prompt (A-2, A-7, ADP-015)."""

    irNodeId: str
    kind: str
    title: NotRequired[str]
    endType: NotRequired[str]
    promptSeed: NotRequired[str]
    scenario: NotRequired[str]
    prompt: NotRequired[JSONObject]
    maxFollowUps: int
    timeBudgetSec: NotRequired[int | float]
    timeBudget: NotRequired[JSONObject]
    evidenceTargets: list[str]
    evidenceTargetDefinitions: list[JSONObject]
    followUpPolicy: NotRequired[JSONObject]
    completionPolicy: NotRequired[JSONObject]
    forbiddenActions: list[str]
    allowedActions: list[str]
    effectiveForbiddenActions: list[str]
    candidateCommands: NotRequired[JSONObject]
    effectiveCandidateCommands: JSONObject
    recoveryHandlers: list[JSONObject]
    contextPolicy: NotRequired[JSONObject]
    grounding: NotRequired[JSONObject]
    """A grounded node's ``grounding`` (docs/spec/candidate-materials.md)."""
    transitions: list[JSONObject]
    questionPoolIds: list[str]
    outputFilterContext: OutputFilterContext


class CompiledNode(TypedDict):
    """One node config: Pipecat ``NodeConfig`` keys plus the runtime ``metadata``."""

    name: str
    role_message: str
    task_messages: list[TaskMessage]
    functions: list[str]
    """Names of entries of :attr:`CompiledFlow.functions` offered at this node."""
    pre_actions: list[ActionSpec]
    post_actions: list[ActionSpec]
    context_strategy: ContextStrategySpec
    respond_immediately: bool
    metadata: NodeMetadata


class CompiledEdge(TypedDict):
    """A transition. Pipecat never takes it by itself: the runtime controller approves it."""

    id: str
    source: str
    target: str
    targetKind: Literal["node", "pool"]
    order: int
    """Position in the source node's ``transitions`` array (first match wins)."""
    condition: JSONObject
    """The package's condition object, verbatim."""
    checkedOn: Literal["every_turn", "natural_completion"]
    guard: Literal["runtime_controller_approval"]


class TranscriptHooks(TypedDict):
    """Where transcript segments go besides the LLM context (ADP-013)."""

    forwardTo: Literal["runtime_controller"]
    speakers: list[str]
    finalOnly: bool
    event: str


class DataChannelSpec(TypedDict):
    """The LiveKit data channel the runtime controller publishes events on (ADP-014)."""

    topic: str
    reliable: bool


class OutputFilterSpec(TypedDict):
    """One output validation filter (ADP-016). The filters themselves run in the runtime."""

    name: str
    enabled: bool
    action: str
    severity: Literal["error", "warning"]
    rule: str
    patterns: NotRequired[list[str]]
    maxChars: NotRequired[int]
    checkAgainst: NotRequired[str]
    domain: NotRequired[str]


class OutputValidationConfig(TypedDict):
    """The ``outputValidationFilters`` block: the order is the order of application."""

    appliesTo: str
    filters: list[OutputFilterSpec]


class RuntimeSpec(TypedDict):
    """Package-level constructs Pipecat cannot express, kept for the runtime controller."""

    packageMetadata: JSONObject
    persona: NotRequired[JSONObject]
    globalPolicies: NotRequired[JSONObject]
    questionPools: list[JSONObject]
    totalTimeBudgetSec: NotRequired[int | float]
    commandAliases: dict[str, str]
    alwaysAllowedCommands: list[str]


class FindingDict(TypedDict):
    """A compile finding in validation report format (``compileWarnings`` entries)."""

    ruleId: str
    severity: str
    nodeId: str | None
    message: str
    path: str


class CompiledFlow(TypedDict):
    """The whole compiled flow for one package."""

    adapterVersion: str
    irVersion: str
    packageId: str
    packageChecksum: str
    initialNode: str
    functions: dict[str, FunctionSchemaSpec]
    nodes: list[CompiledNode]
    edges: list[CompiledEdge]
    transcriptHooks: TranscriptHooks
    dataChannel: DataChannelSpec
    outputValidationFilters: OutputValidationConfig
    runtime: RuntimeSpec
    compileWarnings: list[FindingDict]
