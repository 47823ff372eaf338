"""Studio pages: list, create from an example, editor, version history with a diff."""

from __future__ import annotations

import pytest
from django.test import Client

from authoring.services import draft_save
from publishing.services import version_publish
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = pytest.mark.django_db


def test_create_from_example_and_open_the_editor() -> None:
    client = Client()
    client.force_login(AuthorFactory())
    page = client.get("/studio/")
    assert b"Start from an example" in page.content
    response = client.post("/studio/new/", {"example": "cs201-graph-algorithms"})
    assert response.status_code == 302
    editor = client.get(response.url)
    assert editor.status_code == 200
    html = editor.content.decode()
    assert 'id="document"' in html and "Validation report" in html
    assert 'id="initial-report" type="application/json"' in html
    assert "<script>" not in html  # no inline script (CSP)
    assert "script-src 'self'" in editor["Content-Security-Policy"]


def test_version_history_shows_a_diff_between_versions() -> None:
    draft = DraftPackageFactory()
    version_publish(draft=draft, user=draft.owner)
    document = example_document()
    document["metadata"]["version"] = "1.1.0"
    draft = draft_save(draft=draft, document=document, expected_revision=1)
    version_publish(draft=draft, user=draft.owner)
    client = Client()
    client.force_login(draft.owner)
    page = client.get(f"/studio/{draft.id}/versions/?from=1&to=2").content.decode()
    assert 'class="diff-del">-    &quot;version&quot;: &quot;1.0.0&quot;' in page
    assert 'class="diff-add">+    &quot;version&quot;: &quot;1.1.0&quot;' in page
