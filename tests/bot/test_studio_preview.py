"""The studio preview: the author's inputs replayed through the controller and the offline
examiner's judgement; the API refuses invalid drafts and inputs and stores nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from bot.studio_preview import PreviewInputError, parse_inputs, run_preview
from ioa.schema import load_package
from sessions.models import ExamSession
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

GREEDY = (
    "Dijkstra repeatedly settles the unvisited vertex with the smallest tentative distance "
    "and relaxes its outgoing edges."
)


def _run(*inputs: dict) -> dict:
    return run_preview(load_package(example_document()), parse_inputs(list(inputs)))


def test_the_opening_is_spoken_and_an_answer_moves_the_exam_on() -> None:
    start = _run()
    assert start["conversation"][0]["text"].startswith("Hello, and welcome.")
    assert start["state"]["nodeId"] == "warmup"
    after = _run(
        {"atMs": 5000, "text": "I liked graph algorithms."},
        {"atMs": 20000, "text": GREEDY},
    )
    assert after["state"]["nodeId"] == "q-dijkstra"
    assert after["state"]["covered"] == ["tgt-greedy-choice"]
    assert after["state"]["followUpsUsed"] == 1
    summaries = [d["summary"] for d in after["decisions"]]
    assert "warmup → q-dijkstra by e-warmup-q1 (natural_completion)" in summaries
    assert "evidence positive: tgt-greedy-choice" in summaries


def test_a_refused_command_and_timers_show_in_the_decisions() -> None:
    result = _run(
        {"atMs": 5000, "text": "I liked graph algorithms."},
        {"atMs": 6000, "command": "skip"},
        {"atMs": 60000, "text": GREEDY},
    )
    summaries = [d["summary"] for d in result["decisions"]]
    assert any(s.startswith("command skip refused") for s in summaries)
    # 15 s of silence at q-dijkstra start its silence recovery before the answer at 60 s.
    assert any(s.startswith("recovery silence") for s in summaries)


def test_the_replay_is_deterministic() -> None:
    inputs = ({"atMs": 5000, "text": "Graphs."}, {"atMs": 9000, "command": "repeat"})
    assert _run(*inputs) == _run(*inputs)


@pytest.mark.parametrize(
    "bad",
    [
        "nope",
        [{"atMs": -1, "text": "x"}],
        [{"atMs": 5, "text": "x"}, {"atMs": 4, "text": "y"}],
        [{"atMs": 5}],
        [{"atMs": 5, "text": "x", "command": "repeat"}],
        [{"atMs": 5, "text": ""}],
    ],
)
def test_malformed_inputs_are_named(bad: object) -> None:
    with pytest.raises(PreviewInputError):
        parse_inputs(bad)


@pytest.mark.django_db
def test_the_api_previews_the_saved_draft_and_stores_nothing() -> None:
    draft = DraftPackageFactory()
    client = Client()
    client.force_login(draft.owner)
    url = f"/api/v1/packages/{draft.id}/preview/"
    response = client.post(
        url, {"inputs": [{"atMs": 4000, "text": "Graphs."}]}, content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["state"]["nodeId"] == "q-dijkstra"
    assert ExamSession.objects.count() == 0
    bad = client.post(url, {"inputs": [{"atMs": 1}]}, content_type="application/json")
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_inputs"
    other = Client()
    other.force_login(AuthorFactory())
    assert other.post(url, {"inputs": []}, content_type="application/json").status_code == 404


@pytest.mark.django_db
def test_an_invalid_draft_cannot_be_previewed() -> None:
    document = example_document()
    document["initialNodeId"] = "nowhere"
    draft = DraftPackageFactory(document=document)
    client = Client()
    client.force_login(draft.owner)
    response = client.post(
        f"/api/v1/packages/{draft.id}/preview/", {"inputs": []}, content_type="application/json"
    )
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_package"
    page = client.get(f"/studio/{draft.id}/preview/").content.decode()
    assert "does not pass validation" in page
