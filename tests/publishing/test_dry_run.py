"""The dry run around the core: stored at publication, the command, the API, the publish page."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from ioa.dry_run import dry_run
from ioa.schema import load_package
from publishing import services
from publishing.models import PublishedVersion
from publishing.services import version_publish
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cs201-graph-algorithms.json"


@pytest.mark.django_db
def test_publication_stores_the_dry_run_with_the_version() -> None:
    draft = DraftPackageFactory()
    version = version_publish(draft=draft, user=draft.owner).version
    stored = PublishedVersion.objects.get(pk=version.pk).dry_run_report
    assert stored == dry_run(load_package(draft.document))
    assert stored["runCount"] == 14 and stored["neverFired"] == ["e-q1-pool-turns"]


def test_the_command_prints_the_report_as_text_and_json() -> None:
    out = StringIO()
    call_command("dry_run", str(EXAMPLE), stdout=out)
    text = out.getvalue()
    assert "14 simulated sessions" in text
    assert "Never fired: e-q1-pool-turns" in text
    assert "Pool pool-scenario drawn: scn-delivery-routes 7, scn-network-latency 7" in text
    out = StringIO()
    call_command("dry_run", str(EXAMPLE), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["neverReached"] == [
        "end-timeout",
        "end-terminated",
        "end-technical",
    ]


def test_the_command_refuses_an_invalid_package_and_an_unreadable_file(tmp_path: Path) -> None:
    document = example_document()
    document["initialNodeId"] = "nowhere"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    err = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("dry_run", str(bad), stderr=err)
    assert exit_.value.code == 1 and "PKG-002" in err.getvalue()
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SystemExit) as exit_:
        call_command("dry_run", str(tmp_path / "broken.json"), stderr=StringIO())
    assert exit_.value.code == 2


@pytest.mark.django_db
def test_the_api_dry_runs_a_draft_or_an_edited_document_and_reads_a_version() -> None:
    draft = DraftPackageFactory()
    client = Client()
    client.force_login(draft.owner)
    url = f"/api/v1/packages/{draft.id}/dry-run/"
    response = client.post(url, {}, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["runCount"] == 14
    edited = example_document()
    edited["questionPools"] = []
    edited["nodes"][1]["transitions"] = [
        {"id": "e-direct", "targetNodeId": "scn-delivery-routes", "condition": {"type": "always"}}
    ]
    edited["nodes"] = [n for n in edited["nodes"] if n["nodeId"] != "scn-network-latency"]
    response = client.post(url, {"document": edited}, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["runCount"] == 7
    assert "scn-network-latency" not in {n["nodeId"] for n in response.json()["nodes"]}
    edited["initialNodeId"] = "nowhere"
    response = client.post(url, {"document": edited}, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_package"
    version = version_publish(draft=draft, user=draft.owner).version
    stored = client.get(f"/api/v1/versions/{version.id}/dry-run/")
    assert stored.status_code == 200 and stored.json()["runCount"] == 14


@pytest.mark.django_db
def test_other_peoples_drafts_and_versions_are_not_found() -> None:
    draft = DraftPackageFactory()
    version = version_publish(draft=draft, user=draft.owner).version
    client = Client()
    client.force_login(AuthorFactory())
    assert client.post(f"/api/v1/packages/{draft.id}/dry-run/").status_code == 404
    assert client.get(f"/api/v1/versions/{version.id}/dry-run/").status_code == 404
    assert client.get(f"/studio/{draft.id}/publish/").status_code == 404


@pytest.mark.django_db
def test_the_publish_page_shows_the_dry_run_and_publishes_the_reviewed_revision() -> None:
    draft = DraftPackageFactory()
    client = Client()
    client.force_login(draft.owner)
    page = client.get(f"/studio/{draft.id}/publish/").content.decode()
    assert "Dry run: 14 simulated candidates" in page
    assert "e-q1-pool-turns" in page and 'id="dry-run-nodes"' in page
    response = client.post(f"/studio/{draft.id}/publish/", {"revision": draft.revision})
    assert response.status_code == 302
    assert PublishedVersion.objects.get(draft=draft).number == 1
    versions = client.get(response.url).content.decode()
    assert "Published as version 1." in versions and "Dry run stored with version 1" in versions


@pytest.mark.django_db
def test_the_publish_page_refuses_a_stale_revision_and_shows_validation_errors() -> None:
    document = example_document()
    document["initialNodeId"] = "nowhere"
    draft = DraftPackageFactory(document=document)
    client = Client()
    client.force_login(draft.owner)
    page = client.get(f"/studio/{draft.id}/publish/").content.decode()
    assert "does not pass validation" in page and "PKG-002" in page
    assert 'id="publish-confirm"' not in page
    valid = DraftPackageFactory(owner=draft.owner)
    response = client.post(f"/studio/{valid.id}/publish/", {"revision": valid.revision + 5})
    assert response.status_code == 200
    assert "review again" in response.content.decode()
    assert not PublishedVersion.objects.filter(draft=valid).exists()


@pytest.mark.django_db
def test_a_failing_dry_run_never_blocks_publishing_and_is_stored_as_a_failure(monkeypatch) -> None:
    def broken(package):
        raise RuntimeError("simulator exploded")

    monkeypatch.setattr(services, "dry_run", broken)
    draft = DraftPackageFactory()
    version = version_publish(draft=draft, user=draft.owner).version
    assert version.dry_run_report == {
        "reportVersion": 1,
        "error": "RuntimeError: simulator exploded",
    }
    client = Client()
    client.force_login(draft.owner)
    page = client.get(f"/studio/{draft.id}/versions/").content.decode()
    assert "Dry run failed" in page and "simulator exploded" in page
