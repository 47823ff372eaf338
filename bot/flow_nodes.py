"""Hydrate a compiled flow (``ioa.compiler``) into live ``pipecat.flows`` node configs.

The compiled flow is plain JSON; Pipecat needs ``NodeConfig`` dicts holding a
``FlowsFunctionSchema`` with a handler and a ``ContextStrategyConfig``. :class:`FlowHydrator` does
that translation and nothing else: no domain logic lives here (A-2).

The one tool, ``report_observation``, delegates to an :class:`ObservationSink` (the runtime
controller). The sink answers with an :class:`ObservationDecision`, and the handler returns
exactly what it says (A-3, "LLM proposes, runtime approves"):

* stay: the plain result (Pipecat then runs the LLM again with the result in context), or
  ``(result, NO_RESPONSE)`` when the decision says not to respond;
* move: ``(result, next_node_config)``. Pipecat Flows performs the transition once the tool
  result is in the context, so the new node's context strategy (RESET) really starts from a
  clean context. Calling ``FlowManager.set_node_from_config`` inside the handler instead would
  run the LLM twice and leak the tool messages across the reset.

The LLM never picks the next node: the sink does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from pipecat.flows import (
    NO_RESPONSE,
    ActionConfig,
    ConsolidatedFunctionResult,
    ContextStrategy,
    ContextStrategyConfig,
    FlowArgs,
    FlowManager,
    FlowsFunctionSchema,
    NodeConfig,
)

from ioa.compiler import ADAPTER_VERSION, REPORT_OBSERVATION, CompiledFlow, CompiledNode
from ioa.compiler.compiler import SUMMARY_PROMPT
from ioa.compiler.types import ActionSpec, ContextStrategySpec

logger = logging.getLogger(__name__)

SUPPORTED_ADAPTER_VERSIONS: Final = frozenset({ADAPTER_VERSION})
"""Compiled flows this hydrator understands; anything else is refused (fail closed)."""

CONTEXT_STRATEGIES: Final[dict[str, ContextStrategy]] = {
    "reset": ContextStrategy.RESET,
    "append": ContextStrategy.APPEND,
    "reset_with_summary": ContextStrategy.RESET_WITH_SUMMARY,
}

BOOT_NODE: Final = "boot"
ADMIN_NODE: Final = "admin"
BOOT_TASK: Final = (
    "The examination has not started yet: the candidate is completing consent, briefing and the "
    "audio check. Do not say anything."
)
RETURN_TASK: Final = (
    "The proctor's instruction has been delivered. Continue with the current part of the "
    "examination; after the candidate's next response, call report_observation as before."
)
DEFAULT_SUMMARY_PROMPT: Final = SUMMARY_PROMPT
"""Summary prompt when the controller asks for RESET_WITH_SUMMARY on a node compiled without one."""

FALLBACK_RESULT: Final[Mapping[str, str]] = {
    "status": "continue",
    "instruction": "Something went wrong on our side. Continue with the current question.",
}
"""Tool result when the sink fails (§11: log, report, continue with a canned fallback)."""

# Pipecat Flows fills ``{{ key }}`` placeholders from its state in role_message, task message
# content and tts_say text (FlowManager docs, ``FlowManager._render_node``); package text must
# reach the LLM verbatim, so every such sequence there is escaped with a backslash, which Flows
# removes when rendering.
_PLACEHOLDER: Final = re.compile(
    r"\\?\{\{\s*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\s*\}\}"
)


def escape_placeholders(text: str) -> str:
    """Make Pipecat Flows' placeholder rendering give ``text`` back unchanged."""
    return _PLACEHOLDER.sub(lambda match: "\\" + match.group(0), text)


@dataclass(frozen=True, slots=True)
class ObservationDecision:
    """What the runtime controller decided about one ``report_observation`` call."""

    result: Mapping[str, object]
    """The tool result the LLM sees (JSON-serialisable)."""
    next_node_id: str | None = None
    """The node to move to, or ``None`` to stay on the current node."""
    respond: bool = True
    """When staying: whether the LLM speaks again right away (``False`` = ``NO_RESPONSE``)."""
    node_config: NodeConfig | None = None
    """When moving: a prepared config to move to (else ``FlowHydrator.node(next_node_id)``)."""

    @classmethod
    def stay(cls, result: Mapping[str, object], *, respond: bool = True) -> ObservationDecision:
        """Stay on the current node."""
        return cls(result=result, respond=respond)

    @classmethod
    def move(
        cls,
        result: Mapping[str, object],
        next_node_id: str,
        *,
        node_config: NodeConfig | None = None,
    ) -> ObservationDecision:
        """Move to ``next_node_id`` (a compiled node's ``name``), or to the prepared
        ``node_config`` (the runtime's own nodes, or a compiled node adjusted by the bot)."""
        return cls(result=result, next_node_id=next_node_id, node_config=node_config)


