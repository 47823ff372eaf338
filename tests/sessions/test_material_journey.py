"""The candidate's material step in the journey (issue #35): a sitting whose package has a
grounded node asks for the report after the briefing and before the answer mode, states what is
accepted, refuses a bad file with a clear error (never a 500: an encrypted or damaged file inside
a code archive, a PDF whose text holds characters a database cannot store), stores a good one,
and shows no
one else's material; a sitting without a grounded node has no such step."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from publishing.services import version_publish
from sessions import exam_room
from sessions.exam_room import Step
from sessions.models import CandidateMaterial, ExamSession, Sitting
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document
from tests.sessions.material_files import (
    docx_bytes,
    encrypted_pdf_bytes,
    pdf_bytes,
    surrogate_pdf_bytes,
    unreadable_entry,
    zip_bytes,
)

pytestmark = pytest.mark.django_db


def briefed(name: str) -> ExamSession:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document(name))
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(version=version, title="Orals", created_by=author)
    now = timezone.now()
    return ExamSession.objects.create(
        sitting=sitting,
        candidate=CandidateFactory(),
        identity_confirmed_at=now,
        consent_given_at=now,
        consent_version=exam_room.CONSENT_VERSION,
        briefing_seen_at=now,
    )


def url(session: ExamSession, step: str) -> str:
    return reverse(f"exam_sessions:exam-{step}", kwargs={"session_id": session.pk})


def upload(client: Client, session: ExamSession, name: str, data: bytes) -> Any:
    return client.post(url(session, "material"), {"material": SimpleUploadedFile(name, data)})


@pytest.fixture
def session() -> ExamSession:
    return briefed("cs201-own-report")


def test_the_report_step_comes_after_the_briefing(client: Client, session: ExamSession) -> None:
    client.force_login(session.candidate)
    assert exam_room.next_step(session) == Step.MATERIAL
    response = client.get(url(session, "setup"))
    assert response.status_code == 302 and response["Location"] == url(session, "material")
    page = client.get(url(session, "material")).content.decode()
    assert "Upload your report" in page and 'for="material-file"' in page
    assert "Accepted: .pdf, .docx, .md, .txt, .zip" in page and "At most 10 MB" in page


def test_a_bad_file_is_refused_with_its_reason(client: Client, session: ExamSession) -> None:
    client.force_login(session.candidate)
    response = upload(client, session, "report.pdf", encrypted_pdf_bytes())
    assert response.status_code == 400
    assert "The PDF is encrypted" in response.content.decode()
    response = client.post(url(session, "material"), {})
    assert response.status_code == 400 and "Choose a file" in response.content.decode()
    assert not CandidateMaterial.objects.exists()


def test_a_code_archive_with_an_unreadable_file_is_refused_naming_it(
    client: Client, session: ExamSession
) -> None:
    client.force_login(session.candidate)
    code = zip_bytes({"README.md": b"We chose Python.\n" * 40, "src/main.py": b"x = 1\n" * 40})
    for how, reason in (("damaged", "it is damaged"), ("encrypted", "it is encrypted")):
        response = upload(client, session, "code.zip", unreadable_entry(code, "src/main.py", how))
        assert response.status_code == 400
        expected = f"The file src/main.py could not be read from the ZIP: {reason}"
        assert expected in response.content.decode()
    assert not CandidateMaterial.objects.exists()


def test_a_pdf_whose_text_has_nul_or_lone_surrogates_is_stored(
    client: Client, session: ExamSession
) -> None:
    """pypdf may read NUL characters or lone surrogates from a PDF; the text is stored without
    them (not a 500 from the database)."""
    client.force_login(session.candidate)
    line = "We chose Dijkstra\x00 instead of Bellman-Ford because all weights are positive."
    assert upload(client, session, "report.pdf", pdf_bytes((line,))).status_code == 302
    assert "Dijkstra instead of" in CandidateMaterial.objects.get().text
    assert upload(client, session, "report.pdf", surrogate_pdf_bytes("BAB")).status_code == 302
    assert CandidateMaterial.objects.get().text == "B\ufffdB"


def test_a_good_file_is_stored_and_the_journey_goes_on(
    client: Client, session: ExamSession
) -> None:
    client.force_login(session.candidate)
    response = upload(client, session, "report.docx", docx_bytes())
    assert response.status_code == 302 and response["Location"] == url(session, "setup")
    assert CandidateMaterial.objects.get().source == "candidate"
    page = client.get(url(session, "material")).content.decode()
    assert "report.docx" in page and "Replace and continue" in page
    upload(client, session, "report.pdf", pdf_bytes())
    assert CandidateMaterial.objects.get().file_type == "pdf"


def test_another_candidate_never_reaches_the_page(client: Client, session: ExamSession) -> None:
    client.force_login(CandidateFactory())
    assert client.get(url(session, "material")).status_code == 404
    assert upload(client, session, "r.pdf", pdf_bytes()).status_code == 404


def test_an_exam_without_grounded_nodes_has_no_report_step(client: Client) -> None:
    session = briefed("cs201-graph-algorithms")
    client.force_login(session.candidate)
    assert exam_room.next_step(session) == Step.SETUP
    response = client.get(url(session, "material"))
    assert response.status_code == 302 and response["Location"] == url(session, "setup")
    assert "Your report" not in client.get(url(session, "setup")).content.decode()
