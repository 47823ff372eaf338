"""The report upload step in German, in a real browser (issue #35).

The German CS201 exam with a question on the candidate's own report (the German example
package with the report question of ``examples/cs201-own-report.json``, in German, after the
warm-up): a German candidate walks invitation → identity → briefing and reaches "Upload your
report". On that step, before an upload, after a refused file (its reason) and after a stored
one: ``<html lang="de">``, no English string (the checks of ``test_exam_room_german.py``: the
candidate-facing catalogue, runtime lines and common English words, visible or hidden, and the
accessible names; the header's role badge), axe-core clean. Elements are found by role, label
and accessible name, in German."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from accounts.services import invitation_create
from publishing.services import version_publish
from sessions.models import CandidateMaterial, ExamSession, Sitting
from tests.browser.exam_journey import Exam
from tests.browser.test_exam_room_german import german_page
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document
from tests.sessions.material_files import pdf_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWN_REPORT: dict[str, Any] = {
    "nodeId": "q-own-design",
    "kind": "question",
    "title": "Ihr Projektbericht",
    "promptSeed": "Bitten Sie den Prüfling, die Entscheidung, das Ergebnis oder die "
    "Einschränkung in der zitierten Passage seines eigenen Projektberichts zu begründen, und "
    "fragen Sie dann nach der wichtigsten Einschränkung oder was er anders machen würde.",
    "grounding": {
        "material": "report",
        "pick": "any",
        "maxPassageChars": 400,
        "fallbackQuestion": "Erzählen Sie mir von einer Entwurfsentscheidung in Ihrem Projekt "
        "und warum Sie sie getroffen haben.",
    },
    "evidenceTargets": [
        {
            "id": "tgt-explains-own-choice",
            "label": "Begründet eine Entscheidung der eigenen Arbeit",
            "description": "Der Prüfling begründet die Entscheidung in seinem Bericht: nennt die "
            "erwogene Alternative und den Grund für seinen Ansatz.",
            "weight": 0.6,
            "dimension": "knowledge_understanding",
            "markingCriteria": ["LO5"],
        },
        {
            "id": "tgt-own-limitation",
            "label": "Nennt eine Einschränkung des eigenen Ansatzes",
            "description": "Der Prüfling nennt eine Einschränkung seines Ansatzes und was er "
            "ändern würde.",
            "weight": 0.4,
            "dimension": "applied_problem_solving",
            "markingCriteria": ["LO5"],
        },
    ],
    "followUpPolicy": {"maxFollowUps": 2, "maxFollowUpDurationSec": 90, "followUpStyle": "probing"},
    "timeBudget": {"maxDurationSec": 300},
    "forbiddenActions": ["reveal_rubric", "confirm_correctness"],
    "candidateCommands": {
        "allowed": ["repeat", "clarification", "request_rephrase", "pause", "raise_hand"]
    },
    "transitions": [
        {
            "id": "e-own-done",
            "targetNodeId": "q-dijkstra",
            "condition": {
                "type": "evidence_satisfied",
                "targetIds": ["tgt-explains-own-choice", "tgt-own-limitation"],
            },
        },
        {
            "id": "e-own-turns",
            "targetNodeId": "q-dijkstra",
            "condition": {"type": "turn_count_reached", "count": 4},
        },
        {"id": "e-own-always", "targetNodeId": "q-dijkstra", "condition": {"type": "always"}},
    ],
}
BERICHT = (
    "Projektbericht Routenplaner.",
    "Wir haben uns für Dijkstra statt Bellman-Ford entschieden, weil alle Kantengewichte "
    "positiv sind.",
    "Leider funktioniert der Planer nicht mit Straßen, die tagsüber gesperrt werden.",
)


def german_report_document() -> dict[str, Any]:
    """The German CS201 package with the report question after the warm-up."""
    document = copy.deepcopy(example_document("cs201-graph-algorithms.de"))
    document["metadata"]["learningOutcomes"].append(
        {
            "id": "LO5",
            "text": "Die Entwurfsentscheidungen des eigenen Projekts begründen und seine "
            "Grenzen erkennen.",
        }
    )
    warmup = next(n for n in document["nodes"] if n["nodeId"] == "warmup")
    warmup["transitions"] = [
        {"id": "e-warmup-own", "targetNodeId": "q-own-design", "condition": {"type": "always"}}
    ]
    at = document["nodes"].index(warmup) + 1
    document["nodes"].insert(at, copy.deepcopy(OWN_REPORT))
    return document


def german_exam() -> Exam:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=german_report_document())
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(
        version=version, title="CS201 Mündliche Prüfungen", created_by=author
    )
    candidate = CandidateFactory(display_name="Ada Lovelace")
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    invite = invitation_create(
        candidate=candidate, created_by=author, next_path=f"/exam/{session.pk}/"
    )
    return Exam(session=session, invitation_path=invite.path)


def test_the_upload_step_in_german(page: Page) -> None:
    exam = german_exam()
    page.goto(exam.invitation_path)
    page.get_by_role("button", name="Weiter zu meiner Prüfung").click()
    page.get_by_role(
        "checkbox", name="Ich bin Ada Lovelace und lege diese Prüfung selbst ab."
    ).check()
    page.get_by_role("checkbox", name=re.compile("Ich verstehe, was aufgezeichnet")).check()
    page.get_by_role("button", name="Weiter zur Einweisung").click()
    expect(page.get_by_role("heading", level=1, name="Einweisung")).to_be_visible()
    page.get_by_role("button", name="Ich habe die Einweisung gelesen").click()

    heading = page.get_by_role("heading", level=1, name="Laden Sie Ihren Bericht hoch")
    expect(heading).to_be_visible()
    expect(page.get_by_text("Höchstens 10 MB.", exact=False)).to_be_visible()
    # The header's role badge too (it said "Candidate" on German pages).
    expect(page.locator(".role-badge")).to_have_text("Kandidat")
    german_page(page, "material-upload")

    page.get_by_label("Ihr Bericht", exact=True).set_input_files(
        {"name": "bericht.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4 kaputt"}
    )
    page.get_by_role("button", name="Hochladen und weiter").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Die Datei konnte nicht verwendet werden")
    expect(alert).to_contain_text("Die PDF-Datei ist beschädigt und kann nicht gelesen werden.")
    german_page(page, "material-refused")
    assert not CandidateMaterial.objects.filter(session=exam.session).exists()

    page.get_by_label("Ihr Bericht", exact=True).set_input_files(
        {"name": "bericht.pdf", "mimeType": "application/pdf", "buffer": pdf_bytes(BERICHT)}
    )
    page.get_by_role("button", name="Hochladen und weiter").click()
    expect(page.get_by_role("heading", level=1, name="Wie möchten Sie antworten?")).to_be_visible()
    material = CandidateMaterial.objects.get(session=exam.session)
    assert material.file_type == "pdf" and "Dijkstra statt Bellman-Ford" in material.text

    page.go_back()
    page.reload()
    expect(heading).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="bericht.pdf")).to_contain_text(
        "Sie können ihn bis zum Beginn der Prüfung ersetzen."
    )
    expect(page.get_by_role("button", name="Ersetzen und weiter")).to_be_visible()
    expect(page.get_by_role("link", name="Mit der hochgeladenen Datei weiter")).to_be_visible()
    german_page(page, "material-stored")