class ObservationSink(Protocol):
    """The runtime controller as the ``report_observation`` handler sees it."""

    async def on_observation(
        self, args: Mapping[str, object], *, node_id: str
    ) -> ObservationDecision:
        """Evaluate one observation made at ``node_id`` and decide: stay or move."""
        ...


ErrorHook = Callable[[BaseException, str], Awaitable[None]]
"""Called with the exception and the node id when the sink fails (to emit ``system_error``)."""


def context_strategy_config(spec: ContextStrategySpec) -> ContextStrategyConfig:
    """The Pipecat ``ContextStrategyConfig`` of a compiled ``context_strategy``.

    ``reset_with_summary`` carries its summary prompt (Pipecat requires one). Unknown strategies
    raise ``ValueError``.
    """
    return strategy_config(spec["strategy"], spec.get("summaryPrompt"))


def strategy_config(name: str, summary_prompt: str | None = None) -> ContextStrategyConfig:
    """The Pipecat ``ContextStrategyConfig`` of the strategy ``name`` (``ValueError`` when
    unknown); ``summary_prompt`` is kept for ``reset_with_summary`` only."""
    strategy = CONTEXT_STRATEGIES.get(name)
    if strategy is None:
        raise ValueError(f"unknown context strategy {name!r}")
    if strategy is not ContextStrategy.RESET_WITH_SUMMARY:
        summary_prompt = None
    return ContextStrategyConfig(strategy=strategy, summary_prompt=summary_prompt)


