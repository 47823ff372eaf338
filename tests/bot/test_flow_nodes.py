"""The compiled flow hydrated into a REAL Pipecat Flows ``FlowManager``.

A text-only pipeline (user context aggregator -> OpenAI LLM service -> recording sink ->
assistant context aggregator) talks to the local scripted OpenAI-compatible server over HTTP.
Nothing in Pipecat is patched: the scripted LLM calls ``report_observation``, the hydrated
handler asks a scripted controller, and Flows moves (or stays) exactly as the controller says.
No database is needed.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pipecat.flows import ContextStrategy, FlowManager
from pipecat.frames.frames import (
    Frame,
    LLMFullResponseEndFrame,
    LLMMessagesAppendFrame,
    LLMTextFrame,
    TTSSpeakFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.workers.runner import WorkerRunner

from bot.flow_nodes import (
    FALLBACK_RESULT,
    FlowHydrator,
    ObservationDecision,
    context_strategy_config,
    escape_placeholders,
)
from ioa.compiler import CompiledFlow, compile_package
from ioa.compiler.compiler import SUMMARY_PROMPT
from tests.support.openai_server import OpenAICompatibleServer, Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cs201-graph-algorithms.json"
if not EXAMPLE.exists():
    EXAMPLE = (
        Path(__file__).resolve().parents[3] / "shared" / "examples" / "cs201-graph-algorithms.json"
    )

OBSERVATION: dict[str, Any] = {
    "signals": [],
    "answerQuality": "substantive",
    "needsFollowUp": False,
    "evidenceSufficient": True,
    "anxietyDetected": False,
    "spokenText": "Thank you. Let us begin with the first question.",
}


@pytest.fixture(scope="module")
def compiled() -> CompiledFlow:
    return compile_package(json.loads(EXAMPLE.read_text()))


def task_message(flow: CompiledFlow, node_id: str) -> str:
    node = next(n for n in flow["nodes"] if n["name"] == node_id)
    return node["task_messages"][0]["content"]


class ScriptedController:
    """An ObservationSink that returns pre-decided answers and records what it was told."""

    def __init__(self, *decisions: ObservationDecision | Exception) -> None:
        self.decisions = list(decisions)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.called = asyncio.Event()

    async def on_observation(self, args: Mapping[str, Any], *, node_id: str) -> ObservationDecision:
        self.calls.append((node_id, dict(args)))
        self.called.set()
        decision = self.decisions.pop(0)
        if isinstance(decision, Exception):
            raise decision
        return decision


class RecordingSink(FrameProcessor):
    """Pass-through processor standing in for TTS + transport: records what would be spoken."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.spoken: list[str] = []
        self.responses_ended = 0
        self.response_ended = asyncio.Event()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMTextFrame):
            self.text += frame.text
        elif isinstance(frame, TTSSpeakFrame):
            self.spoken.append(frame.text)
        elif isinstance(frame, LLMFullResponseEndFrame):
            self.responses_ended += 1
            self.response_ended.set()
        await self.push_frame(frame, direction)


