"""A lecturer writes a three-question viva with a rubric and publishes it in at most 40 form
actions (issue #34; 80 before), in Chromium through the forms (``tests/browser/studio_task.py``;
``bench/studio_task.py`` prints the count per step). The published package is what was typed."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page

from publishing.models import PublishedVersion
from tests.browser.helpers import SignIn
from tests.browser.studio_task import QUESTIONS, TARGET_ACTIONS, write_and_publish_a_viva
from tests.factories import AuthorFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_three_question_viva_with_a_rubric_is_written_and_published_in_40_actions(
    page: Page, sign_in: SignIn
) -> None:
    author = AuthorFactory()
    sign_in(author)
    actions = write_and_publish_a_viva(page)
    assert actions.total <= TARGET_ACTIONS, dict(actions.counts)

    version = PublishedVersion.objects.get(draft__owner=author, is_preview=False)
    package = json.loads(version.canonical_json)
    questions = [n for n in package["nodes"] if n["kind"] == "question"]
    assert [q["prompt"]["opening"] for q in questions] == [q.opening for q in QUESTIONS]
    for node, question in zip(questions, QUESTIONS, strict=True):
        (target,) = node["evidenceTargets"]
        levels = target["rubricDescriptor"]["levels"]
        assert target["label"] == question.target
        assert [
            levels[k]["description"] for k in ("excellent", "satisfactory", "partial", "absent")
        ] == list(question.levels)
        assert levels["excellent"]["label"] == "Excellent"
    assert [n["kind"] for n in package["nodes"]][-1] == "end"