@dataclass
class FlowHydrator:
    """Turns the compiled nodes of one flow into ``NodeConfig`` dicts bound to a sink."""

    flow: CompiledFlow
    sink: ObservationSink
    on_error: ErrorHook | None = None
    retry_after_error: Callable[[], bool] | None = None
    """Asked after a failure: ``True`` lets the LLM run again with the fallback result (the
    default without it); ``False`` returns the fallback with ``NO_RESPONSE`` (no retry loop)."""
    summaries: bool = True
    """``False`` (a session with grounded nodes): an entry that would reset the context with a
    summary resets it without one, so the candidate's passage is never sent to be summarised
    (docs/spec/candidate-materials.md §6.1)."""
    _nodes: dict[str, CompiledNode] = field(init=False, repr=False)
    _report_observation: FlowsFunctionSchema = field(init=False, repr=False)

    def __post_init__(self) -> None:
        version = self.flow.get("adapterVersion")
        if version not in SUPPORTED_ADAPTER_VERSIONS:
            raise ValueError(
                f"compiled flow has adapterVersion {version!r}; this bot runs "
                f"{sorted(SUPPORTED_ADAPTER_VERSIONS)}: recompile the package"
            )
        self._nodes = {node["name"]: node for node in self.flow["nodes"]}
        schema = self.flow["functions"][REPORT_OBSERVATION]
        self._report_observation = FlowsFunctionSchema(
            name=schema["name"],
            description=schema["description"],
            properties=schema["properties"],
            required=list(schema["required"]),
            handler=self._handle_report_observation,
            # Synchronous: the LLM waits for the controller's decision. Pipecat treats a tool
            # with cancel_on_interruption=False as asynchronous (the model may run on before
            # the result and its system instruction gains "async tools" guidance), which would
            # let the LLM act before the runtime decided.
            cancel_on_interruption=True,
        )

    @property
    def initial_node_id(self) -> str:
        """The compiled flow's initial node."""
        return self.flow["initialNode"]

    def compiled_node(self, node_id: str) -> CompiledNode:
        """The compiled node ``node_id`` (KeyError if the flow has none)."""
        return self._nodes[node_id]

    def initial_node(self) -> NodeConfig:
        """The live config of the initial node (for ``FlowManager.initialize``)."""
        return self.node(self.initial_node_id)

    def node(self, node_id: str) -> NodeConfig:
        """The live ``NodeConfig`` of compiled node ``node_id`` (a fresh dict on every call)."""
        compiled = self._nodes.get(node_id)
        if compiled is None:
            raise KeyError(f"the compiled flow has no node {node_id!r}")
        config: NodeConfig = {
            "name": compiled["name"],
            "role_message": escape_placeholders(compiled["role_message"]),
            "task_messages": [
                {"role": message["role"], "content": escape_placeholders(message["content"])}
                for message in compiled["task_messages"]
            ],
            "functions": [self._function(name) for name in compiled["functions"]],
            "pre_actions": [self._action(action) for action in compiled["pre_actions"]],
            "post_actions": [self._action(action) for action in compiled["post_actions"]],
            "context_strategy": self._summarised(
                context_strategy_config(compiled["context_strategy"])
            ),
            "respond_immediately": compiled["respond_immediately"],
        }
        return config

    def _summarised(self, config: ContextStrategyConfig) -> ContextStrategyConfig:
        """``config`` as this flow applies it: without summaries (``summaries=False``) a
        ``RESET_WITH_SUMMARY`` becomes a plain ``RESET``; anything else is kept."""
        if self.summaries or config.strategy is not ContextStrategy.RESET_WITH_SUMMARY:
            return config
        return ContextStrategyConfig(strategy=ContextStrategy.RESET)

    @property
    def role_message(self) -> str:
        """The persona (every compiled node carries the same role message)."""
        return self.flow["nodes"][0]["role_message"] if self.flow["nodes"] else ""

    def driven_node(
        self,
        node_id: str,
        *,
        context_strategy: str | None = None,
        summary_prompt: str | None = None,
        extra_messages: Sequence[Mapping[str, str]] = (),
        respond_immediately: bool = False,
    ) -> NodeConfig:
        """Compiled node ``node_id`` as the bot enters it when the runtime controller drives.

        The controller speaks the node's opening (or an end node's closing) verbatim itself, so
        the LLM does not run on entry unless asked (``respond_immediately``) and an end node's
        ``end_conversation`` pre-action is dropped (the bot ends the pipeline after the closing
        is spoken). ``context_strategy`` (``reset``/``append``/``reset_with_summary``) is the
        controller's choice for this entry; ``extra_messages`` are appended to the task
        messages (pending proctor instructions, what the controller says on entry), verbatim.
        """
        config = self.node(node_id)
        compiled = self._nodes[node_id]
        if context_strategy is not None:
            prompt = None
            if context_strategy == "reset_with_summary":
                prompt = (
                    summary_prompt
                    or compiled["context_strategy"].get("summaryPrompt")
                    or DEFAULT_SUMMARY_PROMPT
                )
            config["context_strategy"] = self._summarised(strategy_config(context_strategy, prompt))
        config["task_messages"] = [
            *config["task_messages"],
            *(
                {"role": m["role"], "content": escape_placeholders(m["content"])}
                for m in extra_messages
            ),
        ]
        config["pre_actions"] = [
            a for a in config.get("pre_actions", []) if a.get("type") != "end_conversation"
        ]
        config["post_actions"] = []
        config["respond_immediately"] = respond_immediately
        return config

    def boot_node(self) -> NodeConfig:
        """The silent boot node (beats chapter): context RESET, no tools, never speaks."""
        return {
            "name": BOOT_NODE,
            "role_message": escape_placeholders(self.role_message),
            "task_messages": [{"role": "developer", "content": BOOT_TASK}],
            "functions": [],
            "context_strategy": ContextStrategyConfig(strategy=ContextStrategy.RESET),
            "respond_immediately": False,
        }

    def admin_node(self, instruction_id: str, instruction: str) -> NodeConfig:
        """The admin node for one immediate proctor instruction (context APPEND): the LLM
        delivers ``instruction`` through ``report_observation`` right away."""
        return {
            "name": f"{ADMIN_NODE}:{instruction_id}",
            "role_message": escape_placeholders(self.role_message),
            "task_messages": [{"role": "developer", "content": escape_placeholders(instruction)}],
            "functions": [self._report_observation],
            "context_strategy": ContextStrategyConfig(strategy=ContextStrategy.APPEND),
            "respond_immediately": True,
        }

    def return_node(self, node_id: str) -> NodeConfig:
        """Back from the admin node to ``node_id`` (context APPEND, the LLM waits)."""
        config = self.driven_node(node_id, context_strategy="append")
        config["task_messages"] = [{"role": "developer", "content": RETURN_TASK}]
        return config

    def _function(self, name: str) -> FlowsFunctionSchema:
        if name != REPORT_OBSERVATION:
            raise ValueError(f"the compiled flow offers an unknown function {name!r}")
        return self._report_observation

    @staticmethod
    def _action(action: ActionSpec) -> ActionConfig:
        config: ActionConfig = {"type": str(action["type"])}
        if "text" in action:
            text = str(action["text"])
            # Flows renders placeholders in tts_say text only (not in end_conversation text).
            config["text"] = escape_placeholders(text) if config["type"] == "tts_say" else text
        return config

    async def _handle_report_observation(
        self, args: FlowArgs, flow_manager: FlowManager
    ) -> ConsolidatedFunctionResult | dict[str, object]:
        node_id = flow_manager.current_node or ""
        try:
            decision = await self.sink.on_observation(args, node_id=node_id)
            result = dict(decision.result)
            if decision.next_node_id is not None:
                return result, decision.node_config or self.node(decision.next_node_id)
        except Exception as error:  # the conversation goes on with a canned fallback (§11)
            logger.exception("report_observation handler failed at node %s", node_id)
            if self.on_error is not None:
                await self.on_error(error, node_id)
            if self.retry_after_error is not None and not self.retry_after_error():
                return dict(FALLBACK_RESULT), NO_RESPONSE
            return dict(FALLBACK_RESULT)
        if not decision.respond:
            return result, NO_RESPONSE
        return result