class TextPipeline:
    """A running text-only pipeline with a FlowManager, torn down by the fixture."""

    def __init__(self, server: OpenAICompatibleServer) -> None:
        self.server = server
        self.llm = OpenAILLMService(
            api_key="test-key",
            base_url=server.base_url,
            settings=OpenAILLMService.Settings(model="scripted-test-model"),
        )
        self.aggregators = LLMContextAggregatorPair(LLMContext())
        self.sink = RecordingSink()
        pipeline = Pipeline(
            [self.aggregators.user(), self.llm, self.sink, self.aggregators.assistant()]
        )
        self.worker = PipelineWorker(pipeline, idle_timeout_secs=None, enable_rtvi=False)
        self.flow_manager = FlowManager(
            worker=self.worker, llm=self.llm, context_aggregator=self.aggregators
        )
        self.started = asyncio.Event()
        self.finished = asyncio.Event()

        @self.worker.event_handler("on_pipeline_started")
        async def _started(worker: PipelineWorker, frame: Frame) -> None:
            self.started.set()

        @self.worker.event_handler("on_pipeline_finished")
        async def _finished(worker: PipelineWorker, frame: Frame) -> None:
            self.finished.set()

        self.runner = WorkerRunner(handle_sigint=False)
        self._run: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.runner.add_workers(self.worker)
        self._run = asyncio.create_task(self.runner.run())
        await asyncio.wait_for(self.started.wait(), timeout=10)

    async def stop(self) -> None:
        if self._run is None:
            return
        if not self.finished.is_set():
            await self.runner.cancel("test finished")
        await asyncio.wait_for(self._run, timeout=10)

    async def candidate_says(self, text: str) -> None:
        """The candidate's (already transcribed) answer, followed by an LLM run."""
        await self.worker.queue_frame(
            LLMMessagesAppendFrame(messages=[{"role": "user", "content": text}], run_llm=True)
        )

    async def wait_for_responses(self, count: int, timeout: float = 10.0) -> None:
        async def reached() -> None:
            while self.sink.responses_ended < count:
                self.sink.response_ended.clear()
                await self.sink.response_ended.wait()

        await asyncio.wait_for(reached(), timeout=timeout)

    async def wait_for_node(self, node_id: str, timeout: float = 10.0) -> None:
        async def reached() -> None:
            while self.flow_manager.current_node != node_id:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(reached(), timeout=timeout)


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer() as running:
        yield running


def run_in_pipeline(
    server: OpenAICompatibleServer, scenario: Callable[[TextPipeline], Awaitable[None]]
) -> None:
    """Run ``scenario`` against a fresh running pipeline, in its own event loop."""

    async def main() -> None:
        harness = TextPipeline(server)
        await harness.start()
        try:
            await scenario(harness)
        finally:
            await harness.stop()

    asyncio.run(main())


