"""Storing candidate materials (sessions.materials, issue #35): one per session and kind,
replaced before the exam and frozen after its start, bulk uploads by candidate name, never
visible to another candidate, and erased with the session."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import pytest
from django.utils import translation

from ioa.events.personal import ERASED_TEXT
from sessions import erasure, selectors, services
from sessions.material_text import MaterialRefused
from sessions.materials import material_kinds
from sessions.models import CandidateMaterial, ExamSession, PersonalDataErasure
from tests.factories import AuthorFactory, CandidateFactory, example_document
from tests.sessions.factories import ExamSessionFactory, PublishedVersionFactory, SittingFactory
from tests.sessions.material_files import (
    docx_bytes,
    grounded_package,
    pdf_bytes,
    unreadable_entry,
    zip_bytes,
)

if TYPE_CHECKING:
    from sessions.materials import BulkUpload
    from tests.sessions.material_files import Unreadable

pytestmark = pytest.mark.django_db


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
    ).lines
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


def bulk(session: ExamSession, entries: dict[str, bytes]) -> BulkUpload:
    return services.materials_bulk_upload(
        sitting=session.sitting, kind="report", data=zip_bytes(entries), uploaded_by=AuthorFactory()
    )


def test_bulk_upload_skips_macos_and_windows_metadata_without_a_line(session: ExamSession) -> None:
    """A ZIP made by macOS Finder (``__MACOSX/`` AppleDouble ``._`` files, ``.DS_Store``) or
    holding Windows' ``Thumbs.db``/``desktop.ini``: only the candidate's file gets a line; the
    system files are counted, never looked up as candidates, never stored."""
    name = session.candidate.username
    result = bulk(
        session,
        {
            "reports/": b"",
            f"reports/{name}.pdf": pdf_bytes(),
            "reports/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "__MACOSX/": b"",
            "__MACOSX/reports/": b"",
            f"__MACOSX/reports/._{name}.pdf": b"\x00\x05\x16\x07 AppleDouble",
            f"._{name}.pdf": b"\x00\x05\x16\x07 AppleDouble",
            "Thumbs.db": b"\xd0\xcf\x11\xe0",
            "reports/Desktop.ini": b"[.ShellClassInfo]\r\n",
        },
    )
    assert [(line.entry, line.candidate, line.stored) for line in result.lines] == [
        (f"reports/{name}.pdf", name, True)
    ]
    assert result.system_files == 5
    material = CandidateMaterial.objects.get()
    assert (material.session, material.file_type) == (session, "pdf")


def test_two_files_for_one_candidate_store_neither_and_say_so(session: ExamSession) -> None:
    """Entries that name the same candidate (two types, the same name in two folders, username
    and upper-case email) store none of them: each line names the clashing entries and the
    candidate keeps their earlier material; the other candidates' files are stored."""
    earlier = upload(session, pdf_bytes())
    twice = ExamSessionFactory(sitting=session.sitting)
    carol = ExamSessionFactory(
        sitting=session.sitting, candidate=CandidateFactory(email="carol@uni.example")
    )
    bob = ExamSessionFactory(sitting=session.sitting)
    alice, dave = session.candidate.username, twice.candidate.username
    result = bulk(
        session,
        {
            f"{alice}.pdf": pdf_bytes(),
            f"{bob.candidate.username}.pdf": pdf_bytes(),
            f"reports/{alice}.docx": docx_bytes(),
            f"{dave}.pdf": pdf_bytes(),
            f"reports/{dave}.pdf": pdf_bytes(),
            f"{carol.candidate.username}.pdf": pdf_bytes(),
            "CAROL@uni.example.pdf": docx_bytes(),
        },
    )
    clash = "Two or more files in the ZIP are for this candidate: {}."
    carol_files = f"{carol.candidate.username}.pdf, CAROL@uni.example.pdf"
    assert [(line.candidate, line.stored, line.message) for line in result.lines] == [
        (alice, False, clash.format(f"{alice}.pdf, reports/{alice}.docx")),
        (bob.candidate.username, True, "Stored."),
        (alice, False, clash.format(f"{alice}.pdf, reports/{alice}.docx")),
        (dave, False, clash.format(f"{dave}.pdf, reports/{dave}.pdf")),
        (dave, False, clash.format(f"{dave}.pdf, reports/{dave}.pdf")),
        (carol.candidate.username, False, clash.format(carol_files)),
        (carol.candidate.username, False, clash.format(carol_files)),
    ]
    assert list(CandidateMaterial.objects.filter(session=session)) == [earlier]
    assert CandidateMaterial.objects.get(session=bob).source == "staff_bulk"
    assert not CandidateMaterial.objects.filter(session__in=[twice, carol]).exists()


