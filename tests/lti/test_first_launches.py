"""The first launches of a newly placed link arrive together (issue #32): a class opening the
exam at nine o'clock. Every learner gets their exam; the link binds once; nobody gets an
error page. Against an independent LTI platform (``tests/lti/lms.py``), each learner in their
own browser (a Django test client per thread, its own database connection)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from lti.models import SittingLink
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting
from tests.lti.lms import Lms, lms_pair, platform_bases, version

__all__ = ["lms_pair", "platform_bases", "version"]

pytestmark = pytest.mark.django_db(transaction=True)

LEARNERS = ["amy", "ben", "cai", "dee", "eli", "fay"]


def _launch_together(lms: Lms, custom: dict[str, Any]) -> list[Any]:
    """Every learner launches the course's new link at once; their responses."""
    start = threading.Barrier(len(LEARNERS))
    responses: list[Any] = [None] * len(LEARNERS)

    def launch(index: int, user: str) -> None:
        try:
            start.wait()
            responses[index] = lms.launch(Client(), user=user, custom=custom)
        except Exception as error:  # the assertion below names it
            responses[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=launch, args=pair) for pair in enumerate(LEARNERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return responses


def test_learners_opening_a_new_link_together_each_get_their_exam(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion
) -> None:
    lms, _ = lms_pair
    item = lms.place(client, instructor="ines", context="course-1", version=version)
    sitting = Sitting.objects.get(pk=item["custom"]["viva_sitting"])
    responses = _launch_together(lms, item["custom"])
    failed = [r for r in responses if getattr(r, "status_code", None) != 302]
    assert failed == [], failed
    assert all(r["Location"].startswith("/exam/") for r in responses)
    assert SittingLink.objects.filter(sitting=sitting).count() == 1
    assert ExamSession.objects.filter(sitting=sitting).count() == len(LEARNERS)
