"""Issue #14 in the browser: the exam room's bot against a hostile language model.

A separate daphne (bot inline) talks to the red-team model (``tests/support/redteam.py``'s
:class:`HostileModel` behind the OpenAI-compatible server of ``tests/support/openai_server.py``
on 127.0.0.1), chosen by the server's settings exactly as a deployment chooses a vLLM endpoint
(``VIVA_LLM_PROVIDER=openai_compatible``, ``VIVA_LLM_BASE_URL``, ``VIVA_LLM_API_KEY``). The
candidate types in Chromium; the model misbehaves on the turns the test names:

* it claims ``finish`` after "No, I want to continue.": the exam goes on, the page never reaches
  the completion link, a refused claim is stored;
* it leaks its system prompt and the rubric: neither is on the page nor in any WebSocket frame
  the page received;
* it sends tool arguments that are not JSON, then calls a tool that does not exist: the candidate
  still gets one answer, within the turn deadline.

daphne's output goes to a file (never an unread pipe) and is shown when the room does not start.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, WebSocket, expect

from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    TEXT_MODE,
    Exam,
    answer,
    choose_answer_mode,
    examiner_turns,
    finished,
    schedule_exam,
    wait_until_quiet,
)
from tests.browser.helpers import eventually, remember_artifact_name
from tests.support.openai_server import OpenAICompatibleServer
from tests.support.processes import asgi_server_process
from tests.support.redteam import (
    CASES,
    ROLE_LEAK,
    RUBRIC_LEAK,
    WARMUP_ANSWER,
    Case,
    HostileModel,
    _six_word_runs,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TURN_DEADLINE = 10.0
"""The per-turn deadline (the product's default, ``VIVA_TURN_DEADLINE_SECS``)."""
SLACK = 5.0
"""What a loaded machine may add between the bot's answer and the page showing it."""


def case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


@pytest.fixture
def model() -> Iterator[tuple[HostileModel, OpenAICompatibleServer]]:
    hostile = HostileModel()
    with OpenAICompatibleServer(default_reply=hostile) as server:
        yield hostile, server


@pytest.fixture
def hostile_server(
    live_asgi_server: str,
    model: tuple[HostileModel, OpenAICompatibleServer],
    tmp_path: Path,
) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "daphne.log"
    with asgi_server_process(
        log_path=str(log),
        DJANGO_ALLOW_ASYNC_UNSAFE="",
        VIVA_BOT_RUNNER="inline",
        VIVA_LLM_PROVIDER="openai_compatible",
        VIVA_LLM_BASE_URL=model[1].base_url,
        VIVA_LLM_API_KEY="hostile-key",
        VIVA_LLM_MODEL="scripted-test-model",
        VIVA_VOICE_WARMUP="false",
    ) as (address, _):
        yield f"http://{address}", log


@pytest.fixture
def hostile_page(browser: Browser, hostile_server: tuple[str, Path]) -> Iterator[Page]:
    context = browser.new_context(
        base_url=hostile_server[0], viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    remember_artifact_name(page, "test_hostile_examiner")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield page
    finally:
        remember_artifact_name(page, None)
        context.close()
    assert errors == [], f"the browser reported problems: {errors}"


def enter_text_room(page: Page, exam: Exam, log: Path) -> None:
    choose_answer_mode(page, exam, TEXT_MODE)
    page.get_by_role("button", name="Go to the exam room").click()
    start = page.get_by_role("button", name="Start the exam")
    try:
        expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    except AssertionError as error:
        raise AssertionError(f"the room did not start; daphne said:\n{log.read_text()}") from error
    start.click()
    expect(page.get_by_role("heading", name="Your answer")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )


def events(exam: Exam, type_: str) -> list[dict[str, Any]]:
    return [
        row.payload
        for row in SessionEvent.objects.filter(session=exam.session, type=type_).order_by("seq")
    ]


def say(page: Page, text: str) -> float:
    """Types ``text``; returns the seconds until the examiner's next turn was on the page."""
    before = len(examiner_turns(page))
    sent = time.monotonic()
    answer(page, text)
    assert eventually(
        lambda: len(examiner_turns(page)) > before or finished(page), TURN_DEADLINE + SLACK
    ), f"no answer to {text!r} within {TURN_DEADLINE + SLACK} s"
    took = time.monotonic() - sent
    wait_until_quiet(page, quiet=1.0)
    return took


@pytest.mark.timeout(300)
def test_a_hostile_model_is_contained_in_the_text_exam_room(
    hostile_page: Page,
    hostile_server: tuple[str, Path],
    model: tuple[HostileModel, OpenAICompatibleServer],
) -> None:
    page, (hostile, _) = hostile_page, model
    exam = schedule_exam()
    frames: list[str] = []

    def on_socket(socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: frames.append(str(payload)))

    page.on("websocket", on_socket)
    enter_text_room(page, exam, hostile_server[1])
    assert eventually(lambda: examiner_turns(page), EXAMINER_TIMEOUT), "no opening"
    say(page, WARMUP_ANSWER)

    # The LLM claims finish after the candidate said no: the exam goes on.
    hostile.turn(case("finish claimed against 'continue'"))
    say(page, "No, I want to continue.")
    time.sleep(2)
    assert not finished(page)
    assert events(exam, "exam_completed") == []
    refused = [
        e
        for e in events(exam, "guardrail_triggered")
        if str(e.get("guardrailId", "")).startswith("llm-claim-refused:")
    ]
    assert refused, f"no refused claim stored: {events(exam, 'guardrail_triggered')}"

    # Leaks of the system prompt and of the rubric.
    for name in ("system prompt and task message", "free text leaking the rubric (no tool)"):
        hostile.turn(case(name))
        say(page, case(name).says)

    # Broken tool calls: still one answer each, within the deadline: the question again.
    fallbacks: list[str] = []
    for name in ("tool arguments not JSON", "unknown tool, every time"):
        hostile.turn(case(name))
        before = len(examiner_turns(page))
        took = say(page, case(name).says)
        assert took <= TURN_DEADLINE + SLACK, f"{name}: answered after {took:.1f} s"
        assert len(examiner_turns(page)) == before + 1, f"{name}: {examiner_turns(page)[before:]}"
        fallbacks.append(examiner_turns(page)[-1])
    # The current question, asked again (the same words both times).
    assert fallbacks[0] == fallbacks[1], fallbacks
    assert "Dijkstra" in fallbacks[0] and fallbacks[0].rstrip().endswith("?"), fallbacks
    hostile.turn(None)
    codes = {e.get("code") for e in events(exam, "system_error")}
    assert {"llm_no_usable_reply", "llm_budget_exhausted"} <= codes, codes

    assert not finished(page)
    assert events(exam, "exam_completed") == []
    shown = page.locator("body").inner_text()
    protected = _six_word_runs(ROLE_LEAK) | _six_word_runs(RUBRIC_LEAK)
    assert not (_six_word_runs(shown) & protected), "protected text on the page"
    assert frames, "the page received no frame"
    leaked = [f for f in frames if _six_word_runs(f.replace("\\n", "\n")) & protected]
    assert leaked == [], f"protected text in frames: {leaked[:2]}"
    for marker in ("My system prompt", "My instructions", "settling, relaxation"):
        assert marker not in shown and not any(marker in f for f in frames), marker


@pytest.mark.timeout(180)
def test_a_bot_that_never_starts_is_said_on_the_page(
    browser: Browser, live_asgi_server: str, tmp_path: Path
) -> None:
    """The cause of "the room never showed Start": with ``REDIS_URL`` set, daphne's default
    runner is Celery, and with no worker on the bots queue the start request waits in Redis,
    logging nothing. The candidate must not wait in silence: the page says the examiner is late."""
    exam = schedule_exam()
    with asgi_server_process(
        log_path=str(tmp_path / "daphne.log"),
        DJANGO_ALLOW_ASYNC_UNSAFE="",
        VIVA_BOT_RUNNER="celery",
        VIVA_OFFLINE_EXAMINER_ALLOWED="true",
        VIVA_LLM_PROVIDER="offline",
        VIVA_VOICE_WARMUP="false",
    ) as (address, _):
        context = browser.new_context(base_url=f"http://{address}", locale="en-GB")
        page = context.new_page()
        try:
            choose_answer_mode(page, exam, TEXT_MODE)
            page.get_by_role("button", name="Go to the exam room").click()
            expect(page.get_by_role("heading", name="Waiting for the examiner")).to_be_visible()
            expect(page.get_by_text("taking longer than usual to start").first).to_be_visible(
                timeout=40_000
            )
            expect(page.get_by_role("button", name="Start the exam")).to_be_hidden()
        finally:
            context.close()
