"""Studio pages in a lecturer's words (issue #34, "Words"): the versions page's changes name
their node without a raw template tag, its text diff is a focusable, labelled region, and a
German author's co-author buttons are named in German."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from authoring.services import draft_save
from publishing.services import version_publish
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = pytest.mark.django_db


def _versions_page() -> str:
    draft = DraftPackageFactory()
    version_publish(draft=draft, user=draft.owner)
    document = example_document()
    document["nodes"][1]["evidenceTargets"][1]["label"] = "States the running time"
    draft = draft_save(draft=draft, document=document, expected_revision=1)
    version_publish(draft=draft, user=draft.owner)
    client = Client()
    client.force_login(draft.owner)
    return client.get(f"/studio/{draft.id}/versions/?from=1&to=2").content.decode()


def test_the_semantic_diff_names_the_node_of_a_change_not_a_template_tag() -> None:
    page = _versions_page()
    assert "{{" not in page and "}}" not in page
    assert "in <code>q-dijkstra</code>" in page


def test_the_text_diff_is_a_focusable_labelled_region() -> None:
    page = _versions_page()
    pre = re.search(r"<pre [^>]*class=\"diff\"[^>]*>", page)
    assert pre, page
    assert 'tabindex="0"' in pre.group(0)
    assert 'role="region"' in pre.group(0)
    assert 'aria-label="Differences from version 1 to 2"' in pre.group(0)


@pytest.mark.parametrize(
    ("language", "remove", "add"),
    [
        ("de", "bob-co entfernen", "Mitautor hinzufügen"),
        ("es", "Quitar a bob-co", "Añadir coautor"),
    ],
)
def test_co_author_buttons_are_named_in_the_author_s_language(
    language: str, remove: str, add: str
) -> None:
    draft = DraftPackageFactory()
    draft.collaborators.add(AuthorFactory(username="bob-co"))
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(draft.owner)
    page = client.get(f"/studio/{draft.id}/").content.decode()
    assert f'aria-label="{remove}"' in page
    assert f">{add}</button>" in page
    assert "Remove bob-co" not in page


@pytest.mark.parametrize(
    ("language", "unpublished", "published"),
    [
        ("de", "· noch nicht veröffentlicht", "· zuletzt veröffentlicht: <a href="),
        ("es", "· aún no publicado", "· última publicada: <a href="),
    ],
)
def test_the_published_line_is_in_the_author_s_language(
    language: str, unpublished: str, published: str
) -> None:
    draft = DraftPackageFactory()
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(draft.owner)
    assert unpublished in client.get(f"/studio/{draft.id}/").content.decode()
    version_publish(draft=draft, user=draft.owner)
    page = client.get(f"/studio/{draft.id}/").content.decode()
    line = re.search(r'<span id="published-info">(.*?)</span>', page, re.S)
    assert line and line.group(1).startswith(published), page
    assert f'/studio/{draft.id}/versions/">' in line.group(1)
    assert "latest published" not in page and "not published yet" not in page
