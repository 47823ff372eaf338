"""Site translations (config.i18n, docs/i18n.md): the per-language JavaScript catalogue, the
page's ``lang`` on staff pages (the browser's language) and candidate pages (the exam's)."""

from __future__ import annotations

import copy
import re

import polib
import pytest
from django.test import Client
from django.urls import reverse

from config.checks import check_languages
from config.messages import LOCALE_DIR
from publishing.services import version_publish
from sessions.models import ExamSession, Sitting
from tests.factories import (
    AdminFactory,
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    UserFactory,
    example_document,
)

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


ROLE_BADGES = {
    # The header's badge names the signed-in user's role in the page's language. The German
    # catalogue calls the candidate "Kandidat" throughout (docs/i18n.md, "Terms").
    "de": {"author": "Autor", "proctor": "Prüfungsaufsicht", "admin": "Administrator"},
    "es": {"author": "Autor", "proctor": "Supervisor", "admin": "Administrador"},
    "en": {"author": "Author", "proctor": "Proctor", "admin": "Administrator"},
}
STAFF = {"author": AuthorFactory, "proctor": ProctorFactory, "admin": AdminFactory}


def role_badge(html: str) -> str:
    match = re.search(r'<span class="role-badge">([^<]*)</span>', html)
    assert match, "no role badge on the page"
    return match.group(1)


@pytest.mark.parametrize("language", sorted(ROLE_BADGES))
@pytest.mark.parametrize("role", sorted(STAFF))
def test_staff_role_badge_is_in_the_page_language(client: Client, language: str, role: str) -> None:
    staff: type[UserFactory] = STAFF[role]
    client.force_login(staff())
    page = client.get(reverse("exam_sessions:proctor-home"), headers={"accept-language": language})
    assert page.status_code == 200
    assert role_badge(page.content.decode()) == ROLE_BADGES[language][role]


@pytest.mark.parametrize(("language", "badge"), [("de", "Kandidat"), ("es", "Candidato")])
def test_candidate_role_badge_is_in_the_exam_language(
    client: Client, language: str, badge: str
) -> None:
    session = session_in(language)
    client.force_login(session.candidate)
    url = reverse("exam_sessions:exam-identity", kwargs={"session_id": session.pk})
    assert role_badge(client.get(url).content.decode()) == badge


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


def test_the_german_catalogues_name_the_candidate_one_way() -> None:
    """'Kandidat' (and 'Kandidatin oder Kandidat'), never 'Prüfling' (docs/i18n.md, "Terms")."""
    other = [
        entry.msgid
        for domain in ("django", "djangojs")
        for entry in polib.pofile(str(LOCALE_DIR / "de" / "LC_MESSAGES" / f"{domain}.po"))
        if "prüfling" in (entry.msgstr + " ".join(entry.msgstr_plural.values())).lower()
    ]
    assert other == [], f"'Prüfling' where the catalogue says 'Kandidat': {other}"
