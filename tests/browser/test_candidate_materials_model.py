"""Vivas on the candidate's own work with a language model, in a real browser (issue #35).

A daphne of its own (bots inline) talks to a scripted examiner model: the OpenAI-compatible
peer of ``tests/support/openai_server.py`` on 127.0.0.1, chosen by the server's settings as a
deployment chooses a vLLM endpoint. The candidate uploads their report (a PDF made in the
test, read by pypdf) in the journey and takes the text exam in Chromium. The model phrases the
grounded question from the passage it was sent and reports each answer as a model would
(``report_observation`` with evidence in the candidate's words). The test checks:

* the drawn passage reached the model as quoted data: in its one labelled, delimited block
  (the runtime's ``passage_block``, a ``developer`` message of its own), never in the system
  instruction or the node's instructions;
* the question phrased from that passage is on the candidate's page;
* the candidate's answer to it is evidence tied to the passage (``passageId``);
* the marker's page shows the passage, the candidate's explanation and that evidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from ioa.compiler.material_block import MATERIAL_HEADER, passage_block
from ioa.runtime.texts import OPEN_NODE_INSTRUCTION
from marking import services as marking_services
from sessions.models import CandidateMaterial, SessionEvent
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    TEXT_MODE,
    Exam,
    answer_until_finished,
    examiner_turns,
    schedule_exam,
    through_the_briefing,
)
from tests.browser.helpers import remember_artifact_name, second_person_page
from tests.factories import PASSWORD
from tests.sessions.material_files import pdf_bytes
from tests.support.grounded_model import examiner, question_about
from tests.support.openai_server import OpenAICompatibleServer
from tests.support.processes import asgi_server_process

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPLANATION = (
    "In my report I explain that choice: the edge weights on the city graph are all positive, "
    "so the simpler algorithm is correct, and the limitation is that closed roads are ignored."
)
ANSWERS = {
    "warmup": ["I enjoyed the part of the course on graph algorithms the most."],
    "q-own-design": [EXPLANATION, "That is all I can say about my report."],
    "q-dijkstra": ["It settles the closest vertex and relaxes its edges, with a binary heap."],
    "scn-delivery-routes": ["Shops are vertices, roads weighted edges; Dijkstra from the depot."],
    "scn-network-latency": ["Offices are vertices, links weighted edges; Dijkstra from the HQ."],
    "wrapup": ["No, I have nothing to add. Thank you."],
}


@pytest.fixture
def model() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(default_reply=examiner) as server:
        yield server


@pytest.fixture
def model_server(
    django_db_setup: None, model: OpenAICompatibleServer, tmp_path: Path
) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "daphne.log"
    with asgi_server_process(
        log_path=str(log),
        DJANGO_ALLOW_ASYNC_UNSAFE="",
        VIVA_BOT_RUNNER="inline",
        VIVA_LLM_PROVIDER="openai_compatible",
        VIVA_LLM_BASE_URL=model.base_url,
        VIVA_LLM_API_KEY="scripted-key",
        VIVA_LLM_MODEL="scripted-test-model",
        VIVA_VOICE_WARMUP="false",
    ) as (address, _):
        yield f"http://{address}", log


@pytest.fixture
def candidate_page(browser: Browser, model_server: tuple[str, Path]) -> Iterator[Page]:
    context = browser.new_context(
        base_url=model_server[0], viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    remember_artifact_name(page, "test_candidate_materials_model")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield page
    finally:
        remember_artifact_name(page, None)
        context.close()
    assert errors == [], f"the browser reported problems: {errors}"


def upload_and_start(page: Page, exam: Exam, log: Path) -> None:
    """Invitation → identity → briefing → the report (a PDF) → text mode → the room."""
    through_the_briefing(page, exam)
    expect(page.get_by_role("heading", level=1, name="Upload your report")).to_be_visible()
    page.get_by_label("Your report", exact=True).set_input_files(
        {"name": "report.pdf", "mimeType": "application/pdf", "buffer": pdf_bytes()}
    )
    page.get_by_role("button", name="Upload and continue").click()
    expect(page.get_by_role("heading", level=1, name="How will you answer?")).to_be_visible()
    page.get_by_role("radio", name=TEXT_MODE).check()
    page.get_by_role("button", name="Go to the exam room").click()
    start = page.get_by_role("button", name="Start the exam")
    try:
        expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    except AssertionError as error:
        raise AssertionError(f"the room did not start; daphne said:\n{log.read_text()}") from error
    start.click()


@pytest.mark.timeout(240)
def test_a_model_examines_the_candidate_on_a_passage_of_their_report(
    candidate_page: Page,
    browser: Browser,
    model_server: tuple[str, Path],
    model: OpenAICompatibleServer,
) -> None:
    page = candidate_page
    exam = schedule_exam(package="cs201-own-report", title="CS201 with your report")
    upload_and_start(page, exam, model_server[1])
    answer_until_finished(page, exam.session, ANSWERS)

    material = CandidateMaterial.objects.get(session=exam.session)
    assert material.file_type == "pdf" and material.source == "candidate"
    drawn = SessionEvent.objects.get(session=exam.session, type="passage_drawn").payload
    assert drawn["outcome"] == "drawn" and drawn["materialId"] == material.material_id
    passage = drawn["text"]
    assert passage in " ".join(material.text.split())

    # The passage reached the model as quoted data, in its own labelled block only.
    block = passage_block(drawn["passageId"], passage, "report", drawn["cue"])
    grounded = [
        r
        for r in model.requests
        if any(
            passage in m.get("content", "") for m in r.messages if isinstance(m.get("content"), str)
        )
    ]
    assert grounded, "no request to the model carried the passage"
    for request in grounded:
        carrying = [m for m in request.messages if passage in str(m.get("content", ""))]
        assert [(m["role"], m["content"]) for m in carrying] == [("developer", block)]
        assert passage not in (request.system_instruction or "")
        task = next(m for m in request.messages_with_role("developer") if MATERIAL_HEADER in m)
        assert passage not in task
    opening = next(r for r in grounded if r.messages[-1].get("content") == OPEN_NODE_INSTRUCTION)
    contents = [m.get("content") for m in opening.messages]
    task_at = next(i for i, c in enumerate(contents) if MATERIAL_HEADER in str(c))
    assert task_at < contents.index(block) < len(contents) - 1

    # The question phrased from the passage is what the candidate read.
    question = question_about(passage)
    assert any(question in turn for turn in examiner_turns(page)), examiner_turns(page)

    # The candidate's explanation is evidence tied to the passage.
    answered = SessionEvent.objects.get(
        session=exam.session, type="transcript_final", payload__text=EXPLANATION
    )
    tied = [
        row.payload
        for row in SessionEvent.objects.filter(session=exam.session, type="evidence_signal")
        if row.payload.get("nodeId") == "q-own-design"
    ]
    assert tied and {s.get("passageId") for s in tied} == {drawn["passageId"]}
    assert {"tgt-explains-own-choice", "tgt-own-limitation"} <= {
        t for s in tied for t in s["targetIds"]
    }
    assert answered.seq < min(
        row.seq
        for row in SessionEvent.objects.filter(session=exam.session, type="evidence_signal")
        if row.payload.get("nodeId") == "q-own-design"
    )
    elsewhere = SessionEvent.objects.filter(session=exam.session, type="evidence_signal").exclude(
        payload__nodeId="q-own-design"
    )
    assert elsewhere.exists() and not any(row.payload.get("passageId") for row in elsewhere)

    # The marker's page: the passage, the explanation and the evidence tied to it.
    marking_services.session_mark(session_id=exam.session.pk)
    marker = exam.session.sitting.version.draft.owner
    with second_person_page(browser, model_server[0]) as marking:
        marking.goto("/accounts/login/")
        marking.get_by_label("Username").fill(marker.username)
        marking.get_by_label("Password").fill(PASSWORD)
        marking.get_by_role("button", name="Sign in").click()
        marking.wait_for_url(lambda url: "/accounts/login/" not in url)
        marking.goto(f"/marking/sessions/{exam.session.pk}/")
        section = marking.get_by_role("region", name="Questions on the candidate's own work")
        expect(section.locator("blockquote")).to_have_text(passage)
        expect(section).to_contain_text(drawn["passageId"])
        expect(section).to_contain_text(question)
        expect(section).to_contain_text(EXPLANATION)
        evidence = section.get_by_role("listitem")
        expect(evidence.filter(has_text="tgt-explains-own-choice")).to_contain_text(
            EXPLANATION[:60]
        )
        expect(evidence.filter(has_text="tgt-own-limitation")).to_have_count(1)
