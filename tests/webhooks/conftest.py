"""Fixtures of the webhook tests: endpoints (the loopback allowance, off by default as in
production, is tests/conftest.py's ``loopback_allowed``), and completed sessions
produced by the real runtime controller (``tests/marking/exams.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from config.celery import app
from publishing.services import version_publish
from tests.factories import AuthorFactory, DraftPackageFactory
from webhooks.events import WebhookEvent
from webhooks.models import WebhookEndpoint

ALL_EVENTS = [e.value for e in WebhookEvent]


@pytest.fixture
def eager() -> Iterator[None]:
    """Run tasks in-process whatever the environment configures."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.fixture
def version() -> Any:
    author = AuthorFactory()
    return version_publish(draft=DraftPackageFactory(owner=author), user=author).version


@pytest.fixture
def make_endpoint() -> Callable[..., WebhookEndpoint]:
    def make(url: str, events: list[str] | None = None, active: bool = True) -> WebhookEndpoint:
        return WebhookEndpoint.objects.create(
            name="LMS", url=url, events=ALL_EVENTS if events is None else events, active=active
        )

    return make
