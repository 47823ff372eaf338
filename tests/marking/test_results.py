"""Results released to candidates (marking.services.result_release, the result page, the
candidate's appeal): nothing is shown before a deliberate release of locked marks; the release
is an event and an audit entry; the page shows what the author allows and nothing of the rubric;
an appeal lodged there reaches the marking workspace and hides the result until it is released
again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from marking import selectors, services
from marking.models import MarkingAuditEntry, ResultRelease, SessionMark
from marking.services import MarkingRefused
from publishing.services import version_publish
from sessions.models import SessionEvent
from tests.factories import (
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)
from tests.marking.exams import completed_session

pytestmark = pytest.mark.django_db(transaction=True)


def result_url(session: Any) -> str:
    return f"/exam/{session.pk}/result/"


def version_with_feedback(author: Any, feedback: str | None) -> Any:
    document = example_document()
    if feedback is not None:
        document["metadata"].setdefault("extensions", {})["results"] = {
            "candidateFeedback": feedback
        }
    draft = DraftPackageFactory(owner=author, document=document)
    return version_publish(draft=draft, user=author).version


@pytest.fixture
def marked(author: Any, eager: None) -> Callable[..., Any]:
    def make(feedback: str | None = None) -> Any:
        version = version_with_feedback(author, feedback)
        return completed_session(version=version, candidate=CandidateFactory(), profile="mixed")

    return make


def lock(session: Any, author: Any, note: str = "") -> SessionMark:
    mark = SessionMark.objects.get(session=session)
    return services.marks_lock(mark=mark, user=author, note=note)


def rubric_words(session: Any) -> list[str]:
    """Texts the candidate must never see: descriptors and the marker's rule ids."""
    mark = SessionMark.objects.get(session=session)
    config = selectors.scheme_config(mark.scheme)
    words = [d.description for t in config.targets() for d in t.descriptors if d.description]
    words = [w for w in words if len(w) > 20]
    assert len(words) >= 3  # the example package has descriptors to leak
    return [*words, "MRK-"]


def test_nothing_is_shown_until_locked_marks_are_released(
    marked: Callable[..., Any], author: Any, client: Client
) -> None:
    session = marked()
    client.force_login(session.candidate)
    page = client.get(result_url(session))
    assert page.status_code == 200
    assert "has not been released yet" in page.content.decode()
    assert "Your score" not in page.content.decode()
    mark = SessionMark.objects.get(session=session)
    # Release is refused before the lock; locking alone does not show anything.
    with pytest.raises(MarkingRefused) as refused:
        services.result_release(mark=mark, user=author)
    assert refused.value.code == "not_locked"
    lock(session, author)
    assert "has not been released yet" in client.get(result_url(session)).content.decode()
    assert not ResultRelease.objects.exists()


def test_release_is_an_event_and_an_audit_entry_and_shows_the_score(
    marked: Callable[..., Any], author: Any, client: Client
) -> None:
    session = marked()
    mark = lock(session, author)
    staff = Client()
    staff.force_login(author)
    workspace = staff.get(f"/marking/sessions/{session.pk}/").content.decode()
    assert "Release the result to the candidate" in workspace
    assert staff.post(f"/marking/sessions/{session.pk}/release/").status_code == 302
    release = ResultRelease.objects.get(mark=mark)
    assert (release.cycle, release.released_by, release.feedback) == (1, author, "score")
    event = SessionEvent.objects.get(session=session, type="result_released")
    assert event.event_id == release.event_id
    assert event.payload["actor"] == str(author.pk) and event.payload["cycle"] == 1
    assert event.payload["finalScore"] == pytest.approx(mark.final_score)
    assert MarkingAuditEntry.objects.filter(
        mark=mark, action=MarkingAuditEntry.Action.RESULT_RELEASED, actor=author
    ).exists()
    # Releasing again changes nothing (idempotent per cycle).
    again = services.result_release(mark=mark, user=author)
    assert again.pk == release.pk
    assert SessionEvent.objects.filter(session=session, type="result_released").count() == 1
    client.force_login(session.candidate)
    page = client.get(result_url(session)).content.decode()
    assert f"Your score: {mark.final_score * 100:.1f}%" in page
    assert "Lodge the appeal" in page
    for secret in rubric_words(session):
        assert secret not in page, secret
    # The default feedback shows no per-target levels.
    assert "the level you reached" not in page


