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
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from pipecat.flows import (
    NO_RESPONSE,
    ActionConfig,
    ContextStrategy,
    ContextStrategyConfig,
    FlowArgs,
    FlowManager,
    FlowsFunctionSchema,
    NodeConfig,
)

from ioa.compiler import ADAPTER_VERSION, REPORT_OBSERVATION, CompiledFlow, CompiledNode
from ioa.compiler.types import ContextStrategySpec

logger = logging.getLogger(__name__)

SUPPORTED_ADAPTER_VERSIONS: Final = frozenset({ADAPTER_VERSION})
"""Compiled flows this hydrator understands; anything else is refused (fail closed)."""

CONTEXT_STRATEGIES: Final[dict[str, ContextStrategy]] = {
    "reset": ContextStrategy.RESET,
    "append": ContextStrategy.APPEND,
    "reset_with_summary": ContextStrategy.RESET_WITH_SUMMARY,
}

FALLBACK_RESULT: Final[Mapping[str, Any]] = {
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

    result: Mapping[str, Any]
    """The tool result the LLM sees (JSON-serialisable)."""
    next_node_id: str | None = None
    """The node to move to, or ``None`` to stay on the current node."""
    respond: bool = True
    """When staying: whether the LLM speaks again right away (``False`` = ``NO_RESPONSE``)."""

    @classmethod
    def stay(cls, result: Mapping[str, Any], *, respond: bool = True) -> ObservationDecision:
        """Stay on the current node."""
        return cls(result=result, respond=respond)

    @classmethod
    def move(cls, result: Mapping[str, Any], next_node_id: str) -> ObservationDecision:
        """Move to ``next_node_id`` (a compiled node's ``name``)."""
        return cls(result=result, next_node_id=next_node_id)


class ObservationSink(Protocol):
    """The runtime controller as the ``report_observation`` handler sees it."""

    async def on_observation(self, args: Mapping[str, Any], *, node_id: str) -> ObservationDecision:
        """Evaluate one observation made at ``node_id`` and decide: stay or move."""
        ...


ErrorHook = Callable[[BaseException, str], Awaitable[None]]
"""Called with the exception and the node id when the sink fails (to emit ``system_error``)."""


def context_strategy_config(spec: ContextStrategySpec) -> ContextStrategyConfig:
    """The Pipecat ``ContextStrategyConfig`` of a compiled ``context_strategy``.

    ``reset_with_summary`` carries its summary prompt (Pipecat requires one). Unknown strategies
    raise ``ValueError``.
    """
    strategy = CONTEXT_STRATEGIES.get(spec["strategy"])
    if strategy is None:
        raise ValueError(f"unknown context strategy {spec['strategy']!r}")
    summary_prompt = (
        spec.get("summaryPrompt") if strategy is ContextStrategy.RESET_WITH_SUMMARY else None
    )
    return ContextStrategyConfig(strategy=strategy, summary_prompt=summary_prompt)


@dataclass
class FlowHydrator:
    """Turns the compiled nodes of one flow into ``NodeConfig`` dicts bound to a sink."""

    flow: CompiledFlow
    sink: ObservationSink
    on_error: ErrorHook | None = None
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
            "context_strategy": context_strategy_config(compiled["context_strategy"]),
            "respond_immediately": compiled["respond_immediately"],
        }
        return config

    def _function(self, name: str) -> FlowsFunctionSchema:
        if name != REPORT_OBSERVATION:
            raise ValueError(f"the compiled flow offers an unknown function {name!r}")
        return self._report_observation

    @staticmethod
    def _action(action: Mapping[str, Any]) -> ActionConfig:
        config: ActionConfig = {"type": str(action["type"])}
        if "text" in action:
            text = str(action["text"])
            # Flows renders placeholders in tts_say text only (not in end_conversation text).
            config["text"] = escape_placeholders(text) if config["type"] == "tts_say" else text
        return config

    async def _handle_report_observation(self, args: FlowArgs, flow_manager: FlowManager) -> Any:
        node_id = flow_manager.current_node or ""
        try:
            decision = await self.sink.on_observation(args, node_id=node_id)
            result = dict(decision.result)
            if decision.next_node_id is not None:
                return result, self.node(decision.next_node_id)
        except Exception as error:  # the conversation goes on with a canned fallback (§11)
            logger.exception("report_observation handler failed at node %s", node_id)
            if self.on_error is not None:
                await self.on_error(error, node_id)
            return dict(FALLBACK_RESULT)
        if not decision.respond:
            return result, NO_RESPONSE
        return result
