"""What a chaos run (tests/support/chaos.py) sets up before its processes start, the way people
do it: an author publishes the example package and places it in a course of a real LTI platform
(Deep Linking); each candidate launches it from the course (their exam session and their link to
the gradebook are made by the launch, which also signs them in) and walks through identity,
briefing and the choice of text; an administrator registers a webhook endpoint; the author
issues the API key they lock marks with."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from django.test import Client

from tests.support.chaos_candidates import Exam

COURSE = "course-1"


@dataclass
class Setup:
    """The run's exams, the platform they came from and what to check them against."""

    exams: list[Exam]
    lms: Any  # tests.lti.lms.Lms
    sitting: Any  # sessions.models.Sitting
    users: dict[str, str]
    """session id -> the candidate's user id at the platform."""
    token: str
    """The author's API key."""


def prepare(count: int, receiver_url: str, stack: ExitStack) -> Setup:
    """Publish, place, launch ``count`` candidates and subscribe ``receiver_url`` to
    ``exam.completed`` and ``marks.locked``; the platform process lives as long as ``stack``."""
    from accounts.services import api_token_issue
    from publishing.services import version_publish
    from sessions.models import Sitting
    from tests.factories import AuthorFactory, DraftPackageFactory, example_document
    from tests.lti.lms import member, register
    from tests.support.lti_platform import running_platform
    from webhooks.models import WebhookEndpoint

    base = stack.enter_context(running_platform())
    users = [f"chaos{index:03d}" for index in range(count)]
    roster = [member(user) for user in users] + [member("ines", "Instructor")]
    lms = register(base, Client(), {COURSE: roster})
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    version = version_publish(draft=draft, user=author).version
    item = lms.place(Client(), instructor="ines", context=COURSE, version=version)
    sitting = Sitting.objects.get(pk=item["custom"]["viva_sitting"])
    WebhookEndpoint.objects.create(
        name="chaos receiver", url=receiver_url, events=["exam.completed", "marks.locked"]
    )
    exams = [launched(lms, sitting, item["custom"], user) for user in users]
    token = api_token_issue(user=author, name="chaos run").key
    return Setup(
        exams=exams,
        lms=lms,
        sitting=sitting,
        users={e.key: user for e, user in zip(exams, users, strict=True)},
        token=token,
    )


def launched(lms: Any, sitting: Any, custom: dict[str, Any], user: str) -> Exam:
    """``user`` launches the exam from the course and gets to the room's door (text mode)."""
    from sessions import exam_room
    from sessions.models import ExamSession

    client = Client()
    launch = {"user": user, "context": COURSE, "link": f"link-{COURSE}", "custom": custom}
    response = lms.launch(client, **launch)
    assert response.status_code == 302, response.content[:500]
    session = ExamSession.objects.get(sitting=sitting, candidate__email=f"{user}@uni.example")
    exam_room.identity_confirm(session=session, identity=True, consent=True)
    exam_room.briefing_acknowledge(session=session)
    exam_room.mode_choose(session=session, mode="text")
    return Exam(session.pk, f"sessionid={client.cookies['sessionid'].value}")
