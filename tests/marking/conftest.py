"""Fixtures of the marking tests: a published cs201 version and completed, marked sessions
produced by the real runtime controller (``tests/marking/exams.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from config.celery import app
from publishing.services import version_publish
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory
from tests.marking.exams import completed_session


@pytest.fixture
def eager() -> Iterator[None]:
    """Run tasks in-process (the embedded shape) whatever the environment configures."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.fixture
def author() -> Any:
    return AuthorFactory()


@pytest.fixture
def version(author: Any) -> Any:
    draft = DraftPackageFactory(owner=author)
    return version_publish(draft=draft, user=author).version


@pytest.fixture
def make_session(version: Any, eager: None) -> Callable[..., Any]:
    """``make_session(profile="mixed")``: a completed session of ``version``, marked on commit."""

    def make(profile: str = "mixed", candidate: Any = None) -> Any:
        return completed_session(
            version=version, candidate=candidate or CandidateFactory(), profile=profile
        )

    return make