def test_the_author_decides_the_feedback(
    marked: Callable[..., Any], author: Any, client: Client
) -> None:
    levels = marked("levels")
    mark = lock(levels, author)
    services.result_release(mark=mark, user=author)
    client.force_login(levels.candidate)
    page = client.get(result_url(levels)).content.decode()
    assert "the level you reached" in page and "Learning outcomes" in page
    level_titles = {"Excellent", "Satisfactory", "Partial", "Absent"}
    assert any(f"<td>{title}</td>" in page for title in level_titles)
    for target in mark.result_json["targets"]:
        assert target["label"] in page
    for secret in rubric_words(levels):
        assert secret not in page, secret

    hidden = marked("none")
    mark = lock(hidden, author)
    services.result_release(mark=mark, user=author)
    client.force_login(hidden.candidate)
    page = client.get(result_url(hidden)).content.decode()
    assert "Your score" not in page and "Lodge the appeal" in page

    unknown = marked("everything-please")  # an unknown value shows the least
    mark = lock(unknown, author)
    assert services.result_release(mark=mark, user=author).feedback == "none"


def test_candidate_appeal_reaches_the_workspace_and_hides_the_result_until_released_again(
    marked: Callable[..., Any], author: Any, client: Client
) -> None:
    session = marked()
    mark = lock(session, author)
    services.result_release(mark=mark, user=author)
    client.force_login(session.candidate)
    short = client.post(result_url(session), {"reason": "no"})
    assert short.status_code == 400 and "at least 5 characters" in short.content.decode()
    response = client.post(
        result_url(session), {"reason": "The examiner cut me off during question 2."}
    )
    assert response.status_code == 302
    mark.refresh_from_db()
    assert mark.state == SessionMark.State.APPEALED and mark.cycle == 2
    appeal = mark.appeals.get()
    assert appeal.opened_by == session.candidate
    page = client.get(result_url(session)).content.decode()
    assert "Your appeal is being considered" in page
    assert "Your score" not in page and "Lodge the appeal" not in page
    # A second appeal while the first is open is refused.
    refused = client.post(result_url(session), {"reason": "And another thing entirely."})
    assert refused.status_code == 400 and mark.appeals.count() == 1

    staff = Client()
    staff.force_login(author)
    workspace = staff.get(f"/marking/sessions/{session.pk}/").content.decode()
    assert "The examiner cut me off during question 2." in workspace
    assert "(the candidate, from the result page)" in workspace

    # Re-locked with the appeal's outcome: still hidden until released for cycle 2.
    lock(session, author, note="Reviewed the recording; marks stand.")
    page = client.get(result_url(session)).content.decode()
    assert "has not been released yet" in page and "marks stand" in page
    services.result_release(mark=mark, user=author)
    page = client.get(result_url(session)).content.decode()
    assert "Your score" in page and "Reviewed the recording; marks stand." in page
    assert list(ResultRelease.objects.filter(mark=mark).values_list("cycle", flat=True)) == [1, 2]


def test_who_may_release_and_see(marked: Callable[..., Any], author: Any, client: Client) -> None:
    session = marked()
    mark = lock(session, author)
    url = f"/api/v1/marking/sessions/{session.pk}/release/"
    for user, code in (
        (session.candidate, 403),
        (ProctorFactory(), 403),
        (AuthorFactory(), 404),
    ):
        client.force_login(user)
        assert client.post(url).status_code == code
    assert not ResultRelease.objects.exists()
    client.force_login(author)
    first = client.post(url)
    assert first.status_code == 201 and first.json()["cycle"] == 1
    assert client.post(url).status_code == 200
    # Another candidate neither sees nor appeals this result.
    stranger = CandidateFactory()
    client.force_login(stranger)
    assert client.get(result_url(session)).status_code == 404
    assert client.post(result_url(session), {"reason": "Not my exam at all"}).status_code == 404
    with pytest.raises(MarkingRefused):
        services.appeal_open_by_candidate(
            mark=mark, candidate=stranger, reason="Not my exam at all"
        )
    assert not mark.appeals.exists()
