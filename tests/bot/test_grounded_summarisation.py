"""Context summarisation never carries the candidate's passage out of its block (issue #35).

Pipecat's auto context summarisation (``bot.pipeline.Summarisation``) compresses a node's older
messages once the context passes a size: it sends the model a transcript of them ("Conversation
history: DEVELOPER: ... USER: ...", one ``user`` message) and puts the model's summary back at
the head of the context as a ``user`` message. At a grounded node those older messages are the
node's instructions and the quoted passage: the candidate's text went to the model flattened
into plain conversation, and a summariser that repeats it put it back into every later request
as the model's own words, out of its labelled block.

Here the whole way (channel layer, Pipecat pipeline, ``FlowManager``, runtime controller, event
store) with the scripted OpenAI-compatible peer on 127.0.0.1 and the summarisation thresholds
low enough to be reached at the grounded question: in every request the model is sent, the
summariser's included, the passage's text is only in its block (a ``developer`` message that is
exactly :func:`ioa.compiler.material_block.passage_block`), and every request at the grounded
node still holds that block.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bot.session_runner import Outcome
from ioa.compiler.material_block import passage_block
from sessions.bot_channel import send_to_bot
from tests.bot.conftest import (
    ANSWERS,
    Watcher,
    check_log,
    new_session,
    publish_example,
    start_exam,
    upload_report,
)
from tests.bot.conftest import stored as stored_events
from tests.support.grounded_model import examiner, report
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services("postgres", "redis")]

EXPLANATIONS = (
    "I chose it because every edge weight in the city graph is positive, so the simpler "
    "algorithm is correct.",
    "Its limitation is that closed roads are not handled; I would recompute the routes.",
)


def summariser(request: RecordedRequest) -> Reply:
    """The scripted examiner, which asks once for more after the first explanation (so the
    part goes on), and as summariser an extractive one: its summary repeats the transcript it
    was sent (as a model asked to keep "key facts" may)."""
    if request.stream and request.messages[-1] == {"role": "user", "content": EXPLANATIONS[0]}:
        return report("Thank you. What would you do differently?", needsFollowUp=True)
    if request.stream:
        return examiner(request)
    history = " ".join(str(m.get("content", "")) for m in request.messages if m["role"] != "system")
    return Reply.text("Key facts: " + history.removeprefix("Conversation history:"))


def strings(value: object) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def text_of(message: dict[str, Any]) -> str:
    """A message's text as the model reads it: its content and its tool calls' arguments."""
    calls = message.get("tool_calls") or []
    arguments = [json.loads(c["function"]["arguments"] or "null") for c in calls]
    return "\n".join(strings(message.get("content")) + strings(arguments))


def outside_the_block(request: RecordedRequest, passage: str, block: str) -> list[str]:
    """Where ``request`` carries ``passage`` other than as its block: the roles of such
    messages (``system`` for the instruction)."""
    return [
        str(m.get("role"))
        for m in request.messages
        if passage in text_of(m) and (m.get("role"), m.get("content")) != ("developer", block)
    ]


async def examined(session_id: Any, watcher: Watcher) -> None:
    """Warm-up answered, the grounded question asked, two explanations given, then stopped."""
    bot, candidate = await start_exam(session_id, watcher)
    await candidate.answer(ANSWERS["warmup"][0])
    for explanation in EXPLANATIONS:
        await candidate.answer(explanation)
    await send_to_bot(session_id, "stop")
    assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED


def test_summarisation_keeps_the_passage_in_its_block(bot_settings: Any) -> None:
    session = new_session(publish_example("cs201-own-report"))
    upload_report(session)
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    bot_settings.VIVA_LLM_MODEL = "scripted-test-model"
    # Reached at the grounded node: its task, the block, the opening, the call and its result,
    # and the candidate's answer are six messages.
    bot_settings.VIVA_BOT_CONTEXT_MAX_MESSAGES = 4
    bot_settings.VIVA_BOT_CONTEXT_KEEP_MESSAGES = 2
    with OpenAICompatibleServer(default_reply=summariser) as model:
        bot_settings.VIVA_LLM_BASE_URL = model.base_url
        asyncio.run(asyncio.wait_for(examined(session.pk, Watcher()), 300))
        requests = model.requests

    events = stored_events(session.pk)
    check_log(events)
    (drawn,) = [e["payload"] for e in events if e["type"] == "passage_drawn"]
    assert drawn["outcome"] == "drawn"
    passage = drawn["text"]
    block = passage_block(drawn["passageId"], passage, "report", drawn["cue"])
    grounded = [r for r in requests if any(m.get("content") == block for m in r.messages)]
    assert grounded, "the model never saw the passage"
    assert max(len(r.messages) for r in grounded) >= 6, "the context never grew past the limit"

    escaped = {
        (index, "stream" if r.stream else "summary", role)
        for index, r in enumerate(requests)
        for role in outside_the_block(r, passage, block)
    }
    assert escaped == set(), f"the passage outside its block: {sorted(escaped)}"
    # The requests about the candidate's explanations (the second one after the context passed
    # the limit) still hold the block.
    for explanation in EXPLANATIONS:
        answered = {"role": "user", "content": explanation}
        about = [r for r in requests if r.stream and r.messages and r.messages[-1] == answered]
        assert about and all(r in grounded for r in about), explanation


def wrapup_after_grounded() -> Any:
    """The report exam with its grounded part leading straight to the wrap-up (whose context
    strategy is ``reset_with_summary``), published through the real gate."""
    from publishing.services import version_publish
    from tests.factories import DraftPackageFactory, example_document

    document = example_document("cs201-own-report")
    own = next(n for n in document["nodes"] if n["nodeId"] == "q-own-design")
    for transition in own["transitions"]:
        transition["targetNodeId"] = "wrapup"
    draft = DraftPackageFactory(document=document)
    return version_publish(draft=draft, user=draft.owner).version


def test_the_wrapup_summary_keeps_the_passage_in_its_block(bot_settings: Any) -> None:
    session = new_session(wrapup_after_grounded())
    upload_report(session)
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    bot_settings.VIVA_LLM_MODEL = "scripted-test-model"
    watcher = Watcher()

    async def main() -> None:
        bot, candidate = await start_exam(session.pk, watcher)
        await candidate.answer(ANSWERS["warmup"][0])
        await candidate.answer(EXPLANATIONS[1])  # evidence sufficient: on to the wrap-up
        await watcher.until(lambda w: "wrapup" in w.nodes(), what="the wrap-up")
        await send_to_bot(session.pk, "stop")
        assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED

    with OpenAICompatibleServer(default_reply=summariser) as model:
        bot_settings.VIVA_LLM_BASE_URL = model.base_url
        asyncio.run(asyncio.wait_for(main(), 300))
        requests = model.requests

    events = stored_events(session.pk)
    check_log(events)
    (drawn,) = [e["payload"] for e in events if e["type"] == "passage_drawn"]
    passage = drawn["text"]
    block = passage_block(drawn["passageId"], passage, "report", drawn["cue"])
    assert any(any(m.get("content") == block for m in r.messages) for r in requests)
    escaped = {
        (index, "stream" if r.stream else "summary", role)
        for index, r in enumerate(requests)
        for role in outside_the_block(r, passage, block)
    }
    assert escaped == set(), f"the passage outside its block: {sorted(escaped)}"
