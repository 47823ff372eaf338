"""A whole exam of the example package in text mode, through the real pipeline: the exam room's
socket (the real consumer) → the channel layer → the bot (Pipecat pipeline + FlowManager) → the
LLM, served by the scripted OpenAI-compatible test server answering like a model would (tool
calls with ``report_observation`` arguments) → the runtime controller → stored events → the
candidate's socket."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connection

from bot.models import BotLease, BotUsage
from bot.runners import run_bot
from bot.session_runner import BotOptions, Outcome
from sessions.routing import websocket_urlpatterns
from tests.bot.conftest import Watcher, check_log, stored
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

pytestmark = pytest.mark.django_db(transaction=True)

SUMMARY = "The candidate explained Dijkstra's algorithm and chose an algorithm for the scenario."


def observation(spoken: str, *, signals: list[dict[str, Any]] = (), **flags: Any) -> dict[str, Any]:  # type: ignore[assignment]
    args: dict[str, Any] = {
        "signals": list(signals),
        "answerQuality": "substantive",
        "needsFollowUp": False,
        "evidenceSufficient": False,
        "anxietyDetected": False,
        "spokenText": spoken,
    }
    args.update(flags)
    return args


def signal(target: str, excerpt: str) -> dict[str, Any]:
    return {"signalType": target, "signalKind": "positive", "excerpt": excerpt, "confidence": 0.9}


def targets_of(request: RecordedRequest) -> list[str]:
    """The evidence target ids the request's node task message lists."""
    task = next(m for m in request.messages_with_role("developer") if "EVIDENCE TO LISTEN" in m)
    return re.findall(r"^- (tgt-[\w-]+) \(", task, flags=re.MULTILINE)


def model(request: RecordedRequest) -> Reply:
    """Answers like a model would: one ``report_observation`` call per candidate turn."""
    if not request.stream:  # Pipecat Flows' summary for the wrap-up (RESET_WITH_SUMMARY)
        return Reply.text(SUMMARY)
    last = request.messages[-1]
    content = last.get("content") if isinstance(last.get("content"), str) else ""
    targets = targets_of(request)
    if last["role"] == "tool":  # the runtime asked for more (an instruction in the result)
        return Reply.tool_call(
            "report_observation",
            observation(
                "Which algorithm would you choose for it, and why?",
                needsFollowUp=True,
                followUpType="probe",
            ),
        )
    if "enjoyed graph algorithms" in content:
        return Reply.tool_call(
            "report_observation", observation("Thank you for that.", evidenceSufficient=True)
        )
    if "smallest tentative distance" in content:
        return Reply.tool_call(
            "report_observation",
            observation(
                "Which data structure would you use to find that vertex quickly?",
                signals=[signal("tgt-greedy-choice", content[:200])],
                needsFollowUp=True,
                followUpType="probe",
            ),
        )
    if "binary heap" in content:
        return Reply.tool_call(
            "report_observation",
            observation(
                "Thank you.",
                signals=[signal("tgt-complexity", content[:200])],
                evidenceSufficient=True,
            ),
        )
    if "weighted edges" in content:  # scenario, first answer: proposes to finish too early
        return Reply.tool_call(
            "report_observation",
            observation(
                "Thank you.", signals=[signal(targets[0], content[:200])], evidenceSufficient=True
            ),
        )
    if "non-negative" in content:
        return Reply.tool_call(
            "report_observation",
            observation(
                "Thank you.", signals=[signal(targets[1], content[:200])], evidenceSufficient=True
            ),
        )
    return Reply.tool_call("report_observation", observation("Thank you.", evidenceSufficient=True))


ANSWERS = {
    "warmup": "I enjoyed graph algorithms most.",
    "q-dijkstra": [
        "It keeps settling the unvisited vertex with the smallest tentative distance and relaxes "
        "its edges.",
        "A binary heap, which gives O((V+E) log V).",
    ],
    "scenario": [
        "The places are vertices and the connections are weighted edges.",
        "Dijkstra, because all the weights are non-negative.",
    ],
    "wrapup": "Nothing to add, thank you.",
}


def close_connection() -> None:
    connection.close()


async def candidate_socket(session: Any) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/events/?after_seq=0"
    )
    socket.scope["user"] = session.candidate
    connected, _ = await socket.connect(timeout=10)
    assert connected
    return socket


async def frames(socket: WebsocketCommunicator, quiet: float = 0.3) -> list[dict[str, Any]]:
    out = []
    while not await socket.receive_nothing(timeout=quiet):
        out.append(await socket.receive_json_from(timeout=5))
    return out


