"""The demo exam translated into German, end to end in a real browser (issue #21): invitation →
identity → briefing → text mode → the exam with the offline examiner → the completion page.

On every candidate page: ``<html lang="de">``, axe clean, and no English string: no text of the
English catalogue (the candidate-facing msgids of ``locale/*/django.po`` and ``djangojs.po``), no
English runtime line (``ioa.runtime.texts.ENGLISH``), no English line of the offline examiner,
and no common English word, in the visible text, the hidden text (dialogs, status regions) or
the accessible labels. The runtime speaks German; a German command is read by the classifier.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import polib
import pytest
from playwright.sync_api import Locator, Page, expect

from bot.offline_examiner import LINES
from config.messages import LOCALE_DIR
from ioa.runtime import texts
from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    Exam,
    bot_runner,
    check_step,
    current_node,
    schedule_exam,
)
from tests.browser.helpers import eventually
from tests.config.test_translations import CANDIDATE_SOURCES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANSWERS: dict[str, list[str]] = {
    "warmup": ["Am meisten Freude hat mir das Thema Graphalgorithmen gemacht."],
    "q-dijkstra": [
        "Der Algorithmus schließt wiederholt den unbesuchten Knoten mit der kleinsten vorläufigen "
        "Distanz ab und relaxiert dann dessen ausgehende Kanten.",
        "Mit einem binären Heap als Prioritätswarteschlange ist die Laufzeit O((V+E) log V); mit "
        "einem Array wird die Laufzeit O(V^2).",
        "Eine negative Kante kann eine bereits abgeschlossene Distanz ungültig machen, daher "
        "nehme ich bei negativen Kantengewichten Bellman-Ford als Alternative.",
        "Mehr weiß ich dazu nicht.",
    ],
    "scn-delivery-routes": [
        "Ich modelliere das Depot und jede Filiale als Knoten und jede Straße als gewichtete "
        "Kante mit der Fahrzeit als Gewicht, also als gewichteten Graphen.",
        "Die Fahrzeiten sind nichtnegativ, daher wähle ich einen Algorithmus für kürzeste Wege "
        "von einem Startknoten wie Dijkstra und begründe das mit den nichtnegativen Fahrzeiten.",
        "Das ist mein ganzer Ansatz.",
    ],
    "scn-network-latency": [
        "Ich modelliere jedes Büro als Knoten und jede Verbindung als gewichtete Kante mit der "
        "Latenz als Gewicht, also als gewichteten Graphen.",
        "Die Latenzen sind nichtnegativ, daher wähle ich einen Algorithmus für kürzeste Wege von "
        "einem Startknoten wie Dijkstra und begründe das mit den nichtnegativen Latenzen.",
        "Das ist mein ganzer Ansatz.",
    ],
    "wrapup": ["Ich möchte nichts ergänzen. Vielen Dank."],
}
REPEAT_COMMAND = "Können Sie die Frage wiederholen?"
PAUSE_COMMAND = "Können wir eine kurze Pause machen?"

ENGLISH_WORDS = re.compile(
    r"\b(the|you|your|and|is|are|of|to|with|this|exam|examiner|question|answer|please|"
    r"thank|time|part|send|end|resume|continue)\b",
    re.IGNORECASE,
)
"""Common English words: none is a German word, so one on a German page is a missed string."""


def english_catalogue() -> set[str]:
    """The English texts a candidate could be shown: catalogue msgids of candidate sources
    (split at placeholders and markup), the runtime's and the offline examiner's English lines.
    Texts whose German is the same (names such as "Studio") are left out."""
    found: set[str] = set()
    for domain in ("django", "djangojs"):
        po = polib.pofile(str(LOCALE_DIR / "de" / "LC_MESSAGES" / f"{domain}.po"))
        for entry in po:
            if not any(path in CANDIDATE_SOURCES for path, _ in entry.occurrences):
                continue
            if entry.msgstr == entry.msgid:
                continue
            for msgid in filter(None, (entry.msgid, entry.msgid_plural)):
                for fragment in re.split(r"%\(\w+\)[sd]|<[^>]*>|%%", msgid):
                    if len(fragment.strip(" .,:;()…")) >= 4:
                        found.add(fragment.strip())
    found.update(texts.ENGLISH.spoken().values())
    found.update(str(line) for line in dataclasses.asdict(LINES["en"]).values())
    return found


ENGLISH = english_catalogue()

PAGE_TEXT = """() => {
  const out = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const tag = node.parentElement ? node.parentElement.tagName : "";
    const text = node.textContent.trim();
    if (tag !== "SCRIPT" && tag !== "STYLE" && text) out.push(text);
  }
  for (const el of document.querySelectorAll("[aria-label],[title],[placeholder],[alt]")) {
    for (const name of ["aria-label", "title", "placeholder", "alt"]) {
      if (el.getAttribute(name)) out.push(el.getAttribute(name));
    }
  }
  return out;
}"""


def english_on(page: Page) -> list[str]:
    """English texts on the page (visible or hidden, labels included)."""
    lines: list[str] = page.evaluate(PAGE_TEXT)
    found = []
    for line in lines:
        if line in {"Viva", "Dr. Lee"}:
            continue
        hits = [text for text in ENGLISH if re.search(rf"(?<!\w){re.escape(text)}(?!\w)", line)]
        words = ENGLISH_WORDS.findall(line)
        if hits or words:
            found.append(f"{line!r}: {hits or words}")
    return found


def german_page(page: Page, name: str) -> None:
    """The step is German: lang, no English, axe clean (and a screenshot)."""
    assert page.evaluate("() => document.documentElement.lang") == "de", name
    assert english_on(page) == [], name
    check_step(page, f"de-{name}")


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


@pytest.fixture
def exam() -> Exam:
    return schedule_exam(package="cs201-graph-algorithms.de", title="CS201 Mündliche Prüfungen")


def transcript(page: Page) -> Locator:
    return page.get_by_role("list", name="Bisheriges Protokoll").get_by_role("listitem")


def examiner_turns(page: Page) -> list[str]:
    return [
        t
        for t in transcript(page).all_inner_texts()
        if not t.startswith("Sie") and not t.endswith("…")
    ]


def spoken_text(page: Page) -> str:
    return " ".join(transcript(page).all_inner_texts())


def finished(page: Page) -> bool:
    return page.get_by_role("link", name="Weiter zur Abschlussseite").is_visible()


def wait_for_examiner(page: Page, before: int) -> None:
    assert eventually(
        lambda: len(examiner_turns(page)) > before or finished(page), EXAMINER_TIMEOUT
    ), "the examiner did not answer"
    page.wait_for_timeout(400)


def answer(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Ihre Antwort eingeben").fill(text)
    page.get_by_role("button", name="Antwort senden").click()


def test_the_demo_exam_in_german(page: Page, exam: Exam) -> None:
    page.goto(exam.invitation_path)
    expect(page.get_by_role("heading", name="Ihre Prüfungseinladung")).to_be_visible()
    german_page(page, "01-invitation")
    page.get_by_role("button", name="Weiter zu meiner Prüfung").click()

    expect(page.get_by_role("heading", level=1, name="Identität und Einwilligung")).to_be_visible()
    german_page(page, "02-identity")
    page.get_by_role(
        "checkbox", name="Ich bin Ada Lovelace und lege diese Prüfung selbst ab."
    ).check()
    page.get_by_role("checkbox", name=re.compile("Ich verstehe, was aufgezeichnet")).check()
    page.get_by_role("button", name="Weiter zur Einweisung").click()

    expect(page.get_by_role("heading", level=1, name="Einweisung")).to_be_visible()
    expect(page.get_by_text("Die Prüfung hat 4 Teile.")).to_be_visible()
    expect(page.get_by_text("Sie dauert höchstens")).to_be_visible()
    german_page(page, "03-briefing")
    page.get_by_role("button", name="Ich habe die Einweisung gelesen").click()

    expect(page.get_by_role("heading", level=1, name="Wie möchten Sie antworten?")).to_be_visible()
    page.get_by_role("radio", name="Text: Antworten tippen").check()
    german_page(page, "04-answer-mode")
    page.get_by_role("button", name="Zum Prüfungsraum").click()

    expect(page.get_by_role("heading", level=1, name="Prüfungsraum")).to_be_visible()
    start = page.get_by_role("button", name="Prüfung beginnen")
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    german_page(page, "05-waiting")
    start.click()
    expect(page.get_by_role("heading", name="Ihre Antwort")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    expect(page.get_by_text("Teil 1 von 4: Einstieg", exact=True)).to_be_visible()
    wait_for_examiner(page, 0)
    german_page(page, "06-room")

    used: dict[str, int] = {}
    repeated = False
    for _ in range(30):
        if finished(page):
            break
        node = current_node(exam.session) or "warmup"
        before = len(examiner_turns(page))
        if node == "q-dijkstra" and used.get(node) == 1 and not repeated:
            last_question = examiner_turns(page)[-1]
            answer(page, REPEAT_COMMAND)
            wait_for_examiner(page, before)
            repeated = True
            # The runtime read the German request (classifier or the examiner's report, confirmed
            # by the classifier) and the question was said again.
            assert eventually(
                lambda: SessionEvent.objects.filter(
                    session=exam.session,
                    type="candidate_command_received",
                    payload__command="repeat",
                ).exists(),
                10,
            )
            assert last_question.split("\n")[-1] in examiner_turns(page)[-1]
            german_page(page, "07-repeat")
            # A German request for a pause, read by the classifier: the runtime's own lines.
            answer(page, PAUSE_COMMAND)
            assert eventually(lambda: texts.GERMAN.paused in spoken_text(page), EXAMINER_TIMEOUT)
            german_page(page, "08-paused")
            page.get_by_role("button", name="Prüfung fortsetzen").first.click()
            assert eventually(lambda: texts.GERMAN.resumed in spoken_text(page), EXAMINER_TIMEOUT)
            wait_for_examiner(page, len(examiner_turns(page)))
            continue
        options = ANSWERS.get(node, ["Das ist meine Antwort."])
        text = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        answer(page, text)
        wait_for_examiner(page, before)
    assert finished(page), "the exam did not finish"
    assert repeated
    spoken = " ".join(examiner_turns(page))
    english_lines = set(texts.ENGLISH.spoken().values())
    assert not [line for line in english_lines if line in spoken]
    german_page(page, "09-finished")

    page.get_by_role("link", name="Weiter zur Abschlussseite").click()
    expect(
        page.get_by_role("heading", level=1, name="Ihre Prüfung ist abgeschlossen")
    ).to_be_visible()
    german_page(page, "10-done")
