"""Site translations (config.i18n, docs/i18n.md): the per-language JavaScript catalogue, the
page's ``lang`` on staff pages (the browser's language) and candidate pages (the exam's)."""

from __future__ import annotations

import copy
import re

import pytest
from django.test import Client
from django.urls import reverse

from config.checks import check_languages
from publishing.services import version_publish
from sessions.models import ExamSession, Sitting
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document

pytestmark = pytest.mark.django_db


def html_lang(html: str) -> str:
    match = re.search(r'<html lang="([^"]*)"', html)
    assert match, "no <html lang> on the page"
    return match.group(1)


def session_in(language: str | None) -> ExamSession:
    document = copy.deepcopy(example_document())
    if language is None:
        document["metadata"].pop("language", None)
    else:
        document["metadata"]["language"] = language
    author = AuthorFactory()
    version = version_publish(
        draft=DraftPackageFactory(owner=author, document=document), user=author
    ).version
    sitting = Sitting.objects.create(version=version, title="Orals", created_by=author)
    return ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_javascript_catalogue_per_language(client: Client, language: str) -> None:
    response = client.get(reverse("javascript-catalog", args=[language]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "django.gettext" in response.content.decode()


def test_javascript_catalogue_refuses_other_languages(client: Client) -> None:
    assert client.get(reverse("javascript-catalog", args=["fr"])).status_code == 404


def test_staff_page_follows_the_browser_language(client: Client) -> None:
    client.force_login(AuthorFactory())
    page = client.get(reverse("authoring:package-list"), headers={"accept-language": "de"})
    assert html_lang(page.content.decode()) == "de"
    assert reverse("javascript-catalog", args=["de"]) in page.content.decode()
    page = client.get(reverse("authoring:package-list"))
    assert html_lang(page.content.decode()).startswith("en")


@pytest.mark.parametrize(("tag", "expected"), [("de", "de"), ("es-MX", "es"), (None, "en")])
def test_candidate_page_follows_the_exam_language(
    client: Client, tag: str | None, expected: str
) -> None:
    session = session_in(tag)
    client.force_login(session.candidate)
    url = reverse("exam_sessions:exam-identity", kwargs={"session_id": session.pk})
    # The candidate's browser asks for another language: the exam's wins.
    page = client.get(url, headers={"accept-language": "fr, en;q=0.5"})
    assert page.status_code == 200
    assert html_lang(page.content.decode()) == expected
    assert page["Content-Language"] == expected
    assert reverse("javascript-catalog", args=[expected]) in page.content.decode()


def test_system_check_refuses_languages_without_runtime_tables(settings: object) -> None:
    assert check_languages() == []
    settings.LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]  # type: ignore[attr-defined]
    (error,) = check_languages()
    assert error.id == "viva.E020" and "fr" in error.msg
