"""Practice sittings (issue #35, docs/spec/practice-sittings.md) placed in a course: a learner's
launches enter their newest attempt, and no practice attempt ever reaches the gradebook."""

from __future__ import annotations

import pytest
from django.test import Client

from lti.grades import planned_grade
from lti.models import CandidateLink, GradePassback
from marking.models import PracticeFeedback, SessionMark
from publishing.models import PublishedVersion
from sessions import practice
from sessions.models import ExamSession, OutboxMessage, Sitting
from tests.lti.lms import Lms, lms_pair, platform_bases, version
from tests.marking.exams import complete

__all__ = ["lms_pair", "platform_bases", "version"]

pytestmark = pytest.mark.django_db(transaction=True)


def test_practice_in_a_course_enters_the_newest_attempt_and_sends_no_grade(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    lms, _ = lms_pair
    item = lms.place(client, instructor="ines", context="course-1", version=version)
    sitting = Sitting.objects.get(pk=item["custom"]["viva_sitting"])
    Sitting.objects.filter(pk=sitting.pk).update(is_practice=True)
    launch = {"user": "alice", "context": "course-1", "link": "link-1", "custom": item["custom"]}
    assert lms.launch(client, **launch).status_code == 302
    first = ExamSession.objects.get(sitting=sitting, candidate__email="alice@uni.example")
    client.logout()
    complete(first)
    second = practice.practice_again(session=first)
    assert lms.launch(client, **launch)["Location"] == f"/exam/{second.pk}/"
    client.logout()
    complete(second)
    assert CandidateLink.objects.filter(session__in=[first, second]).count() == 2
    assert PracticeFeedback.objects.filter(session__in=[first, second]).count() == 2
    assert not SessionMark.objects.filter(session__sitting=sitting).exists()
    assert planned_grade(first) is None and planned_grade(second) is None
    assert not OutboxMessage.objects.filter(topic="lti.post_grade").exists()
    assert not GradePassback.objects.exists()
    assert lms.scores(sitting, user="alice") == []
