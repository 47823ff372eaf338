"""A lecturer's task in the studio, counted (issue #34): "write a three-question viva with a
rubric and publish it", done in Chromium through the forms as a lecturer does it, with every
form action counted (a click, a field filled, a choice made; reading and waiting are not
actions). Shared by ``tests/browser/test_studio_task.py`` (the count stays within the target)
and ``bench/studio_task.py`` (prints the count per step).

The lecturer starts from an empty package, adds three questions (each with its title, the
examiner's instructions, the question itself, one evidence target and its four marking levels),
an end, and publishes after the dry run. Ids, kinds and transitions are left to the studio's
defaults, as a lecturer who does not know them would.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from playwright.sync_api import Locator, Page, expect

TARGET_ACTIONS = 40
"""The issue's target: at most this many form actions for the whole task (80 before)."""

TITLE = "Hash tables viva"


@dataclass(frozen=True)
class Question:
    title: str
    instructions: str
    opening: str
    target: str
    levels: tuple[str, str, str, str]  # excellent, satisfactory, partial, absent


QUESTIONS = (
    Question(
        "Collisions",
        "Ask how a hash table deals with two keys that hash to the same slot.",
        "How does a hash table deal with two keys that collide?",
        "Explains chaining or open addressing",
        (
            "Explains chaining and open addressing and when each is preferable.",
            "Explains one method correctly.",
            "Knows collisions happen but not how they are resolved.",
            "No account of collisions.",
        ),
    ),
    Question(
        "Load factor",
        "Ask what the load factor is and why it matters for lookups.",
        "What is the load factor of a hash table, and why does it matter?",
        "Relates the load factor to lookup cost",
        (
            "Defines it as entries over slots and links it to expected probe length.",
            "Defines it and says a high one slows lookups.",
            "Knows the term but not what it measures.",
            "Does not know the load factor.",
        ),
    ),
    Question(
        "Resizing",
        "Ask what happens when the table gets too full and what it costs.",
        "What does a hash table do when it gets too full, and what does that cost?",
        "Explains rehashing and its amortised cost",
        (
            "Describes doubling and rehashing and why the cost is amortised constant.",
            "Describes rehashing into a larger table.",
            "Says the table grows, without how.",
            "No idea of resizing.",
        ),
    ),
)


@dataclass
class CountedActions:
    """The page's form actions, counted per step of the task."""

    page: Page
    step: str = "start"
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def click(self, target: Locator) -> None:
        target.click()
        self.counts[self.step] += 1

    def fill(self, target: Locator, text: str) -> None:
        target.fill(text)
        self.counts[self.step] += 1

    def choose(self, target: Locator, label: str) -> None:
        target.select_option(label=label)
        self.counts[self.step] += 1


def form(page: Page) -> Locator:
    return page.get_by_role("region", name="Edit", exact=False)


def write_and_publish_a_viva(page: Page) -> CountedActions:
    """The whole task from the studio's list page (signed in as an author); returns the counts.
    Ends on the publish page with "Published as version 1." shown."""
    act = CountedActions(page)
    page.goto("/studio/")
    act.step = "create the package"
    act.fill(page.get_by_label("Or start an empty package titled"), TITLE)
    act.click(page.get_by_role("button", name="Create empty package"))
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    for number, question in enumerate(QUESTIONS, start=1):
        act.step = f"question {number}"
        add_question(act, question)
    act.step = "the end"
    act.choose(page.get_by_label("New node of kind"), "End")
    act.click(page.get_by_role("button", name="Add node"))
    expect(page.locator("#flow-status")).to_contain_text("added")
    expect(page.get_by_role("complementary", name="Validation report")).to_contain_text(
        "Passes.", timeout=15_000
    )
    act.step = "dry run and publish"
    act.click(page.get_by_role("link", name="Dry run and publish…"))
    expect(page.get_by_role("heading", level=1, name=f"Publish {TITLE}")).to_be_visible()
    act.click(page.get_by_role("button", name="Publish revision", exact=False))
    expect(page.get_by_text("Published as version 1.")).to_be_visible(timeout=30_000)
    return act


def add_question(act: CountedActions, question: Question) -> None:
    """One question: added from the flow (kind and id left as they are), then its form."""
    page = act.page
    act.click(page.get_by_role("button", name="Add node"))
    expect(page.locator("#flow-status")).to_contain_text("added")
    edit = form(page)
    act.fill(edit.get_by_label("Title", exact=True), question.title)
    act.fill(
        edit.get_by_label("Instructions for the examiner (required)", exact=True),
        question.instructions,
    )
    act.fill(edit.get_by_label("Opening", exact=True), question.opening)
    act.click(edit.get_by_role("button", name="Add evidence target"))
    target = edit.get_by_role("group", name="Evidence target 1:", exact=False)
    act.fill(target.get_by_label("Label (required)", exact=True), question.target)
    act.click(target.get_by_role("button", name="Add marking levels"))
    for level, text in zip(
        ("Excellent", "Satisfactory", "Partial", "Absent"), question.levels, strict=True
    ):
        group = target.get_by_role("group", name=level, exact=False)
        act.fill(group.get_by_label("Description (required)", exact=True), text)