UNREADABLE = "The file {} could not be read from the ZIP: "


def unreadable_zip(names: list[str]) -> bytes:
    """A ZIP of a PDF per name: the first readable, the second encrypted, the third with a bad
    CRC-32 (stored), the fourth not inflatable (zlib.error), the fifth compressed by method 99."""
    _, encrypted, crc, inflate, method = (f"{name}.pdf" for name in names)
    files = {f"{name}.pdf": pdf_bytes() for name in names}
    data = zip_bytes(files, stored=(crc,))
    broken: tuple[tuple[str, Unreadable], ...] = (
        (encrypted, "encrypted"),
        (crc, "damaged"),
        (inflate, "damaged"),
        (method, "method"),
    )
    for entry, how in broken:
        data = unreadable_entry(data, entry, how)
    return data


def test_bulk_entries_that_cannot_be_read_get_a_line_and_the_rest_are_stored(
    session: ExamSession,
) -> None:
    """An encrypted entry, a damaged one (bad CRC-32, deflate data zlib cannot inflate) and one
    compressed by a method zipfile cannot read each get a "could not be read" line saying why;
    nothing is stored for them, their candidates keep earlier material, the readable entry is
    stored."""
    others = [ExamSessionFactory(sitting=session.sitting) for _ in range(4)]
    earlier = upload(others[0], pdf_bytes())
    names = [session.candidate.username] + [other.candidate.username for other in others]
    result = services.materials_bulk_upload(
        sitting=session.sitting,
        kind="report",
        data=unreadable_zip(names),
        uploaded_by=AuthorFactory(),
    )
    encrypted = "it is encrypted (password-protected). Make the ZIP without a password."
    damaged = "it is damaged. Make the ZIP again."
    method = (
        "it is compressed with a method that is not supported. Make the ZIP again with standard"
        " (Deflate) compression."
    )
    reasons = ["", encrypted, damaged, damaged, method]
    assert [(line.candidate, line.stored, line.message) for line in result.lines] == [
        (names[0], True, "Stored."),
        *[
            (name, False, UNREADABLE.format(f"{name}.pdf") + reason)
            for name, reason in zip(names[1:], reasons[1:], strict=True)
        ],
    ]
    assert CandidateMaterial.objects.get(session=session).source == "staff_bulk"
    assert list(CandidateMaterial.objects.exclude(session=session)) == [earlier]


def test_a_zip_needing_a_newer_zip_version_is_refused_as_damaged(session: ExamSession) -> None:
    data = unreadable_entry(zip_bytes({"a.pdf": pdf_bytes()}), "a.pdf", "version")
    with pytest.raises(MaterialRefused, match=r"^The ZIP file is damaged and cannot be read\.$"):
        services.materials_bulk_upload(
            sitting=session.sitting, kind="report", data=data, uploaded_by=AuthorFactory()
        )


def test_unreadable_entry_lines_are_translated(session: ExamSession) -> None:
    others = [ExamSessionFactory(sitting=session.sitting) for _ in range(4)]
    names = [session.candidate.username] + [other.candidate.username for other in others]
    with translation.override("de"):
        lines = bulk_data(session, unreadable_zip(names)).lines
    assert lines[1].message == (
        f"Die Datei {names[1]}.pdf konnte nicht aus der ZIP-Datei gelesen werden: sie ist"
        " verschlüsselt (passwortgeschützt). Erstellen Sie die ZIP-Datei ohne Passwort."
    )
    assert "sie ist beschädigt." in lines[2].message
    assert "Komprimierungsverfahren" in lines[4].message
    with translation.override("es"):
        lines = bulk_data(session, unreadable_zip(names)).lines
    assert lines[1].message.startswith(f"No se pudo leer el archivo {names[1]}.pdf del ZIP")
    assert "está dañado" in lines[2].message and "cifrado" in lines[1].message


def bulk_data(session: ExamSession, data: bytes) -> BulkUpload:
    return services.materials_bulk_upload(
        sitting=session.sitting, kind="report", data=data, uploaded_by=AuthorFactory()
    )


def test_bulk_upload_lines_are_translated(session: ExamSession) -> None:
    name = session.candidate.username
    with translation.override("de"):
        result = bulk(session, {f"{name}.pdf": pdf_bytes(), f"{name}.md": b"# Report"})
    assert result.lines[0].message == (
        "Zwei oder mehr Dateien in der ZIP-Datei sind für diesen Kandidaten: "
        f"{name}.pdf, {name}.md."
    )
    with translation.override("es"):
        result = bulk(session, {f"{name}.pdf": pdf_bytes(), f"{name}.md": b"# Report"})
    assert result.lines[0].message.startswith("Dos o más archivos del ZIP son para este candidato")


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
