"""The offline (rehearsal) examiner: its policy, its OpenAI-compatible endpoint, and a whole exam
of the example package run end to end through the real pipeline with it (no scripted server)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from bot import offline_examiner as oe
from bot.conf import bot_settings as read_settings
from bot.providers import ProviderError, resolve
from bot.runners import run_bot
from bot.session_runner import BotOptions, Outcome
from ioa.compiler import compile_package
from tests.bot.conftest import ANSWERS, Candidate, Watcher, check_log, drive, stored
from tests.factories import example_document

TOOLS = [{"type": "function", "function": {"name": "report_observation"}}]


@pytest.fixture(scope="module")
def flow() -> dict[str, Any]:
    return dict(compile_package(example_document()))


def task(flow: dict[str, Any], node: str) -> str:
    return next(n for n in flow["nodes"] if n["name"] == node)["task_messages"][0]["content"]


def request(flow: dict[str, Any], node: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": [{"role": "developer", "content": task(flow, node)}, *messages],
        "tools": TOOLS,
    }


def test_it_reads_the_compiled_task_message(flow: dict[str, Any]) -> None:
    brief = oe.parse_brief(task(flow, "q-dijkstra"))
    assert brief.opening.startswith("Could you walk me through how Dijkstra")
    assert [t.id for t in brief.targets] == [
        "tgt-greedy-choice",
        "tgt-complexity",
        "tgt-negative-weights",
    ]
    assert brief.max_follow_ups == 3
    assert oe.seed_questions(brief.seed) == [
        "Could you say a little more about the greedy choice?",
        "Could you say a little more about the data structure used?",
        "Could you say a little more about the running time?",
    ]


def test_a_matching_answer_is_evidence_and_a_follow_up_comes_from_the_seed(
    flow: dict[str, Any],
) -> None:
    reply = oe.respond(
        request(
            flow,
            "q-dijkstra",
            {"role": "assistant", "content": "Could you walk me through Dijkstra?"},
            {"role": "user", "content": ANSWERS["q-dijkstra"][0]},
        )
    )
    args = reply.tool_arguments
    assert args is not None
    assert [s["signalType"] for s in args["signals"]] == ["tgt-greedy-choice"]
    assert args["signals"][0]["signalKind"] == "positive"
    assert 0.5 < args["signals"][0]["confidence"] <= 0.95
    assert args["needsFollowUp"] is True
    assert args["spokenText"] == "Could you say a little more about the running time?"


def test_an_unrelated_answer_is_off_topic_and_a_short_command_is_a_command(
    flow: dict[str, Any],
) -> None:
    off = oe.respond(
        request(flow, "q-dijkstra", {"role": "user", "content": "I like football and pizza a lot."})
    ).tool_arguments
    assert off is not None and off["answerQuality"] == "off_topic" and off["signals"] == []
    command = oe.respond(
        request(flow, "q-dijkstra", {"role": "user", "content": "Could you repeat that please?"})
    ).tool_arguments
    assert command is not None and command["commandDetected"] == "repeat"


def test_runtime_instructions_are_followed(flow: dict[str, Any]) -> None:
    instruction = "Proctor instruction (address the candidate now, briefly and neutrally): "
    admin = oe.respond(
        request(flow, "q-dijkstra", {"role": "developer", "content": instruction + "Sit closer."})
    ).tool_arguments
    assert admin is not None and admin["spokenText"] == "Sit closer."
    rephrase = oe.respond(
        request(
            flow,
            "q-dijkstra",
            {"role": "assistant", "content": "What is a heap?"},
            {"role": "user", "content": "rephrase please"},
            {
                "role": "tool",
                "content": json.dumps({"instruction": "Please rephrase the question"}),
            },
        )
    ).tool_arguments
    assert rephrase is not None
    assert rephrase["spokenText"] == "Let me put it another way. What is a heap?"


@pytest.fixture(scope="module")
def german_flow() -> dict[str, Any]:
    return dict(compile_package(example_document("cs201-graph-algorithms.de")))


def german_request(flow: dict[str, Any], node: str, *messages: dict[str, Any]) -> dict[str, Any]:
    compiled = next(n for n in flow["nodes"] if n["name"] == node)
    body = request(flow, node, *messages)
    body["messages"].insert(0, {"role": "system", "content": compiled["role_message"]})
    return body


def test_a_german_exam_is_examined_in_german(german_flow: dict[str, Any]) -> None:
    command = oe.respond(
        german_request(
            german_flow,
            "q-dijkstra",
            {"role": "user", "content": "Können Sie die Frage wiederholen?"},
        )
    ).tool_arguments
    assert command is not None and command["commandDetected"] == "repeat"
    assert command["spokenText"] == oe.LINES["de"].of_course
    answer = oe.respond(
        german_request(
            german_flow,
            "q-dijkstra",
            {"role": "user", "content": "Ich mag Fußball, Pizza und Musik am Wochenende."},
        )
    ).tool_arguments
    assert answer is not None and answer["answerQuality"] == "off_topic"
    assert answer["spokenText"].startswith(oe.LINES["de"].stay + " Können Sie mir")
    rephrase = oe.respond(
        german_request(
            german_flow,
            "q-dijkstra",
            {"role": "assistant", "content": "Was ist ein Heap?"},
            {"role": "user", "content": "Bitte anders formulieren."},
            {"role": "tool", "content": json.dumps({"instruction": "Please rephrase"})},
        )
    ).tool_arguments
    assert rephrase is not None
    assert rephrase["spokenText"] == "Ich formuliere es anders. Was ist ein Heap?"


def test_every_language_has_the_examiner_s_lines() -> None:
    assert set(oe.LINES) == {"en", "de", "es"}


def test_without_tools_it_summarises() -> None:
    reply = oe.respond({"messages": [{"role": "user", "content": "Dijkstra uses a heap."}]})
    assert reply.tool_arguments is None and "Dijkstra uses a heap." in reply.content


def test_the_endpoint_speaks_the_chat_completions_protocol(flow: dict[str, Any]) -> None:
    server = oe.shared_server()
    body = request(flow, "warmup", {"role": "user", "content": "Graphs."})
    body.update(model=oe.MODEL, stream=True, stream_options={"include_usage": True})
    http = urllib.request.Request(  # noqa: S310 (the loopback server's http URL)
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(http, timeout=10) as response:  # noqa: S310 (loopback)
        lines = [line for line in response.read().decode().splitlines() if line.startswith("data:")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[5:]) for line in lines[:-1]]
    calls = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert calls[0]["function"]["name"] == "report_observation"
    arguments = json.loads("".join(c["function"]["arguments"] for c in calls))
    assert arguments["evidenceSufficient"] is True
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_a_body_that_is_not_a_json_object_is_a_bad_request() -> None:
    server = oe.shared_server()
    for body in (b"[1, 2]", b"not json"):
        http = urllib.request.Request(  # noqa: S310 (the loopback server's http URL)
            server.base_url + "/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(http, timeout=10)  # noqa: S310 (loopback)
        assert refused.value.code == 400


def test_it_is_refused_outside_development(settings: Any) -> None:
    settings.VIVA_LLM_PROVIDER = "offline"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = False
    with pytest.raises(ProviderError, match="never for grading"):
        resolve(read_settings())


@pytest.mark.django_db(transaction=True)
def test_a_whole_exam_with_the_offline_examiner(exam_session: Any, bot_settings: Any) -> None:
    watcher = Watcher()

    async def main() -> Outcome:
        watcher.bind()
        bot = asyncio.create_task(run_bot(exam_session.pk, options=BotOptions(on_stored=watcher)))
        await watcher.until_count("bot_ready", 1)
        await drive(Candidate(exam_session.pk, watcher), watcher, ANSWERS)
        return await asyncio.wait_for(bot, 60)

    outcome = asyncio.run(asyncio.wait_for(main(), 300))

    assert outcome is Outcome.FINISHED
    events = stored(exam_session.pk)
    check_log(events)
    nodes = [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"]
    assert nodes[:2] == ["warmup", "q-dijkstra"]
    assert nodes[2] in ("scn-delivery-routes", "scn-network-latency")
    assert nodes[3:] == ["wrapup", "end-normal"]
    evidence = {
        t for e in events if e["type"] == "evidence_signal" for t in e["payload"]["targetIds"]
    }
    assert {"tgt-greedy-choice", "tgt-complexity"} <= evidence
    completed = [e for e in events if e["type"] == "exam_completed"]
    assert len(completed) == 1 and completed[0]["payload"]["reason"] == "all_nodes_visited"
    # The rehearsal examiner is labelled as such wherever usage is recorded.
    usage = [e["payload"] for e in events if e["type"] == "usage_reported"]
    assert usage and {u["provider"] for u in usage} == {"offline"}
    assert {u["model"] for u in usage} == {oe.MODEL}
    # Every opening was spoken verbatim by the runtime, never improvised.
    spoken = [e["payload"]["text"] for e in events if e["type"] == "examiner_utterance_final"]
    assert ANSWERS and spoken[0].startswith("Hello, and welcome.")
    assert "Could you walk me through how Dijkstra's algorithm finds shortest paths" in " ".join(
        spoken
    )
