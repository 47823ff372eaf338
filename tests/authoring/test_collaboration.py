"""Working together: co-authors from the studio, import and export as a file, empty drafts."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from authoring.models import DraftPackage
from authoring.services import draft_save
from publishing.services import version_publish
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_owner_adds_and_removes_a_co_author_who_then_can_and_cannot_edit() -> None:
    draft = DraftPackageFactory()
    colleague = AuthorFactory()
    owner = _client(draft.owner)
    url = f"/studio/{draft.id}/collaborators/"
    response = owner.post(url, {"action": "add", "username": colleague.username})
    assert response.status_code == 302
    assert list(draft.collaborators.all()) == [colleague]
    page = owner.get(f"/studio/{draft.id}/").content.decode()
    assert colleague.username in page and f'aria-label="Remove {colleague.username}"' in page
    assert _client(colleague).get(f"/studio/{draft.id}/").status_code == 200
    owner.post(url, {"action": "remove", "username": colleague.username})
    assert draft.collaborators.count() == 0
    assert _client(colleague).get(f"/studio/{draft.id}/").status_code == 404


def test_a_co_author_cannot_change_co_authors_and_candidates_cannot_be_added() -> None:
    draft = DraftPackageFactory()
    colleague, third = AuthorFactory(), AuthorFactory()
    draft.collaborators.add(colleague)
    client = _client(colleague)
    client.post(f"/studio/{draft.id}/collaborators/", {"action": "add", "username": third.username})
    assert list(draft.collaborators.all()) == [colleague]
    owner = _client(draft.owner)
    candidate = CandidateFactory()
    response = owner.post(
        f"/studio/{draft.id}/collaborators/",
        {"action": "add", "username": candidate.username},
        follow=True,
    )
    assert "only authors can collaborate" in response.content.decode()
    response = owner.post(
        f"/studio/{draft.id}/collaborators/", {"action": "add", "username": "nobody"}, follow=True
    )
    assert "no such user: nobody" in response.content.decode()
    assert list(draft.collaborators.all()) == [colleague]


def test_export_then_import_round_trips_the_document() -> None:
    draft = DraftPackageFactory()
    client = _client(draft.owner)
    exported = client.get(f"/studio/{draft.id}/export/")
    assert exported.status_code == 200
    assert exported["Content-Disposition"].startswith('attachment; filename="cs201-')
    assert json.loads(exported.content) == draft.document
    upload = SimpleUploadedFile("cs201.json", exported.content, content_type="application/json")
    response = client.post("/studio/import/", {"file": upload})
    assert response.status_code == 302
    imported = DraftPackage.objects.exclude(pk=draft.pk).get()
    assert imported.document == draft.document and imported.owner == draft.owner
    assert imported.last_report["result"] == "pass"


def test_import_refuses_what_is_not_a_json_object() -> None:
    client = _client(AuthorFactory())
    for content in (b"{not json", b"[1, 2]", b"\xff\xfe"):
        upload = SimpleUploadedFile("bad.json", content)
        response = client.post("/studio/import/", {"file": upload}, follow=True)
        assert "not imported" in response.content.decode()
    assert DraftPackage.objects.count() == 0


def test_an_empty_package_starts_without_nodes() -> None:
    client = _client(AuthorFactory())
    response = client.post("/studio/new/", {"start": "empty", "title": "Two questions"})
    assert response.status_code == 302
    draft = DraftPackage.objects.get()
    assert draft.title == "Two questions" and draft.document["nodes"] == []
    assert draft.last_report["result"] == "reject"


def test_the_versions_page_lists_changes_by_meaning() -> None:
    draft = DraftPackageFactory()
    version_publish(draft=draft, user=draft.owner)
    document = example_document()
    document["nodes"][1]["evidenceTargets"][1]["weight"] = 0.3 - 0.05
    document["nodes"][1]["evidenceTargets"][2]["weight"] = 0.25
    draft = draft_save(draft=draft, document=document, expected_revision=1)
    version_publish(draft=draft, user=draft.owner)
    page = _client(draft.owner).get(f"/studio/{draft.id}/versions/?from=1&to=2").content.decode()
    assert 'id="semantic-diff"' in page
    assert "tgt-complexity" in page and "tgt-negative-weights" in page and "weight" in page
