"""Every examiner busy (issue #33, admission control): a candidate whose examiner waits for a
free worker is told so, with their place in the queue, and that their time has not started,
instead of "taking longer than usual" for ever. No bot worker runs in this module: the start
stays queued (Redis) while a worker reports itself full (``bot.capacity``, the same report the
bot workers send)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import Page, expect

from bot import capacity
from bot.models import BotLease
from tests.browser.exam_journey import TEXT_MODE, choose_answer_mode, schedule_exam
from tests.browser.helpers import axe_violations
from tests.sessions.factories import ExamSessionFactory

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services("postgres", "redis"),
    pytest.mark.django_db(transaction=True),
]


def test_a_candidate_waiting_for_a_busy_cluster_is_told_their_place(page: Page) -> None:
    # This worker's own Redis database (tests/support/xdist_services.py) starts empty: the
    # capacity reports and queued starts earlier test files left in it changed the place shown
    # (failed in a parallel CI run and after tests/bot/test_redteam.py in one process).
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    cache.delete(capacity.INDEX_KEY)
    for minutes in (2, 1):  # two candidates who asked before
        BotLease.objects.create(
            session=ExamSessionFactory(),
            state="starting",
            requested_at=timezone.now() - timedelta(minutes=minutes),
        )
    capacity.report(worker="celery:busy-host:1", capacity=1, hosted=1, draining=False)
    exam = schedule_exam()
    page.clock.install()
    choose_answer_mode(page, exam, TEXT_MODE)
    # The room's script has run (and started its patience timer) once it opens the event
    # socket: the heading and the first words are the server's HTML, shown before the deferred
    # script runs, so waiting for them alone fast-forwarded the fake clock past nothing (the first
    # browser test in a process loads the scripts slowest: failed in the CI run at 4cde380).
    with page.expect_websocket():
        page.get_by_role("button", name="Go to the exam room").click()
    expect(page.get_by_role("heading", name="Waiting for the examiner")).to_be_visible()
    waiting = page.locator("#waiting-text")
    expect(waiting).to_have_text("The examiner is getting ready. This usually takes a few seconds.")

    page.clock.fast_forward(21_000)  # past the room's patience: it asks the server why
    expect(waiting).to_contain_text("All examiners are busy right now. You are number 3 in")
    expect(waiting).to_contain_text("your time has not started")
    assert axe_violations(page) == []

    # A worker frees up: nothing to explain any more, the room's own words come back.
    capacity.report(worker="celery:busy-host:1", capacity=2, hosted=1, draining=False)
    page.clock.fast_forward(5_000)
    expect(waiting).to_contain_text("taking longer than usual")
    cache.delete(capacity.INDEX_KEY)
