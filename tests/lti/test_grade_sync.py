"""Grade sync as an LMS expects (issue #32), against two independent LTI platforms: nothing is
scored before the deliberate release (``PendingManual`` without a score at lock, the score and
the released feedback at release), each student's grade goes to their own course's line item
when one exam is placed in two courses, a refused post is tried again with back-off, and
``manage.py lti_resync_grades`` and the admin action send again."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from lti.models import GradePassback
from marking import services as marking
from marking.models import SessionMark
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting
from tests.factories import AdminFactory
from tests.lti.lms import Lms, lms_pair, platform_bases, version
from tests.marking.exams import completed_session
from tests.support.outbox import broker_down

__all__ = ["lms_pair", "platform_bases", "version"]

pytestmark = pytest.mark.django_db(transaction=True)


def place(lms: Lms, client: Client, version: PublishedVersion) -> tuple[Sitting, dict[str, Any]]:
    item = lms.place(client, instructor="ines", context="course-1", version=version)
    return Sitting.objects.get(pk=item["custom"]["viva_sitting"]), item["custom"]


def examined(
    lms: Lms, client: Client, sitting: Sitting, custom: dict[str, Any], *, user: str, context: str
) -> SessionMark:
    """``user`` opens the exam from ``context`` and completes it (a scripted, marked exam in
    place of the session their launch made); their next launch finds it."""
    launch = {"user": user, "context": context, "link": f"link-{context}", "custom": custom}
    assert lms.launch(client, **launch).status_code == 302
    own = ExamSession.objects.get(sitting=sitting, candidate__email=f"{user}@uni.example")
    learner = own.candidate
    own.delete()
    session = completed_session(version=sitting.version, candidate=learner, sitting=sitting)
    client.logout()
    assert lms.launch(client, **launch)["Location"] == f"/exam/{session.pk}/"
    client.logout()
    return SessionMark.objects.get(session=session)


def test_nothing_is_scored_before_release_and_the_release_posts_score_and_feedback(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    lms, _ = lms_pair
    sitting, custom = place(lms, client, version)
    mark = examined(lms, client, sitting, custom, user="alice", context="course-1")
    marking.marks_lock(mark=mark, user=version.draft.owner)
    (pending,) = lms.scores(sitting, user="alice")
    assert pending["gradingProgress"] == "PendingManual"
    assert pending["activityProgress"] == "Completed"
    assert "scoreGiven" not in pending and "comment" not in pending

    marking.result_release(mark=mark, user=version.draft.owner)
    mark.refresh_from_db()
    _, released = lms.scores(sitting, user="alice")
    assert released["gradingProgress"] == "FullyGraded"
    assert released["scoreGiven"] == pytest.approx(round(mark.final_score * 100, 2))
    assert released["comment"].startswith("Result released. Score: ")
    assert f"{mark.final_score * 100:.1f}%" in released["comment"]
    assert list(GradePassback.objects.values_list("kind", "status")) == [
        ("pending", "posted"),
        ("score", "posted"),
    ]


def test_a_lock_and_release_while_the_broker_is_down_reach_the_gradebook_once_relayed(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    """Issue #33: the grade posts are outbox messages written with the lock and the release;
    with Redis down at both moments the gradebook hears nothing yet, and the relay brings it
    both, once."""
    lms, _ = lms_pair
    sitting, custom = place(lms, client, version)
    mark = examined(lms, client, sitting, custom, user="alice", context="course-1")
    with broker_down():
        marking.marks_lock(mark=mark, user=version.draft.owner)
        marking.result_release(mark=mark, user=version.draft.owner)
    assert lms.scores(sitting, user="alice") == []
    assert not GradePassback.objects.exists()

    call_command("relay_outbox")
    call_command("relay_outbox")  # nothing due the second time: each message posts once
    mark.refresh_from_db()
    # Each post sends what the gradebook should show when it runs: both run after the release,
    # so both carry the released score (the lock's PendingManual would only step back).
    scores = lms.scores(sitting, user="alice")
    assert [s["gradingProgress"] for s in scores] == ["FullyGraded", "FullyGraded"]
    assert scores[-1]["scoreGiven"] == pytest.approx(round(mark.final_score * 100, 2))
    assert list(GradePassback.objects.values_list("kind", "status")) == [
        ("score", "posted"),
        ("score", "posted"),
    ]


def test_one_exam_in_two_courses_posts_each_grade_to_its_own_course(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    lms, _ = lms_pair
    sitting, custom = place(lms, client, version)
    # Ines places the same exam in her other course (the picker lists the exams she runs).
    item = lms.place(client, instructor="ines", context="course-2", sitting=sitting)
    assert item["custom"] == custom
    alice = examined(lms, client, sitting, custom, user="alice", context="course-1")
    bob = examined(lms, client, sitting, custom, user="bob", context="course-2")
    for mark in (bob, alice):
        marking.marks_lock(mark=mark, user=version.draft.owner)
        marking.result_release(mark=mark, user=version.draft.owner)
    released = [s for s in lms.scores(sitting) if s["gradingProgress"] == "FullyGraded"]
    assert sorted((s["context"], s["userId"]) for s in released) == [
        ("course-1", "alice"),
        ("course-2", "bob"),
    ]


@pytest.mark.parametrize("status", [503, 429, 400])
def test_a_refused_post_is_tried_again_and_then_lands(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None, status: int
) -> None:
    _, lms = lms_pair  # the second LMS, for once
    sitting, custom = place(lms, client, version)
    mark = examined(lms, client, sitting, custom, user="alice", context="course-1")
    marking.marks_lock(mark=mark, user=version.draft.owner)
    lms.fail_scores(1, status)
    marking.result_release(mark=mark, user=version.draft.owner)
    attempts = list(
        GradePassback.objects.filter(kind="score").values_list("attempt", "status", "http_status")
    )
    assert attempts == [(1, "failed", status), (2, "posted", None)]
    refused = GradePassback.objects.get(kind="score", attempt=1)
    assert refused.next_attempt_at is not None and refused.next_attempt_at > refused.posted_at
    assert [s["gradingProgress"] for s in lms.scores(sitting, user="alice")] == [
        "PendingManual",
        "FullyGraded",
    ]


def test_a_grade_sent_again_is_the_same_score_stamped_when_the_tool_changed_it(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    """A grade post can reach the platform and be sent again: the relay's handler runs again
    when its worker dies between the post and the record of it (the outbox is at least once),
    and a re-sync sends on purpose. What is sent again must be the same score, not a newer one:
    its ``timestamp`` is when the tool changed the grade (the lock; the release), never the
    moment of sending, so a platform that orders scores by timestamp (AGS) keeps one result and
    a later fact still wins."""
    from lti.receivers import post_grade_message
    from marking.models import ResultRelease

    lms, _ = lms_pair
    sitting, custom = place(lms, client, version)
    mark = examined(lms, client, sitting, custom, user="alice", context="course-1")
    marking.marks_lock(mark=mark, user=version.draft.owner)
    mark.refresh_from_db()
    post_grade_message({"sessionId": str(mark.session_id)})  # the relay's handler, run again
    first, again = lms.scores(sitting, user="alice")
    assert again == first
    assert datetime.fromisoformat(first["timestamp"]) == mark.locked_at

    marking.result_release(mark=mark, user=version.draft.owner)
    call_command("lti_resync_grades", "--session", str(mark.session_id))
    released, resent = lms.scores(sitting, user="alice")[2:]
    assert resent == released and released["gradingProgress"] == "FullyGraded"
    release = ResultRelease.objects.get(mark=mark)
    assert datetime.fromisoformat(released["timestamp"]) == release.released_at
    assert release.released_at > mark.locked_at


def test_resync_command_and_admin_action_send_again_after_the_last_attempt(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    from lti.grades import MAX_ATTEMPTS

    lms, _ = lms_pair
    sitting, custom = place(lms, client, version)
    mark = examined(lms, client, sitting, custom, user="alice", context="course-1")
    lms.fail_scores(2 * MAX_ATTEMPTS)
    marking.marks_lock(mark=mark, user=version.draft.owner)  # pending: refused each time
    marking.result_release(mark=mark, user=version.draft.owner)  # the score: refused too
    assert lms.scores(sitting, user="alice") == []
    assert GradePassback.objects.filter(status="failed").count() == 2 * MAX_ATTEMPTS
    assert not GradePassback.objects.filter(status="posted").exists()

    call_command("lti_resync_grades", "--failed")
    assert lms.scores(sitting, user="alice")[-1]["gradingProgress"] == "FullyGraded"

    lms.fail_scores(MAX_ATTEMPTS)
    call_command("lti_resync_grades", "--sitting", str(sitting.pk))
    last = GradePassback.objects.order_by("-id").first()
    assert last is not None and last.status == "failed" and last.next_attempt_at is None
    client.force_login(AdminFactory())
    for page in ("placement", "candidatelink", "sittinglink", "gradepassback"):
        assert client.get(f"/admin/lti/{page}/").status_code == 200, page
    assert "http_status" in client.get("/admin/lti/gradepassback/?status=failed").content.decode()
    answer = client.post(
        "/admin/lti/gradepassback/", {"action": "resync", "_selected_action": [last.pk]}
    )
    assert answer.status_code == 302
    assert GradePassback.objects.order_by("-id").first().status == "posted"  # type: ignore[union-attr]
    assert len([s for s in lms.scores(sitting, user="alice") if "scoreGiven" in s]) == 2


def test_the_gradebooks_view_submission_opens_the_candidates_result(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, eager: None
) -> None:
    lms, _ = lms_pair
    sitting, custom = place(lms, client, version)
    mark = examined(lms, client, sitting, custom, user="alice", context="course-1")
    marking.marks_lock(mark=mark, user=version.draft.owner)
    marking.result_release(mark=mark, user=version.draft.owner)
    lineitem = GradePassback.objects.filter(status="posted").first().link.ags_lineitem  # type: ignore[union-attr]
    review = {"link": "link-course-1", "review_for": "alice", "lineitem": lineitem}
    own = lms.launch(client, user="alice", **review)
    assert own.status_code == 302, own.content.decode()
    assert own["Location"] == f"/exam/{mark.session_id}/result/"
    assert "Your score: " in client.get(own["Location"]).content.decode()
    client.logout()
    staff = lms.launch(client, user="ines", role="Instructor", **review)
    assert staff["Location"] == f"/proctor/sessions/{mark.session_id}/"
    client.logout()
    other = lms.launch(client, user="bob", **review)
    assert other.status_code == 403 and "only review your own" in other.content.decode()
