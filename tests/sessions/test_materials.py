"""Storing candidate materials (sessions.materials, issue #35): one per session and kind,
replaced before the exam and frozen after its start, bulk uploads by candidate name, never
visible to another candidate, and erased with the session."""

from __future__ import annotations

import hashlib
import json

import pytest

from ioa.events.personal import ERASED_TEXT
from sessions import erasure, selectors, services
from sessions.material_text import MaterialRefused
from sessions.materials import material_kinds
from sessions.models import CandidateMaterial, ExamSession, PersonalDataErasure
from tests.factories import AuthorFactory, CandidateFactory, example_document
from tests.sessions.factories import ExamSessionFactory, PublishedVersionFactory, SittingFactory
from tests.sessions.material_files import docx_bytes, pdf_bytes, zip_bytes

pytestmark = pytest.mark.django_db

GROUNDING = {"material": "report", "pick": "choice", "fallbackQuestion": "Tell me a decision."}


def grounded_package() -> str:
    document = example_document()
    document["nodes"][1]["grounding"] = GROUNDING
    return json.dumps(document)


@pytest.fixture
def session() -> ExamSession:
    version = PublishedVersionFactory(canonical_json=grounded_package())
    return ExamSessionFactory(sitting=SittingFactory(version=version))


def upload(session: ExamSession, data: bytes, **kwargs: object) -> CandidateMaterial:
    arguments: dict[str, object] = {
        "kind": "report",
        "filename": "report.pdf",
        "uploaded_by": session.candidate,
        "source": "candidate",
    }
    return services.material_upload(session=session, data=data, **{**arguments, **kwargs})


def test_material_kinds_come_from_the_grounded_nodes(session: ExamSession) -> None:
    assert material_kinds(session.sitting.version) == ["report"]
    assert (
        material_kinds(PublishedVersionFactory(canonical_json=json.dumps(example_document()))) == []
    )


def test_an_upload_is_stored_with_its_text_checksums_and_uploader(session: ExamSession) -> None:
    data = pdf_bytes()
    material = upload(session, data, filename="C:\\Users\\me\\report.pdf")
    assert material.file_type == "pdf" and material.filename == "report.pdf"
    assert bytes(material.original) == data and material.size == len(data)
    assert material.sha256 == hashlib.sha256(data).hexdigest()
    assert "instead of Bellman-Ford" in material.text
    assert material.text_sha256 == hashlib.sha256(material.text.encode()).hexdigest()
    assert material.uploaded_by == session.candidate and material.source == "candidate"
    assert material.material_id == f"report-{material.pk.hex}"


def test_a_new_upload_replaces_the_old_under_a_new_id(session: ExamSession) -> None:
    first = upload(session, pdf_bytes())
    second = upload(session, docx_bytes(), filename="report.docx")
    assert list(CandidateMaterial.objects.filter(session=session)) == [second]
    assert second.material_id != first.material_id


def test_refused_uploads_store_nothing(session: ExamSession) -> None:
    with pytest.raises(MaterialRefused, match="does not ask for this kind of material"):
        upload(session, pdf_bytes(), kind="submission")
    ExamSession.objects.filter(pk=session.pk).update(state="in_progress")
    with pytest.raises(MaterialRefused, match="The exam has started"):
        upload(session, pdf_bytes())
    assert not CandidateMaterial.objects.exists()


def test_bulk_upload_by_username_or_email_reports_each_entry(session: ExamSession) -> None:
    other = ExamSessionFactory(sitting=session.sitting)
    third = ExamSessionFactory(sitting=session.sitting)
    data = zip_bytes(
        {
            f"{session.candidate.username}.pdf": pdf_bytes(),
            f"{other.candidate.email.upper()}.docx": docx_bytes(),
            "nobody.pdf": pdf_bytes(),
            f"{third.candidate.username}.pdf": b"%PDF-1.4 garbage",
        }
    )
    lines = services.materials_bulk_upload(
        sitting=session.sitting, kind="report", data=data, uploaded_by=AuthorFactory()
    )
    assert [(line.stored, line.candidate) for line in lines] == [
        (True, session.candidate.username),
        (True, other.candidate.username),
        (False, "nobody"),
        (False, third.candidate.username),
    ]
    assert "damaged" in lines[3].message
    assert {m.source for m in CandidateMaterial.objects.all()} == {"staff_bulk"}
    with pytest.raises(MaterialRefused, match="ZIP"):
        services.materials_bulk_upload(
            sitting=session.sitting, kind="report", data=b"nope", uploaded_by=AuthorFactory()
        )


def test_another_candidate_never_sees_the_material(session: ExamSession) -> None:
    upload(session, pdf_bytes())
    assert len(selectors.materials_of(user=session.candidate, session=session)) == 1
    assert selectors.materials_of(user=CandidateFactory(), session=session) == []
    assert not CandidateMaterial.objects.visible_to(CandidateFactory()).exists()


def test_the_bot_gets_every_material_until_the_session_is_erased(session: ExamSession) -> None:
    material = upload(session, pdf_bytes())
    (handed,) = selectors.materials_for_bot(session_id=session.pk)
    assert (handed.material_id, handed.kind, handed.text) == (
        material.material_id,
        "report",
        material.text,
    )
    erasure.erase_session(
        session=session, kind=PersonalDataErasure.Kind.REQUEST, requested_by=None, reason="asked"
    )
    material.refresh_from_db()
    assert (bytes(material.original), material.text, material.filename) == (b"", "", ERASED_TEXT)
    assert material.size == 0
    assert selectors.materials_for_bot(session_id=session.pk) == []
