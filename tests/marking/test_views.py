"""The marking pages: list, workspace, moderation forms, report, cohort, CSV; area access."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from marking.models import SessionMark, TargetDecision
from proctoring.actions import action_perform
from tests.factories import AuthorFactory, CandidateFactory, ProctorFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_pages_render_for_the_owner_and_hide_from_others(
    make_session: Any, author: Any, client: Any
) -> None:
    session = make_session("mixed")
    proctor = ProctorFactory(display_name="Pat Proctor")
    action_perform(  # after marking, stored directly (the exam is over)
        session=session,
        user=proctor,
        action="flag_irregularity",
        category="candidate",
        reason="A second voice prompted the candidate.",
    )
    version = session.sitting.version_id
    urls = [
        "/marking/",
        f"/marking/sessions/{session.pk}/",
        f"/marking/sessions/{session.pk}/report/",
        f"/marking/sessions/{session.pk}/marks.csv",
        f"/marking/assessments/{version}/",
        f"/marking/assessments/{version}/marks.csv",
    ]
    client.force_login(author)
    for url in urls:
        assert client.get(url).status_code == 200, url
    page = client.get(f"/marking/sessions/{session.pk}/").content.decode()
    assert "Highlight evidence" in page and "MRK-C02" in page
    assert 'data-targets="tgt-greedy-choice"' in page
    assert "The LLM marking panel was skipped" in page
    irregular = page[page.index('id="irregularities"') :]
    for shown in (
        "Irregularities reported by proctors (1)",
        "Candidate",
        "Pat Proctor",
        f"user:{proctor.pk}",
        "A second voice prompted the candidate.",
        "after the exam ended",
        "Academic-integrity review",
        "Reported after marking",
    ):
        assert shown in irregular, shown
    assert "1 irregularity reported" in page
    report = client.get(urls[2]).content.decode()
    assert "Irregularities reported by proctors" in report
    assert "A second voice prompted the candidate." in report and "Pat Proctor" in report
    (row,) = csv.DictReader(io.StringIO(client.get(urls[3]).content.decode()))
    assert (row["irregularities"], row["irregularity_categories"]) == ("1", "candidate")
    cohort = client.get(f"/marking/assessments/{version}/").content.decode()
    assert "<svg" in cohort and "Interaction fairness" in cohort
    client.force_login(AuthorFactory())
    assert client.get(urls[1]).status_code == 404
    assert client.get(urls[4]).status_code == 404
    for user in (CandidateFactory(), ProctorFactory()):
        client.force_login(user)
        assert client.get(urls[1]).status_code == 403


def test_override_and_lock_through_the_forms(make_session: Any, author: Any, client: Any) -> None:
    session = make_session("mixed")
    client.force_login(author)
    base = f"/marking/sessions/{session.pk}"
    refused = client.post(
        f"{base}/override/",
        {"target_key": "tgt-complexity", "level": "excellent", "rationale": ""},
        follow=True,
    )
    assert "rationale" in refused.content.decode()
    client.post(
        f"{base}/override/",
        {
            "target_key": "tgt-complexity",
            "level": "excellent",
            "rationale": "Clear on the recording.",
        },
    )
    decision = TargetDecision.objects.filter(target_key="tgt-complexity").latest("number")
    assert decision.author == author and decision.level == "excellent"
    client.post(f"{base}/lock/", {"note": "Moderated."})
    mark = SessionMark.objects.get(session=session)
    assert mark.state == "locked"
    page = client.get(f"{base}/").content.decode()
    assert "Open appeal" in page and "Record override" not in page
    rows = list(csv.DictReader(io.StringIO(client.get(f"{base}/marks.csv").content.decode())))
    assert rows[0]["level:tgt-complexity"] == "excellent" and rows[0]["state"] == "locked"


def test_the_workspace_marks_turns_affected_by_a_technical_irregularity(
    version: Any, author: Any, client: Any, eager: None
) -> None:
    from tests.marking.exams import completed_session_with_report

    proctor = ProctorFactory(display_name="Sam Invigilator")
    session, _ = completed_session_with_report(
        version=version,
        candidate=CandidateFactory(),
        category="technical",
        reason="The candidate's audio dropped out.",
        actor=f"user:{proctor.pk}",
    )
    mark = SessionMark.objects.get(session=session)
    affected = mark.result_json["irregularities"][0]["affectedTurnIds"]
    client.force_login(author)
    page = client.get(f"/marking/sessions/{session.pk}/").content.decode()
    assert "Irregularities reported by proctors (1)" in page and "Sam Invigilator" in page
    assert "The candidate&#x27;s audio dropped out." in page
    assert "Dijkstra&#x27;s algorithm" in page and "Technical" in page
    for turn_id in affected:
        start = page.index(f'id="turn-{turn_id}"')
        assert "Affected by a technical irregularity" in page[start : page.index("</li>", start)]
    assert page.count("turn-irregular") == len(affected)
    assert "are affected by a technical irregularity" in page  # on the targets' evidence
    client.force_login(session.candidate)
    assert client.get(f"/marking/sessions/{session.pk}/").status_code == 403
