"""What a candidate is told about material staff filed for them (issue #35,
docs/spec/candidate-materials.md §10, "What the candidate is told"): the step before the exam
(answer mode) names the file the examiner will ask about and, when staff provided it (bulk
upload or API), says so and when; the material page says the same beside the file. A
candidate's own upload is never called staff's."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils import formats, timezone, translation

from sessions import exam_room, services
from sessions.models import CandidateMaterial, ExamSession
from tests.factories import ProctorFactory, example_document
from tests.sessions.factories import ExamSessionFactory, PublishedVersionFactory, SittingFactory
from tests.sessions.material_files import GROUNDING, docx_bytes, pdf_bytes, zip_bytes
from tests.sessions.test_material_journey import briefed, upload, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def session() -> ExamSession:
    return briefed("cs201-own-report")


def shown_date(material: CandidateMaterial) -> str:
    """The upload's date as the page shows it (the active language's date format)."""
    return formats.date_format(timezone.localtime(material.created_at), "DATE_FORMAT")


def test_staff_bulk_material_is_shown_as_provided_by_staff_with_its_date(
    client: Client, session: ExamSession
) -> None:
    """After a bulk upload the journey skips the upload step; the answer-mode page names the
    file, says staff provided it and when, and links to the material page, which says the same."""
    name = session.candidate.username
    services.materials_bulk_upload(
        sitting=session.sitting,
        kind="report",
        data=zip_bytes({f"{name}.pdf": pdf_bytes()}),
        uploaded_by=ProctorFactory(),
    )
    material = CandidateMaterial.objects.get()
    client.force_login(session.candidate)
    setup = client.get(url(session, "setup"))
    assert setup.status_code == 200
    page = setup.content.decode()
    assert (
        f"Your report for this exam: <strong>{name}.pdf</strong>, provided by staff on "
        f"{shown_date(material)}. The examiner will ask about a passage of it."
    ) in page
    assert f'href="{url(session, "material")}" id="material-link-report"' in page
    material_page = client.get(url(session, "material")).content.decode()
    assert f"Provided by staff on {shown_date(material)}." in material_page


def test_material_sent_through_the_api_is_also_provided_by_staff(
    client: Client, session: ExamSession
) -> None:
    services.material_upload(
        session=session,
        kind="report",
        filename="report.docx",
        data=docx_bytes(),
        uploaded_by=ProctorFactory(),
        source=CandidateMaterial.Source.API,
    )
    client.force_login(session.candidate)
    page = client.get(url(session, "setup")).content.decode()
    assert "<strong>report.docx</strong>, provided by staff on" in page


def test_the_candidates_own_upload_is_not_called_staffs(
    client: Client, session: ExamSession
) -> None:
    client.force_login(session.candidate)
    assert upload(client, session, "report.pdf", pdf_bytes()).status_code == 302
    page = client.get(url(session, "setup")).content.decode()
    assert (
        "Your report for this exam: <strong>report.pdf</strong>. The examiner will ask about a"
        " passage of it."
    ) in page
    assert "provided by staff" not in page.lower()
    assert "Provided by staff" not in client.get(url(session, "material")).content.decode()


def test_no_note_before_any_material(client: Client, session: ExamSession) -> None:
    """Without material the answer-mode step is not reached (the upload step comes first), so
    the note never claims a file that is not there."""
    client.force_login(session.candidate)
    response = client.get(url(session, "setup"))
    assert response.status_code == 302 and response["Location"] == url(session, "material")
    assert "Your report for this exam" not in client.get(url(session, "material")).content.decode()


def german_session() -> ExamSession:
    """A briefed session of the German CS201 package whose second node asks about the report."""
    document = example_document("cs201-graph-algorithms.de")
    document["nodes"][1]["grounding"] = GROUNDING
    version = PublishedVersionFactory(canonical_json=json.dumps(document))
    now = timezone.now()
    return ExamSessionFactory(
        sitting=SittingFactory(version=version),
        identity_confirmed_at=now,
        consent_given_at=now,
        consent_version=exam_room.CONSENT_VERSION,
        briefing_seen_at=now,
    )


def test_the_note_is_in_the_exams_language(client: Client) -> None:
    session = german_session()
    services.material_upload(
        session=session,
        kind="report",
        filename="bericht.pdf",
        data=pdf_bytes(),
        uploaded_by=ProctorFactory(),
        source=CandidateMaterial.Source.STAFF_BULK,
    )
    client.force_login(session.candidate)
    page = client.get(url(session, "setup")).content.decode()
    with translation.override("de"):
        date = shown_date(CandidateMaterial.objects.get())
    assert (
        f"Ihr Bericht für diese Prüfung: <strong>bericht.pdf</strong>, vom Personal am {date}"
        " bereitgestellt. Der Prüfer fragt nach einer Passage daraus."
    ) in page
    assert "Bericht ansehen oder ersetzen" in page
    material_page = client.get(url(session, "material")).content.decode()
    assert f"Vom Personal am {date} bereitgestellt." in material_page