def test_a_whole_exam_in_text_mode_through_the_real_pipeline(
    exam_session: Any, bot_settings: Any
) -> None:
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    bot_settings.VIVA_LLM_MODEL = "scripted-test-model"
    watcher = Watcher()
    received: list[dict[str, Any]] = []

    with OpenAICompatibleServer() as server:
        server.script(*([model] * 40))
        bot_settings.VIVA_LLM_BASE_URL = server.base_url

        async def turn(socket: WebsocketCommunicator, text: str) -> None:
            before = watcher.count("examiner_utterance_final")
            await socket.send_json_to({"kind": "answer", "text": text})
            await watcher.until(
                lambda w: (
                    w.count("exam_completed") > 0
                    or any(
                        e["payload"]["purpose"] != "bridge"
                        for e in w.of("examiner_utterance_final")[before:]
                    )
                ),
                what=f"the examiner's answer to {text!r}",
            )
            await asyncio.sleep(0.05)

        async def main() -> Outcome:
            watcher.bind()
            bot = asyncio.create_task(
                run_bot(exam_session.pk, options=BotOptions(on_stored=watcher))
            )
            await watcher.until_count("bot_ready", 1)
            socket = await candidate_socket(exam_session)
            await socket.send_json_to({"kind": "candidate_ready"})
            await watcher.until_count("examiner_utterance_final", 1)
            await turn(socket, ANSWERS["warmup"])
            for text in ANSWERS["q-dijkstra"]:
                await turn(socket, text)
            for text in ANSWERS["scenario"]:
                await turn(socket, text)
            await turn(socket, ANSWERS["wrapup"])
            outcome = await asyncio.wait_for(bot, 60)
            received.extend(await frames(socket))
            await socket.disconnect()
            await sync_to_async(close_connection, thread_sensitive=True)()  # the consumer's
            return outcome

        outcome = asyncio.run(asyncio.wait_for(main(), 300))
        requests = server.requests
        unscripted = server.unscripted

    assert outcome is Outcome.FINISHED
    assert unscripted == []
    events = stored(exam_session.pk)
    check_log(events)
    types = [e["type"] for e in events]
    payloads = {t: [e["payload"] for e in events if e["type"] == t] for t in set(types)}

    # The node path the controller chose, and exactly one completion.
    nodes = [p["nodeId"] for p in payloads["node_entered"]]
    scenario = nodes[2]
    assert nodes == ["warmup", "q-dijkstra", scenario, "wrapup", "end-normal"]
    assert scenario in ("scn-delivery-routes", "scn-network-latency")
    assert [p["reason"] for p in payloads["exam_completed"]] == ["all_nodes_visited"]
    assert types.index("exam_completed") > len(types) - 5

    # Evidence from the model's signals, follow-ups, and the refused early completion.
    evidence = [(p["nodeId"], p["targetIds"]) for p in payloads["evidence_signal"]]
    assert evidence[:2] == [
        ("q-dijkstra", ["tgt-greedy-choice"]),
        ("q-dijkstra", ["tgt-complexity"]),
    ]
    assert [n for n, _ in evidence[2:]] == [scenario, scenario]
    assert [p["nodeId"] for p in payloads["follow_up_used"]] == ["q-dijkstra", scenario]
    refused = [p for p in payloads["guardrail_triggered"] if p["guardrailType"] == "blocked_action"]
    assert len(refused) == 1

    # Typed answers are final transcripts with confidence 1.0.
    transcripts = payloads["transcript_final"]
    assert [p["text"] for p in transcripts] == [
        ANSWERS["warmup"],
        *ANSWERS["q-dijkstra"],
        *ANSWERS["scenario"],
        ANSWERS["wrapup"],
    ]
    assert {p["confidence"] for p in transcripts} == {1.0}

    # Only the controller's validated texts were spoken, openings verbatim, closing last.
    spoken = [p["text"] for p in payloads["examiner_utterance_final"]]
    assert spoken[0].startswith("Hello, and welcome.")
    assert "Could you walk me through how Dijkstra's algorithm finds shortest paths" in spoken[2]
    assert "Which data structure would you use to find that vertex quickly?" in spoken
    assert (
        spoken[-1]
        == "Thank you. That concludes the examination. Your responses have been recorded."
    )
    assert len(payloads["examiner_utterance_started"]) == len(spoken)

    # What the LLM was asked: the persona, the one tool, the opening already in its context,
    # and never a request to open a node by itself.
    persona = requests[0].system_instruction
    assert persona and persona.startswith("You are Dr. Lee")
    streamed = [r for r in requests if r.stream]
    assert all(r.tool_names == ["report_observation"] for r in streamed)
    assert all(r.messages[-1]["role"] in ("user", "tool") for r in streamed)
    first_q1 = next(r for r in streamed if "smallest tentative" in json.dumps(r.messages[-1]))
    assert first_q1.messages_with_role("assistant")[-1].startswith("Could you walk me through")
    summaries = [r for r in requests if not r.stream]
    assert summaries  # the wrap-up's RESET_WITH_SUMMARY (and any auto-summarisation)
    wrapup = next(r for r in streamed if "Nothing to add" in json.dumps(r.messages[-1]))
    assert any(SUMMARY in m for m in wrapup.messages_with_role("developer"))

    # The candidate's socket got the examiner's words, never evidence or guardrails.
    seen = [f["event"]["type"] for f in received if f.get("kind") == "event"]
    assert "evidence_signal" not in seen and "guardrail_triggered" not in seen
    assert "usage_reported" not in seen

    # The lease is finished and usage was priced.
    lease = BotLease.objects.get(session=exam_session)
    assert lease.state == "finished" and lease.generation == 1 and lease.restarts == 0
    usage = BotUsage.objects.get(session=exam_session)
    assert usage.llm_input_tokens > 0 and usage.unpriced == [
        "llm:openai_compatible:scripted-test-model"
    ]
