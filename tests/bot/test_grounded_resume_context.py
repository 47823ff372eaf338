"""A resumed bot's language-model context holds the drawn passage (issue #35).

``test_grounded_material.py`` shows that a bot stopped at the grounded question and started
again hands the report over again and keeps the evidence on the same passage; it runs the
offline examiner, so it cannot show what a language model is sent. Here the examiner is the
scripted OpenAI-compatible peer (``tests/support/openai_server.py``, real HTTP on 127.0.0.1)
behind the real bot (channel layer, Pipecat pipeline, ``FlowManager``, runtime controller,
event store): the first request the new bot sends the model about the candidate's answer
carries the passage exactly as the first bot sent it, as quoted data in its own labelled
block (a ``developer`` message apart from the node's instructions, the system instruction and
the candidate's words), and the model's question on it was asked before the stop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.runners import run_bot
from bot.session_runner import BotOptions, Outcome
from ioa.compiler.material_block import MATERIAL_HEADER, passage_block
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
from tests.support.grounded_model import examiner, question_about
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services("postgres", "redis")]

EXPLANATION = (
    "I chose it because every edge weight in the city graph is positive, so the simpler "
    "algorithm is correct; its limitation is that closed roads are not handled."
)


def carrying(request: RecordedRequest, text: str) -> list[dict[str, Any]]:
    """The messages of ``request`` whose text holds ``text``."""
    return [m for m in request.messages if text in str(m.get("content", ""))]


def about_the_answer(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    """Streamed requests whose last message is the candidate's explanation."""
    return [
        r
        for r in requests
        if r.stream and r.messages and r.messages[-1] == {"role": "user", "content": EXPLANATION}
    ]


def test_a_resumed_bot_sends_the_model_the_passage_as_quoted_data(bot_settings: Any) -> None:
    session = new_session(publish_example("cs201-own-report"))
    material = upload_report(session)
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    bot_settings.VIVA_LLM_MODEL = "scripted-test-model"
    watcher = Watcher()

    with OpenAICompatibleServer(default_reply=examiner) as model:
        bot_settings.VIVA_LLM_BASE_URL = model.base_url

        async def main() -> int:
            bot, candidate = await start_exam(session.pk, watcher)
            await candidate.answer(ANSWERS["warmup"][0])
            await watcher.until(
                lambda w: any(
                    e["payload"].get("nodeId") == "q-own-design"
                    and e["payload"]["purpose"] != "bridge"
                    for e in w.of("examiner_utterance_final")
                ),
                what="the grounded question",
            )
            await send_to_bot(session.pk, "stop")
            assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED
            before = len(model.requests)
            bot = asyncio.create_task(run_bot(session.pk, options=BotOptions(on_stored=watcher)))
            await watcher.until(
                lambda w: any(
                    e["payload"]["reason"] == "technical_recovered"
                    for e in w.of("exam_state_changed")
                ),
                what="the resume",
            )
            await candidate.answer(EXPLANATION)
            await watcher.until_count("evidence_signal", 1)
            await send_to_bot(session.pk, "stop")
            assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED
            return before

        before = asyncio.run(asyncio.wait_for(main(), 300))
        requests = model.requests

    events = stored_events(session.pk)
    check_log(events)
    types = [e["type"] for e in events]
    assert types.count("bot_ready") == 1 and types.count("material_attached") == 1
    (drawn,) = [e["payload"] for e in events if e["type"] == "passage_drawn"]
    assert drawn["outcome"] == "drawn" and drawn["materialId"] == material.material_id
    passage = drawn["text"]
    block = passage_block(drawn["passageId"], passage, "report", drawn["cue"])

    # The first bot: the passage reached the model in its block, and its question was asked.
    first = [r for r in requests[:before] if carrying(r, passage)]
    assert first, "the first bot never sent the passage"
    question = question_about(passage)
    spoken = [e["payload"]["text"] for e in events if e["type"] == "examiner_utterance_final"]
    assert any(question in text for text in spoken), spoken
    resumed_at = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "exam_state_changed" and e["payload"]["reason"] == "technical_recovered"
    )
    assert any(question in e["payload"].get("text", "") for e in events[:resumed_at])

    # The resumed bot: the model's request about the answer holds the same block, apart.
    (after,) = about_the_answer(requests[before:])[:1]
    assert about_the_answer(requests[:before]) == []
    assert [(m["role"], m["content"]) for m in carrying(after, passage)] == [("developer", block)]
    assert passage not in (after.system_instruction or "")
    tasks = [m for m in after.messages_with_role("developer") if MATERIAL_HEADER in m]
    assert len(tasks) == 1 and passage not in tasks[0]
    contents = [m.get("content") for m in after.messages]
    assert contents.index(tasks[0]) < contents.index(block) < len(contents) - 1
    assert all(passage not in text for text in after.messages_with_role("user"))

    # The answer after the resume is evidence tied to that passage.
    signals = [e["payload"] for e in events if e["type"] == "evidence_signal"]
    assert signals and {s.get("passageId") for s in signals} == {drawn["passageId"]}
    assert {"tgt-explains-own-choice", "tgt-own-limitation"} <= {
        t for s in signals for t in s["targetIds"]
    }
