"""The materials API (issue #35): staff upload a candidate's report for a session; a refusal
names what is wrong (also a code archive whose file cannot be read: 400, never a 500); another
proctor's session does not exist for them."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.test import Client

from sessions.models import CandidateMaterial, ExamSession
from tests.factories import ProctorFactory, example_document
from tests.sessions.factories import ExamSessionFactory, PublishedVersionFactory, SittingFactory
from tests.sessions.material_files import (
    encrypted_pdf_bytes,
    pdf_bytes,
    unreadable_entry,
    zip_bytes,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def session() -> ExamSession:
    document = example_document("cs201-own-report")
    version = PublishedVersionFactory(canonical_json=json.dumps(document))
    return ExamSessionFactory(sitting=SittingFactory(version=version, proctors=[ProctorFactory()]))


def post(client: Client, session: ExamSession, data: bytes) -> Any:
    upload = io.BytesIO(data)
    upload.name = "report.pdf"
    return client.post(f"/api/v1/sessions/{session.pk}/materials/", {"file": upload})


def test_a_proctor_uploads_a_report_through_the_api(client: Client, session: ExamSession) -> None:
    client.force_login(session.sitting.proctors.get())
    response = post(client, session, pdf_bytes())
    assert response.status_code == 201, response.content
    body = response.json()
    material = CandidateMaterial.objects.get()
    assert body["materialId"] == material.material_id and body["kind"] == "report"
    assert body["fileType"] == "pdf" and body["source"] == "api" and "text" not in body


def test_a_refusal_names_the_problem_and_stores_nothing(
    client: Client, session: ExamSession
) -> None:
    client.force_login(session.sitting.proctors.get())
    response = post(client, session, encrypted_pdf_bytes())
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "material_refused" and "encrypted" in error["message"]
    assert not CandidateMaterial.objects.exists()


def test_a_code_archive_with_a_damaged_file_is_refused_not_an_error(
    client: Client, session: ExamSession
) -> None:
    client.force_login(session.sitting.proctors.get())
    code = zip_bytes({"README.md": b"We chose Python.\n" * 40, "src/main.py": b"x = 1\n" * 40})
    for how in ("damaged", "method"):
        response = post(client, session, unreadable_entry(code, "src/main.py", how))
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "material_refused"
        assert error["message"].startswith("The file src/main.py could not be read from the ZIP")
    assert not CandidateMaterial.objects.exists()


def test_others_and_candidates_are_refused(client: Client, session: ExamSession) -> None:
    client.force_login(ProctorFactory())
    assert post(client, session, pdf_bytes()).status_code == 404
    client.force_login(session.candidate)
    assert post(client, session, pdf_bytes()).status_code == 403
    assert not CandidateMaterial.objects.exists()


def test_staff_upload_a_zip_named_by_candidate_on_the_sitting_page(
    client: Client, session: ExamSession
) -> None:
    client.force_login(session.sitting.proctors.get())
    page = f"/proctor/sittings/{session.sitting.pk}/materials/"
    archive = io.BytesIO(zip_bytes({f"{session.candidate.username}.pdf": pdf_bytes()}))
    archive.name = "reports.zip"
    response = client.post(page, {"archive": archive})
    assert response.status_code == 200
    assert "Stored." in response.content.decode()
    assert CandidateMaterial.objects.get().source == "staff_bulk"
    listing = client.get(page).content.decode()
    assert f"{session.candidate.username}.pdf" in listing and "staff (bulk upload)" in listing
    assert client.post(page, {}).status_code == 400
    client.force_login(ProctorFactory())
    assert client.get(page).status_code == 404
    client.force_login(session.candidate)
    assert client.get(page).status_code in (302, 403)
