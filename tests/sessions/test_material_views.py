"""Staff's bulk upload page (sessions.material_views.sitting_materials, issue #35) over HTTP: a
ZIP made by macOS Finder or holding Windows' metadata shows one line per candidate's file and
one summary of the skipped system files; two files for one candidate are both refused with a
line naming them, in the staff member's language; an entry that cannot be read (encrypted,
damaged, an unsupported compression method) gets its line saying why, never a 500."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from sessions.models import CandidateMaterial, ExamSession, Sitting
from tests.factories import CandidateFactory, ProctorFactory
from tests.sessions.factories import ExamSessionFactory, PublishedVersionFactory, SittingFactory
from tests.sessions.material_files import (
    docx_bytes,
    grounded_package,
    pdf_bytes,
    unreadable_entry,
    zip_bytes,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sitting() -> Sitting:
    version = PublishedVersionFactory(canonical_json=grounded_package())
    return SittingFactory(version=version)


def post_zip(
    client: Client, sitting: Sitting, entries: dict[str, bytes] | bytes, **headers: str
) -> str:
    """Sign in a proctor of ``sitting``, post ``entries`` (or a ZIP's bytes) as the bulk ZIP,
    return the page."""
    proctor = ProctorFactory()
    sitting.proctors.add(proctor)
    client.force_login(proctor)
    data = entries if isinstance(entries, bytes) else zip_bytes(entries)
    response = client.post(
        reverse("exam_sessions:proctor-materials", kwargs={"sitting_id": sitting.pk}),
        {"archive": SimpleUploadedFile("reports.zip", data)},
        headers=headers,
    )
    assert response.status_code == 200
    return response.content.decode()


def candidate_session(sitting: Sitting, username: str) -> ExamSession:
    return ExamSessionFactory(sitting=sitting, candidate=CandidateFactory(username=username))


def test_a_finder_zip_shows_only_the_candidates_files_and_one_summary(
    client: Client, sitting: Sitting
) -> None:
    ada = candidate_session(sitting, "alovelace")
    page = post_zip(
        client,
        sitting,
        {
            "reports/alovelace.pdf": pdf_bytes(),
            "reports/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "__MACOSX/reports/._alovelace.pdf": b"\x00\x05\x16\x07",
            "Thumbs.db": b"\xd0\xcf\x11\xe0",
        },
    )
    assert page.count("<td>reports/alovelace.pdf</td><td>alovelace</td><td>Stored.</td>") == 1
    assert "__MACOSX" not in page and ".DS_Store" not in page and "Thumbs.db" not in page
    assert "No candidate of this sitting has this name." not in page
    assert "Skipped 3 system files (macOS/Windows metadata)." in page
    assert CandidateMaterial.objects.get().session == ada


def test_no_summary_when_the_zip_holds_no_system_file(client: Client, sitting: Sitting) -> None:
    candidate_session(sitting, "alovelace")
    page = post_zip(client, sitting, {"alovelace.pdf": pdf_bytes()})
    assert "Stored." in page and "system file" not in page


def test_two_files_for_one_candidate_are_both_refused(client: Client, sitting: Sitting) -> None:
    candidate_session(sitting, "alovelace")
    grace = candidate_session(sitting, "ghopper")
    page = post_zip(
        client,
        sitting,
        {"alovelace.pdf": pdf_bytes(), "alovelace.docx": docx_bytes(), "ghopper.pdf": pdf_bytes()},
    )
    refused = (
        "<td>alovelace</td><td>Not stored. Two or more files in the ZIP are for this candidate: "
        "alovelace.pdf, alovelace.docx.</td>"
    )
    assert page.count(refused) == 2
    assert "<td>ghopper.pdf</td><td>ghopper</td><td>Stored.</td>" in page
    assert CandidateMaterial.objects.get().session == grace


def test_the_lines_and_the_summary_are_in_the_staff_members_language(
    client: Client, sitting: Sitting
) -> None:
    candidate_session(sitting, "alovelace")
    entries = {"alovelace.pdf": pdf_bytes(), "a/alovelace.pdf": pdf_bytes(), ".DS_Store": b"x"}
    page = post_zip(client, sitting, entries, accept_language="de")
    assert (
        "Nicht gespeichert. Zwei oder mehr Dateien in der ZIP-Datei sind für diesen Kandidaten: "
        "alovelace.pdf, a/alovelace.pdf."
    ) in page
    assert "1 Systemdatei übersprungen (macOS-/Windows-Metadaten)." in page
    page = post_zip(client, sitting, entries, accept_language="es")
    assert "Se omitió 1 archivo del sistema (metadatos de macOS/Windows)." in page


def test_entries_that_cannot_be_read_are_listed_with_why(client: Client, sitting: Sitting) -> None:
    """An encrypted entry and a damaged one get their "could not be read" lines (not a 500);
    the readable entry is stored; the same lines in German."""
    ada = candidate_session(sitting, "alovelace")
    candidate_session(sitting, "ghopper")
    candidate_session(sitting, "kjohnson")
    files = {f"{name}.pdf": pdf_bytes() for name in ("alovelace", "ghopper", "kjohnson")}
    data = unreadable_entry(zip_bytes(files), "ghopper.pdf", "encrypted")
    data = unreadable_entry(data, "kjohnson.pdf", "damaged")
    page = post_zip(client, sitting, data)
    assert "<td>alovelace.pdf</td><td>alovelace</td><td>Stored.</td>" in page
    assert (
        "<td>ghopper</td><td>Not stored. The file ghopper.pdf could not be read from the ZIP: it is"
        " encrypted (password-protected). Make the ZIP without a password.</td>"
    ) in page
    assert (
        "<td>kjohnson</td><td>Not stored. The file kjohnson.pdf could not be read from the ZIP: it"
        " is damaged. Make the ZIP again.</td>"
    ) in page
    assert CandidateMaterial.objects.get().session == ada
    page = post_zip(client, sitting, data, accept_language="de")
    assert (
        "Nicht gespeichert. Die Datei kjohnson.pdf konnte nicht aus der ZIP-Datei gelesen werden:"
        " sie ist beschädigt. Erstellen Sie die ZIP-Datei neu."
    ) in page
