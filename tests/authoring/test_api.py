"""Draft package API: create, edit with revisions, validate, publish, versions."""

from __future__ import annotations

import pytest
from django.test import Client

from authoring.models import DraftPackage
from tests.factories import AuthorFactory, example_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def author_client() -> Client:
    client = Client()
    client.force_login(AuthorFactory())
    return client


def test_create_from_example_gets_a_fresh_package_id(author_client: Client) -> None:
    response = author_client.post(
        "/api/v1/packages/", {"example": "cs201-graph-algorithms"}, content_type="application/json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["lastReport"]["result"] == "pass"
    assert body["document"]["metadata"]["packageId"] != example_document()["metadata"]["packageId"]


def test_any_json_can_be_saved_and_its_report_says_what_is_wrong(author_client: Client) -> None:
    created = author_client.post(
        "/api/v1/packages/",
        {"document": {"nodes": "oops"}, "title": "Scratch"},
        content_type="application/json",
    ).json()
    assert created["lastReport"]["result"] == "reject"
    assert created["lastReport"]["summary"]["errors"] >= 1


def test_edit_conflict_is_409_and_keeps_the_other_edit(author_client: Client) -> None:
    draft = author_client.post(
        "/api/v1/packages/", {"example": "cs201-graph-algorithms"}, content_type="application/json"
    ).json()
    url = f"/api/v1/packages/{draft['id']}/"
    doc = draft["document"]
    doc["metadata"]["version"] = "2.0.0"
    ok = author_client.put(url, {"document": doc, "revision": 1}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["revision"] == 2
    stale = author_client.put(url, {"document": {}, "revision": 1}, content_type="application/json")
    assert stale.status_code == 409
    assert stale.json()["error"]["details"] == {"currentRevision": 2}
    assert DraftPackage.objects.get(pk=draft["id"]).document["metadata"]["version"] == "2.0.0"


def test_validate_a_document_being_edited_without_saving(author_client: Client) -> None:
    draft = author_client.post(
        "/api/v1/packages/", {"example": "cs201-graph-algorithms"}, content_type="application/json"
    ).json()
    doc = draft["document"]
    doc["initialNodeId"] = "nowhere"
    report = author_client.post(
        f"/api/v1/packages/{draft['id']}/validate/",
        {"document": doc},
        content_type="application/json",
    ).json()
    assert report["result"] == "reject"
    assert DraftPackage.objects.get(pk=draft["id"]).document["initialNodeId"] == "warmup"


def test_publish_then_list_and_read_versions(author_client: Client) -> None:
    draft = author_client.post(
        "/api/v1/packages/", {"example": "cs201-graph-algorithms"}, content_type="application/json"
    ).json()
    published = author_client.post(
        f"/api/v1/packages/{draft['id']}/publish/", {"revision": 1}, content_type="application/json"
    )
    assert published.status_code == 201
    version = published.json()
    assert version["number"] == 1
    unchanged = author_client.post(
        f"/api/v1/packages/{draft['id']}/publish/", {}, content_type="application/json"
    )
    assert unchanged.status_code == 200 and unchanged.json()["id"] == version["id"]
    listing = author_client.get(f"/api/v1/versions/?package={draft['id']}").json()
    assert [v["id"] for v in listing["results"]] == [version["id"]]
    detail = author_client.get(f"/api/v1/versions/{version['id']}/").json()
    assert detail["document"]["initialNodeId"] == "warmup"
    assert author_client.get(f"/api/v1/versions/{version['id']}/report/").json()["result"] == "pass"
    compiled = author_client.get(f"/api/v1/versions/{version['id']}/compiled/").json()
    assert compiled["adapterVersion"] == version["adapterVersion"]


def test_publish_of_a_broken_draft_is_422_with_the_report(author_client: Client) -> None:
    doc = example_document()
    doc["initialNodeId"] = "nowhere"
    draft = author_client.post(
        "/api/v1/packages/", {"document": doc}, content_type="application/json"
    ).json()
    response = author_client.post(
        f"/api/v1/packages/{draft['id']}/publish/", {}, content_type="application/json"
    )
    assert response.status_code == 422
    report = response.json()["error"]["details"]["report"]
    assert "PKG-002" in {e["ruleId"] for e in report["errors"]}


def test_a_draft_with_versions_cannot_be_deleted(author_client: Client) -> None:
    draft = author_client.post(
        "/api/v1/packages/", {"example": "cs201-graph-algorithms"}, content_type="application/json"
    ).json()
    author_client.post(
        f"/api/v1/packages/{draft['id']}/publish/", {}, content_type="application/json"
    )
    response = author_client.delete(f"/api/v1/packages/{draft['id']}/")
    assert response.status_code == 409
    assert DraftPackage.objects.filter(pk=draft["id"]).exists()
