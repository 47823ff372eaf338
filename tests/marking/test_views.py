"""The marking pages: list, workspace, moderation forms, report, cohort, CSV; area access."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from marking.models import SessionMark, TargetDecision
from tests.factories import AuthorFactory, CandidateFactory, ProctorFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_pages_render_for_the_owner_and_hide_from_others(
    make_session: Any, author: Any, client: Any
) -> None:
    session = make_session("mixed")
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
