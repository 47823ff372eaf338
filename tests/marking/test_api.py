"""The marking REST API: authorization (401/403/404), marks, decisions, overrides, moderation,
reports and exports."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from rest_framework.test import APIClient

from marking.models import SessionMark
from tests.factories import AdminFactory, AuthorFactory, CandidateFactory, ProctorFactory

pytestmark = pytest.mark.django_db(transaction=True)


def api(user: Any = None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_who_may_see_what(make_session: Any, author: Any) -> None:
    session = make_session("mixed")
    url = f"/api/v1/marking/sessions/{session.pk}/"
    assert api().get(url).status_code == 401
    assert api(CandidateFactory()).get(url).status_code == 403
    assert api(ProctorFactory()).get(url).status_code == 403
    assert api(AuthorFactory()).get(url).status_code == 404  # not their draft
    assert api(author).get(url).status_code == 200
    assert api(AdminFactory()).get(url).status_code == 200
    collaborator = AuthorFactory()
    session.sitting.version.draft.collaborators.add(collaborator)
    assert api(collaborator).get(url).status_code == 200
    assert api(author).get("/api/v1/marking/sessions/not-a-uuid/").status_code == 404
    listing = api(AuthorFactory()).get("/api/v1/marking/sessions/").json()
    assert listing["count"] == 0
    assert api(author).get("/api/v1/marking/sessions/").json()["count"] == 1


def test_detail_has_levels_evidence_and_reasons(make_session: Any, author: Any) -> None:
    session = make_session("mixed")
    body = api(author).get(f"/api/v1/marking/sessions/{session.pk}/").json()
    assert body["state"] == "needs_review" and body["examScore"] == pytest.approx(0.566667)
    target = next(t for t in body["targets"] if t["key"] == "tgt-complexity")
    assert target["level"] == "satisfactory"
    assert {r["ruleId"] for r in target["rules"]} >= {"MRK-L02", "MRK-C02", "MRK-C03"}
    assert target["turnIds"] and target["signals"][0]["sttMin"] == 0.56
    assert target["learningOutcomes"] == [
        {"id": "LO2", "text": target["learningOutcomes"][0]["text"]}
    ]
    assert body["panel"]["status"] == "skipped"


def test_override_lock_appeal_over_the_api(make_session: Any, author: Any) -> None:
    session = make_session("mixed")
    base = f"/api/v1/marking/sessions/{session.pk}"
    client = api(author)
    missing = client.post(
        f"{base}/overrides/", {"targetKey": "tgt-complexity", "level": "excellent"}, format="json"
    )
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid"
    created = client.post(
        f"{base}/overrides/",
        {
            "targetKey": "tgt-complexity",
            "level": "excellent",
            "rationale": "Clear on the recording.",
        },
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["author"]["username"] == author.username
    unknown = client.post(
        f"{base}/overrides/",
        {"targetKey": "nope", "level": "partial", "rationale": "whatever it is"},
        format="json",
    )
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "unknown_target"
    history = client.get(f"{base}/decisions/").json()
    complexity = [d for d in history if d["targetKey"] == "tgt-complexity"]
    assert [(d["number"], d["level"], d["source"]) for d in complexity] == [
        (1, "satisfactory", "marker"),
        (2, "excellent", "override"),
    ]
    assert complexity[1]["supersedes"] == complexity[0]["id"]
    assert client.post(f"{base}/lock/", {"note": "done"}, format="json").status_code == 200
    locked = client.post(
        f"{base}/overrides/",
        {"targetKey": "tgt-complexity", "level": "partial", "rationale": "Changed my mind."},
        format="json",
    )
    assert locked.status_code == 409 and locked.json()["error"]["code"] == "locked"
    assert client.post(f"{base}/lock/", {}, format="json").status_code == 409
    appeal = client.post(f"{base}/appeals/", {"reason": "The candidate appeals."}, format="json")
    assert appeal.status_code == 201 and appeal.json()["state"] == "appealed"


def test_second_marking_over_the_api(make_session: Any, author: Any) -> None:
    session = make_session("strong")
    base = f"/api/v1/marking/sessions/{session.pk}"
    assert (
        api(author)
        .post(f"{base}/second-marking/", {"required": True}, format="json")
        .json()["secondMarkingRequired"]
    )
    other = AuthorFactory()
    session.sitting.version.draft.collaborators.add(other)
    body = api(other).post(
        f"{base}/second-marks/",
        {"marks": [{"targetKey": "tgt-greedy-choice", "level": "excellent"}]},
        format="json",
    )
    assert body.status_code == 201 and "tgt-complexity" in body.json()["missing"]
    assert api(author).post(f"{base}/lock/", {}, format="json").json()["error"]["code"] == (
        "second_marking_incomplete"
    )


def test_reports_exports_cohort_and_scheme(make_session: Any, author: Any) -> None:
    first = make_session("strong")
    make_session("weak")
    client = api(author)
    report = client.get(f"/api/v1/marking/sessions/{first.pk}/report/").json()
    assert report["reproducible"] is True
    assert report["targets"][0]["excerpts"][0]["text"].startswith("It keeps a tentative distance")
    assert report["learningOutcomes"][0]["score"] == 1.0
    response = client.get(f"/api/v1/marking/sessions/{first.pk}/export.csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 1 and rows[0]["exam_score_percent"] == "100.0"
    assert rows[0]["level:tgt-greedy-choice"] == "excellent"
    version = first.sitting.version_id
    cohort = client.get(f"/api/v1/marking/versions/{version}/cohort/").json()
    assert cohort["n"] == 2 and sum(cohort["histogram"]) == 2
    assert cohort["fairness"]["nodes"][0]["nodeId"] == "q-dijkstra"
    gradebook = client.get(f"/api/v1/marking/versions/{version}/export.csv").content.decode()
    assert len(list(csv.reader(io.StringIO(gradebook)))) == 3
    scheme = client.get(f"/api/v1/marking/versions/{version}/scheme/").json()
    assert scheme["config"]["compilerVersion"] == scheme["compilerVersion"] == "ioa-marking/1"
    assert (
        api(AuthorFactory()).get(f"/api/v1/marking/versions/{version}/cohort/").status_code == 404
    )
    assert SessionMark.objects.count() == 2


def test_irregularities_in_the_detail_and_the_report(make_session: Any, author: Any) -> None:
    from proctoring.actions import action_perform

    session = make_session("strong")
    proctor = ProctorFactory()
    action_perform(
        session=session,
        user=proctor,
        action="flag_irregularity",
        category="staff",
        reason="The invigilator answered a question.",
    )
    base = f"/api/v1/marking/sessions/{session.pk}"
    body = api(author).get(f"{base}/").json()
    assert body["state"] == "needs_review" and body["reviewFlags"] == 1
    (item,) = body["irregularities"]
    assert item["category"] == "staff" and item["route"] == "review_note"
    assert item["actor"] == f"user:{proctor.pk}"
    assert item["proctor"] == {"username": proctor.username, "name": proctor.name}
    assert item["reason"] == "The invigilator answered a question."
    assert item["afterCompletion"] and item["afterMarking"] and not item["afterLock"]
    assert item["reportedAt"].endswith("Z") and item["recordedAt"]
    assert all(item["seq"] in t["irregularitySeqs"] for t in body["targets"])
    assert any(f["code"] == "irregularity" for f in body["flags"])
    report = api(author).get(f"{base}/report/").json()
    assert [i["eventId"] for i in report["irregularities"]] == [item["eventId"]]
    assert report["reproducible"] is True
    rows = list(csv.reader(io.StringIO(api(author).get(f"{base}/export.csv").content.decode())))
    header, row = rows
    assert row[header.index("irregularities")] == "1"
    assert row[header.index("irregularity_categories")] == "staff"
    assert api(session.candidate).get(f"{base}/").status_code == 403
