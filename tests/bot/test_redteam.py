"""The red-team table through the real bot on Postgres and Redis (our chapter 04): a
misbehaving OpenAI-compatible model (``tests/support/redteam.py``) against the channel layer,
the Pipecat pipeline, the ``FlowManager``, the runtime controller and the event store. Every
misbehaviour must be contained: one answer before the deadline, no protected text, no
consequential state change, and its trace in the log."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ioa.runtime.plan import ExamPlan
from ioa.schema import load_package
from sessions.bot_channel import send_to_bot
from tests.bot.conftest import Candidate, Watcher, check_log, new_session, start_exam, stored
from tests.factories import DraftPackageFactory, example_document
from tests.support.openai_server import OpenAICompatibleServer
from tests.support.redteam import (
    CASES,
    WARMUP_ANSWER,
    HostileModel,
    TimedWatcher,
    judge,
    redteam_document,
    run_table,
    table,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services("postgres", "redis")]

DEADLINE = 3.0


def publish_document(document: dict[str, Any]) -> Any:
    """Publish ``document`` through the real publication gate."""
    from publishing.services import version_publish

    draft = DraftPackageFactory(document=document)
    return version_publish(draft=draft, user=draft.owner).version


def test_every_misbehaviour_is_contained(db: Any, bot_settings: Any) -> None:
    assert len(CASES) >= 25
    published = publish_document(redteam_document(example_document()))
    exam_session = new_session(published)
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    bot_settings.VIVA_BOT_TURN_DEADLINE_SECONDS = DEADLINE
    watcher = Watcher()
    timed = TimedWatcher(watcher)
    model = HostileModel()
    with OpenAICompatibleServer(default_reply=model) as server:
        bot_settings.VIVA_LLM_BASE_URL = server.base_url

        async def main() -> list[Any]:
            from bot.runners import run_bot
            from bot.session_runner import BotOptions

            watcher.bind()
            bot = asyncio.create_task(run_bot(exam_session.pk, options=BotOptions(on_stored=timed)))
            await watcher.until_count("bot_ready", 1)
            candidate = Candidate(exam_session.pk, watcher)
            await candidate.ready()
            await watcher.until_count("examiner_utterance_final", 1)
            await candidate.answer(WARMUP_ANSWER)
            await watcher.until(lambda w: "q-dijkstra" in w.nodes(), what="q-dijkstra")
            await candidate.answer("Let me start with the source vertex.")
            rows = await run_table(candidate, timed, CASES, model, deadline=DEADLINE)
            await send_to_bot(exam_session.pk, "stop")
            await asyncio.wait_for(bot, 60)
            return rows

        rows = asyncio.run(asyncio.wait_for(main(), 600))
        requests = len(server.requests)

    node = ExamPlan(load_package(json.loads(published.canonical_json))).node("q-dijkstra")
    judge(rows, protected=node.protected_texts, speakable=node.speakable_texts, deadline=DEADLINE)
    report = table(rows)
    print(report)
    assert all(row.contained for row in rows), report
    events = stored(exam_session.pk)
    check_log(events)
    # the runaway loop is bounded: nowhere near "60 requests in 4 s"
    assert requests < 12 * len(CASES)
    # the log never blames the candidate, and no consequential command was accepted
    received = [e["payload"] for e in events if e["type"] == "candidate_command_received"]
    assert not [r for r in received if r["accepted"] and r["command"] in {"finish", "skip"}]
    assert not [e for e in events if e["type"] == "exam_completed"]
    # the examiner's stalls are not the candidate's hesitation: no mid-response hesitation
    hesitations = [e["payload"] for e in events if e["type"] == "hesitation_detected"]
    assert not [h for h in hesitations if h["context"] == "mid_response"]


def test_a_candidate_who_says_no_is_never_finished_by_the_llm(
    exam_session: Any, bot_settings: Any
) -> None:
    """The issue's first report, end to end: the LLM claims ``finish`` on every turn; the
    candidate keeps saying no."""
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    model = HostileModel()
    model.turn(next(case for case in CASES if case.name == "finish claimed against 'no'"))
    watcher = Watcher()
    with OpenAICompatibleServer(default_reply=model) as server:
        bot_settings.VIVA_LLM_BASE_URL = server.base_url

        async def main() -> None:
            bot, candidate = await start_exam(exam_session.pk, watcher)
            for text in ("No, I want to continue.", "No, I do not want to finish.", "No."):
                await candidate.answer(text)
            await send_to_bot(exam_session.pk, "stop")
            await asyncio.wait_for(bot, 60)

        asyncio.run(asyncio.wait_for(main(), 300))

    events = stored(exam_session.pk)
    assert not [e for e in events if e["type"] == "exam_completed"]
    refused = [
        e["payload"]
        for e in events
        if e["type"] == "guardrail_triggered"
        and e["payload"]["guardrailId"].startswith("llm-claim-refused:finish")
    ]
    assert len(refused) == 3
    spoken = [e["payload"]["text"] for e in events if e["type"] == "examiner_utterance_final"]
    assert not any("Goodbye" in text for text in spoken)
