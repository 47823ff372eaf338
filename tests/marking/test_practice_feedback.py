"""Practice sittings (issue #35, docs/spec/practice-sittings.md): each attempt gets the
deterministic marker's level per target at once, in the exam's language and without rubric
text, and nothing of a practice attempt reaches marks, marking lists, exports, cohort
statistics, moderation, release, the LMS or webhooks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marking import selectors, services
from marking.models import MarkingRequest, PracticeFeedback, SessionMark
from publishing.services import version_publish
from sessions import outbox, practice
from sessions.models import ExamSession, OutboxMessage, Sitting
from tests.factories import AdminFactory, CandidateFactory, DraftPackageFactory, example_document
from tests.marking.exams import complete, completed_session
from tests.support.outbox import held_relay

pytestmark = pytest.mark.django_db(transaction=True)


def practice_sitting(version: Any) -> Sitting:
    return Sitting.objects.create(
        version=version, title="Practice CS201", created_by=version.published_by, is_practice=True
    )


def first_attempt(sitting: Sitting, candidate: Any = None) -> ExamSession:
    return ExamSession.objects.create(sitting=sitting, candidate=candidate or CandidateFactory())


def result_url(session: ExamSession) -> str:
    return f"/exam/{session.pk}/result/"


def rubric_words(version: Any) -> list[str]:
    """Descriptors, the targets' descriptions and the marker's rule ids: never shown."""
    scheme = services.scheme_get_or_create(version)
    config = selectors.scheme_config(scheme)
    words = [d.description for t in config.targets() for d in t.descriptors if d.description]
    words = [w for w in words if len(w) > 20]
    assert len(words) >= 3
    return [*words, "MRK-", "Dijkstra from the start"]


def test_two_attempts_by_one_candidate_each_get_feedback_at_once(
    version: Any, eager: None, client: Client
) -> None:
    sitting = practice_sitting(version)
    first = complete(first_attempt(sitting), profile="weak")
    client.force_login(first.candidate)
    done = client.get(f"/exam/{first.pk}/done/")
    assert done.status_code == 302 and done["Location"] == result_url(first)
    page = client.get(result_url(first)).content.decode()
    assert "Practice feedback" in page and "attempt 1" in page
    assert 'id="practise-again"' in page
    labels = [t["label"] for t in PracticeFeedback.objects.get(session=first).targets]
    assert len(labels) >= 4 and all(label in page for label in labels)

    again = client.post(f"/exam/{first.pk}/practise-again/")
    second = ExamSession.objects.get(follows=first)
    assert again.status_code == 302 and again["Location"] == f"/exam/{second.pk}/identity/"
    assert (second.attempt, second.sitting_id, second.candidate_id) == (
        2,
        sitting.pk,
        first.candidate_id,
    )
    complete(second, profile="strong")
    page = client.get(result_url(second)).content.decode()
    assert "attempt 2" in page and "Your attempts" in page
    assert f'href="{result_url(first)}"' in page  # the earlier attempt stays, with its feedback
    levels = {
        s.attempt: [t["level"] for t in PracticeFeedback.objects.get(session=s).targets]
        for s in (first, second)
    }
    assert levels[1] != levels[2]  # each attempt's own feedback
    assert "Excellent" in page and "Absent" in page


def test_a_double_click_on_practise_again_makes_one_attempt(
    version: Any, eager: None, client: Client
) -> None:
    first = complete(first_attempt(practice_sitting(version)))
    client.force_login(first.candidate)
    one = client.post(f"/exam/{first.pk}/practise-again/")
    two = client.post(f"/exam/{first.pk}/practise-again/")
    assert one["Location"] == two["Location"]
    assert ExamSession.objects.filter(sitting=first.sitting).count() == 2
    assert practice.practice_again(session=first).attempt == 2


def test_feedback_shows_no_rubric_text_evidence_or_score(
    version: Any, eager: None, client: Client
) -> None:
    first = complete(first_attempt(practice_sitting(version)), profile="strong")
    client.force_login(first.candidate)
    page = client.get(result_url(first)).content.decode()
    for words in rubric_words(version):
        assert words not in page
    assert "%" not in page.split('id="practice-feedback"')[1].split("</table>")[0]
    stored = PracticeFeedback.objects.get(session=first).targets
    assert all(set(t) == {"key", "label", "level"} for t in stored)


def test_german_feedback(author: Any, eager: None, client: Client) -> None:
    draft = DraftPackageFactory(
        owner=author, document=example_document("cs201-graph-algorithms.de")
    )
    german = version_publish(draft=draft, user=author).version
    first = complete(first_attempt(practice_sitting(german)), profile="strong")
    client.force_login(first.candidate)
    page = client.get(result_url(first)).content.decode()
    assert '<html lang="de">' in page
    assert "Gierige Auswahl des nächsten nicht abgeschlossenen Knotens" in page
    assert "Übungsrückmeldung" in page and "Ausgezeichnet" in page
    assert "Excellent" not in page and "Practice feedback" not in page


def test_the_page_records_feedback_the_outbox_has_not_delivered_yet(
    version: Any, eager: None, client: Client
) -> None:
    with held_relay():
        first = complete(first_attempt(practice_sitting(version)))
    assert not PracticeFeedback.objects.filter(session=first).exists()
    client.force_login(first.candidate)
    page = client.get(result_url(first)).content.decode()
    assert PracticeFeedback.objects.filter(session=first).count() == 1
    assert "What was assessed" in page
    outbox.relay_due()  # the message finds the feedback recorded: nothing twice
    assert PracticeFeedback.objects.filter(session=first).count() == 1
    assert not SessionMark.objects.filter(session=first).exists()


def test_a_practice_attempt_is_never_marked_nor_listed(
    version: Any, eager: None, client: Client
) -> None:
    """The marking request, the marks, the marking lists (pages and API), the session page,
    the CSV exports and the cohort statistics of the version know nothing of practice."""
    sitting = practice_sitting(version)
    first = complete(first_attempt(sitting))
    complete(practice.practice_again(session=first))
    normal = completed_session(version=version, candidate=CandidateFactory())
    assert PracticeFeedback.objects.filter(session__sitting=sitting).count() == 2
    assert not SessionMark.objects.filter(session__sitting=sitting).exists()
    assert not MarkingRequest.objects.filter(session__sitting=sitting).exists()
    assert services.session_mark(session_id=first.pk).mark is None  # by hand, too
    assert not SessionMark.objects.filter(session__sitting=sitting).exists()

    admin = AdminFactory()
    assert list(selectors.mark_list(user=admin)) == [SessionMark.objects.get(session=normal)]
    client.force_login(admin)
    for url in ("/marking/", "/api/v1/marking/sessions/", f"/marking/assessments/{version.pk}/"):
        body = client.get(url).content.decode()
        assert str(normal.pk) in body and str(first.pk) not in body, url
    csv = client.get(f"/marking/assessments/{version.pk}/marks.csv").content.decode()
    assert str(normal.pk) in csv and str(first.pk) not in csv
    assert client.get(f"/marking/sessions/{first.pk}/").status_code == 404
    assert client.get(f"/marking/sessions/{first.pk}/marks.csv").status_code == 404
    cohort = selectors.cohort_view(user=admin, version=version)
    assert [m.session_id for m in cohort["marks"]] == [normal.pk]


def test_marks_made_for_a_practice_session_stay_out_of_every_list(
    version: Any, eager: None
) -> None:
    """Defence in depth: should marks ever exist for a practice attempt (a sitting turned into
    practice after marking), the querysets every list, export, moderation action and the API
    read from leave them out."""
    normal = completed_session(version=version, candidate=CandidateFactory())
    Sitting.objects.filter(pk=normal.sitting_id).update(is_practice=True)
    admin = AdminFactory()
    assert not selectors.mark_list(user=admin).exists()
    assert not SessionMark.objects.visible_to(version.published_by).exists()
    with pytest.raises(SessionMark.DoesNotExist):
        selectors.mark_get(user=admin, session_id=normal.pk)


def test_the_sweep_finds_a_lost_practice_message_once(version: Any, eager: None) -> None:
    with held_relay():
        first = complete(first_attempt(practice_sitting(version)))
    OutboxMessage.objects.filter(key=str(first.pk)).delete()
    later = outbox.relay_due(now=timezone.now() + timedelta(minutes=3))
    assert later.swept == 1
    assert PracticeFeedback.objects.filter(session=first).count() == 1
    again = outbox.relay_due(now=timezone.now() + timedelta(minutes=4))
    assert again.swept == 0
    assert not MarkingRequest.objects.filter(session=first).exists()