def test_report_observation_moves_to_the_node_the_controller_chose(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        persona = compiled["nodes"][0]["role_message"]
        server.script(
            Reply.text("Hello, and welcome. Which topic of the course did you enjoy most?"),
            Reply.tool_call("report_observation", OBSERVATION),
            Reply.text("Could you walk me through how Dijkstra's algorithm finds shortest paths?"),
        )
        controller = ScriptedController(ObservationDecision.move({"status": "moved"}, "q-dijkstra"))
        hydrator = FlowHydrator(compiled, controller)

        await pipeline.flow_manager.initialize(hydrator.initial_node())
        await pipeline.wait_for_responses(1)
        assert pipeline.flow_manager.current_node == "warmup"

        first = server.requests[0]
        assert first.system_instruction == persona
        assert first.messages_with_role("developer") == [task_message(compiled, "warmup")]
        assert first.tool_names == ["report_observation"]
        offered = first.tool("report_observation")
        assert (
            offered["parameters"]["properties"]
            == compiled["functions"]["report_observation"]["properties"]
        )
        assert (
            offered["parameters"]["required"]
            == compiled["functions"]["report_observation"]["required"]
        )

        await pipeline.candidate_says("Hello. I enjoyed graph algorithms most.")
        await pipeline.wait_for_node("q-dijkstra")
        await server.wait_for_requests(3)
        await pipeline.wait_for_responses(3)

        # The handler received the LLM's arguments, at the node the call was made in.
        assert controller.calls == [("warmup", OBSERVATION)]
        # The next LLM request starts the new node: persona as system instruction, the node's task
        # message, and nothing of the previous node (RESET; no tool messages leaked across it).
        third = server.requests[2]
        assert third.system_instruction == persona
        assert third.messages == [
            {"role": "system", "content": persona},
            {"role": "developer", "content": task_message(compiled, "q-dijkstra")},
        ]
        assert third.tool_names == ["report_observation"]
        assert pipeline.sink.text.endswith("finds shortest paths?")
        assert server.unscripted == []

    run_in_pipeline(server, scenario)


def test_stay_returns_the_result_to_the_llm_and_keeps_the_node(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        server.script(
            Reply.text("Hello, and welcome."),
            Reply.tool_call("report_observation", OBSERVATION, call_id="call_stay"),
            Reply.text("Could you say a little more?"),
        )
        controller = ScriptedController(ObservationDecision.stay({"status": "continue"}))
        hydrator = FlowHydrator(compiled, controller)

        await pipeline.flow_manager.initialize(hydrator.initial_node())
        await pipeline.wait_for_responses(1)
        await pipeline.candidate_says("Recursion.")
        await server.wait_for_requests(3)
        await pipeline.wait_for_responses(3)

        assert pipeline.flow_manager.current_node == "warmup"
        tool_messages = [m for m in server.requests[2].messages if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_messages] == ["call_stay"]
        assert json.loads(tool_messages[0]["content"]) == {"status": "continue"}
        assert server.requests[2].messages_with_role("developer") == [
            task_message(compiled, "warmup")
        ]

    run_in_pipeline(server, scenario)


def test_stay_without_response_does_not_run_the_llm_again(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        server.script(Reply.text("Hello."), Reply.tool_call("report_observation", OBSERVATION))
        controller = ScriptedController(
            ObservationDecision.stay({"status": "paused"}, respond=False)
        )
        hydrator = FlowHydrator(compiled, controller)

        await pipeline.flow_manager.initialize(hydrator.initial_node())
        await pipeline.wait_for_responses(1)
        await pipeline.candidate_says("Can we pause for a moment?")
        await asyncio.wait_for(controller.called.wait(), timeout=10)
        await pipeline.wait_for_responses(2)
        await asyncio.sleep(0.3)

        assert len(server.requests) == 2
        assert pipeline.flow_manager.current_node == "warmup"

    run_in_pipeline(server, scenario)


def test_reset_with_summary_summarises_then_starts_the_wrap_up(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        persona = compiled["nodes"][0]["role_message"]
        server.script(
            Reply.tool_call("report_observation", OBSERVATION),
            Reply.text("The candidate described Dijkstra's algorithm."),  # the summary (no stream)
            Reply.text("That was the last question. Anything to add?"),
        )
        controller = ScriptedController(ObservationDecision.move({"status": "moved"}, "wrapup"))
        hydrator = FlowHydrator(compiled, controller)

        await pipeline.flow_manager.initialize(hydrator.node("scn-delivery-routes"))
        await pipeline.wait_for_node("wrapup")
        await server.wait_for_requests(3)
        await pipeline.wait_for_responses(2)

        summary_request, wrapup_request = server.requests[1], server.requests[2]
        assert not summary_request.stream
        assert summary_request.system_instruction == SUMMARY_PROMPT
        assert wrapup_request.system_instruction == persona
        assert wrapup_request.messages_with_role("developer") == [
            "Here's a summary of the conversation:\nThe candidate described Dijkstra's algorithm.",
            task_message(compiled, "wrapup"),
        ]

    run_in_pipeline(server, scenario)


def test_end_node_speaks_the_closing_and_ends_the_pipeline(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        server.script(Reply.tool_call("report_observation", OBSERVATION))
        controller = ScriptedController(ObservationDecision.move({"status": "done"}, "end-normal"))
        hydrator = FlowHydrator(compiled, controller)

        await pipeline.flow_manager.initialize(hydrator.node("q-dijkstra"))
        await asyncio.wait_for(pipeline.finished.wait(), timeout=10)

        closing = hydrator.compiled_node("end-normal")["metadata"]["prompt"]["closing"]
        assert pipeline.sink.spoken == [closing]
        assert pipeline.flow_manager.current_node == "end-normal"
        assert len(server.requests) == 1  # the end node never runs the LLM

    run_in_pipeline(server, scenario)


def test_a_failing_controller_yields_the_fallback_and_reports_the_error(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        server.script(
            Reply.tool_call("report_observation", OBSERVATION),
            Reply.text("Let us continue with the question."),
        )
        errors: list[tuple[str, str]] = []

        async def on_error(error: BaseException, node_id: str) -> None:
            errors.append((type(error).__name__, node_id))

        controller = ScriptedController(RuntimeError("ledger unavailable"))
        hydrator = FlowHydrator(compiled, controller, on_error=on_error)

        await pipeline.flow_manager.initialize(hydrator.node("q-dijkstra"))
        await server.wait_for_requests(2)
        await pipeline.wait_for_responses(2)

        assert errors == [("RuntimeError", "q-dijkstra")]
        tool_messages = [m for m in server.requests[1].messages if m["role"] == "tool"]
        assert json.loads(tool_messages[0]["content"]) == dict(FALLBACK_RESULT)
        assert pipeline.flow_manager.current_node == "q-dijkstra"

    run_in_pipeline(server, scenario)


def test_package_text_with_braces_reaches_the_llm_verbatim(
    compiled: CompiledFlow, server: OpenAICompatibleServer
) -> None:
    async def scenario(pipeline: TextPipeline) -> None:
        flow = copy.deepcopy(compiled)
        node = next(n for n in flow["nodes"] if n["name"] == "warmup")
        node["task_messages"][0]["content"] += "\nWrite {{ set.name }} and \\{{ x }} as they are."
        server.script(Reply.text("Hello."))
        hydrator = FlowHydrator(flow, ScriptedController())

        await pipeline.flow_manager.initialize(hydrator.initial_node())
        await pipeline.wait_for_responses(1)

        assert server.requests[0].messages_with_role("developer") == [
            node["task_messages"][0]["content"]
        ]

    run_in_pipeline(server, scenario)


def test_hydrated_nodes_are_pipecat_node_configs(compiled: CompiledFlow) -> None:
    hydrator = FlowHydrator(compiled, ScriptedController())
    for compiled_node in compiled["nodes"]:
        config = hydrator.node(compiled_node["name"])
        assert config["name"] == compiled_node["name"]
        assert config["role_message"] == compiled_node["role_message"]
        assert config["respond_immediately"] is compiled_node["respond_immediately"]
        names = [function.name for function in config["functions"]]
        assert names == compiled_node["functions"]
    assert hydrator.node("q-dijkstra")["context_strategy"].strategy is ContextStrategy.RESET
    wrapup = hydrator.node("wrapup")["context_strategy"]
    assert wrapup.strategy is ContextStrategy.RESET_WITH_SUMMARY
    assert wrapup.summary_prompt == SUMMARY_PROMPT
    assert hydrator.node("end-normal")["pre_actions"] == [
        {"type": "end_conversation", "text": compiled["nodes"][5]["metadata"]["prompt"]["closing"]}
    ]
    with pytest.raises(KeyError):
        hydrator.node("no-such-node")


def test_only_rendered_texts_are_escaped(compiled: CompiledFlow) -> None:
    flow = copy.deepcopy(compiled)
    end = next(n for n in flow["nodes"] if n["name"] == "end-normal")
    end["pre_actions"] = [
        {"type": "tts_say", "text": "Say {{ a }}."},
        {"type": "end_conversation", "text": "Bye {{ a }}."},
    ]
    actions = FlowHydrator(flow, ScriptedController()).node("end-normal")["pre_actions"]
    assert [action.get("text") for action in actions] == ["Say \\{{ a }}.", "Bye {{ a }}."]


def test_context_strategy_mapping() -> None:
    assert context_strategy_config({"strategy": "append"}).strategy is ContextStrategy.APPEND
    assert context_strategy_config({"strategy": "reset"}).strategy is ContextStrategy.RESET
    summary = context_strategy_config({"strategy": "reset_with_summary", "summaryPrompt": "S"})
    assert (summary.strategy, summary.summary_prompt) == (ContextStrategy.RESET_WITH_SUMMARY, "S")
    with pytest.raises(ValueError, match="unknown context strategy"):
        context_strategy_config({"strategy": "forget"})  # type: ignore[typeddict-item]


def test_a_flow_of_another_adapter_version_is_refused(compiled: CompiledFlow) -> None:
    flow = copy.deepcopy(compiled)
    flow["adapterVersion"] = "pipecat-adapter/9.9"
    with pytest.raises(ValueError, match="recompile"):
        FlowHydrator(flow, ScriptedController())


def test_escape_placeholders_is_undone_by_pipecat_rendering() -> None:
    assert escape_placeholders("a {{ b }} c") == "a \\{{ b }} c"
    assert escape_placeholders("a \\{{ b.c }}") == "a \\\\{{ b.c }}"
    assert escape_placeholders("{ not } {{ 1x }}") == "{ not } {{ 1x }}"
