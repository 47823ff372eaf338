"""A test world built once for many tests, each test's changes rolled back (issue #36).

The permission tables run hundreds of requests against one small world (a published package, a
sitting, a session, a handful of users). Building it costs far more than a request (publishing
runs the validation, the compiler and the dry run), and building it anew for every test, let
alone flushing every table after it, is most of those files' time.

:func:`rolled_back_world` builds the world once inside a transaction that is never committed:
pytest-django's ordinary (non-transactional) tests open their own atomic block on the same
connection, which then becomes a savepoint, so every test starts from the world as built and
whatever it writes is rolled back when it ends, exactly as with ``setUpTestData``. Use it in a
class-scoped fixture (pytest tears it down as soon as the next test is outside the class, so
a ``transaction=True`` test never runs while its transaction is open).

A file whose tests were transactional (``transaction=True``) had every on-commit callback run;
it keeps that: ``run_on_commit=True`` runs the world's when it is built, and
:class:`CommittingClient` runs each request's when it returns, as the commit of a request
outside a test transaction would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import transaction
from django.test import Client, TestCase, override_settings
from pytest_django import DjangoDbBlocker

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
"""What tests/conftest.py's autouse fixture sets for every test (it is function-scoped, so a
world built in a wider scope sets it itself)."""


@contextmanager
def rolled_back_world[W](
    blocker: DjangoDbBlocker, build: Callable[[], W], *, run_on_commit: bool
) -> Iterator[W]:
    """Yields ``build()``'s world, built in a transaction that is rolled back afterwards.

    ``run_on_commit``: run the on-commit callbacks of the build when it is done (as a world
    built by a ``transaction=True`` test had them run); otherwise they never run (as in a world
    built inside an ordinary test's transaction)."""
    with blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            with (
                override_settings(PASSWORD_HASHERS=FAST_HASHERS),
                TestCase.captureOnCommitCallbacks(execute=run_on_commit),
            ):
                world = build()
        except BaseException:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
            raise
    try:
        yield world
    finally:
        with blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


def reloaded(instance: Any) -> Any:
    """A fresh copy of a model instance from the database (a test's in-memory changes to the
    shared world's objects never reach the next test)."""
    return type(instance)._default_manager.get(pk=instance.pk)


class CommittingClient(Client):
    """A test client whose requests run their on-commit callbacks when they return, as they
    would outside the test's transaction (broadcasts, outbox hand-overs, scheduling)."""

    def request(self, **request: Any) -> Any:
        with TestCase.captureOnCommitCallbacks(execute=True):
            return super().request(**request)
