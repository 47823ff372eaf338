"""``sessions.bot_port``: the bot app registers the examiner that sessions asks (sessions imports
no bot module); the exam room's answers through it are tested with the pages
(tests/bot/test_voice_language.py, tests/sessions/test_exam_room_views.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bot.models import BotLease
from bot.session_port import SessionExaminerBot
from sessions import bot_port
from tests.sessions.factories import ExamSessionFactory


def test_the_bot_app_registers_its_examiner() -> None:
    bot = bot_port.examiner_bot()
    assert isinstance(bot, SessionExaminerBot)
    assert bot.hears("en") and not bot.hears("de")  # the offline STT of the test settings


@pytest.mark.django_db
def test_the_bot_reports_each_sessions_health_from_its_lease() -> None:
    running, expired = ExamSessionFactory(), ExamSessionFactory()
    never = ExamSessionFactory()
    later = timezone.now() + timedelta(seconds=30)
    BotLease.objects.create(session=running, state=BotLease.State.RUNNING, expires_at=later)
    BotLease.objects.create(
        session=expired, state=BotLease.State.RUNNING, expires_at=timezone.now()
    )
    health = bot_port.bot_health([running.pk, expired.pk, never.pk])
    assert health == {
        str(running.pk): bot_port.BotHealth("running", True),
        str(expired.pk): bot_port.BotHealth("running", False),
    }
