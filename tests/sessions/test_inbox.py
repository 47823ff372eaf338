"""The durable inbox's storage rules (``sessions.inbox``): what a frame must carry, stored once
per id, pending until processed, oldest first."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.inbox import (
    InvalidInput,
    mark_processed,
    parse_frame,
    pending_inputs,
    store_input,
)
from sessions.models import CandidateInput
from tests.sessions.factories import ExamSessionFactory


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"kind": "answer", "id": "a1"}, "non-empty text"),
        ({"kind": "answer", "id": "a1", "text": "   "}, "non-empty text"),
        ({"kind": "answer", "id": "a b", "text": "x"}, "the answer's id"),
        ({"kind": "answer", "id": "x" * 101, "text": "x"}, "the answer's id"),
        ({"kind": "answer", "id": 7, "text": "x"}, "the answer's id"),
        ({"kind": "command", "command": "pause"}, "command object"),
        ({"kind": "command", "command": {"commandId": "<script>"}}, "commandId"),
        ({"kind": "correction", "id": "c1", "turnId": "turn-004"}, "non-empty text"),
        ({"kind": "correction", "id": "c1", "text": "x", "turnId": 4}, "names turns by id"),
        ({"kind": "correction", "id": "c1", "text": "x", "turnId": "turn 4"}, "names turns by id"),
        ({"kind": "correction", "id": "c1", "text": "x", "turnIds": "turn-4"}, "turnIds"),
        ({"kind": "correction", "id": "c1", "text": "x", "turnIds": ["t"] * 21}, "at most 20"),
        ({"kind": "correction", "id": "c1", "text": "x", "turnIds": ["t-1", None]}, "by id"),
        ({"kind": "correction", "id": "c 1", "text": "x"}, "the correction's id"),
        ({"kind": "sing"}, "candidate frames"),
    ],
)
def test_a_malformed_frame_is_refused_naming_what_is_wrong(
    frame: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_frame(frame)


@given(st.text(max_size=5000).filter(lambda t: t.strip()))
@settings(max_examples=50)
def test_any_non_blank_answer_is_kept_trimmed_and_bounded(text: str) -> None:
    item = parse_frame({"kind": "answer", "id": "a-1", "text": text})
    assert item.kind == "candidate_text" and item.input_id == "a-1"
    assert item.fields["text"] == text.strip()[:4000]


def test_a_correction_names_the_misheard_turns_or_none() -> None:
    item = parse_frame(
        {"kind": "correction", "id": "c-1", "turnId": "turn-004", "text": " It is greedy. "}
    )
    assert (item.kind, item.input_id) == ("candidate_correction", "c-1")
    assert item.fields == {"text": "It is greedy.", "turnIds": ["turn-004"]}
    unheard = parse_frame({"kind": "correction", "id": "c-2", "text": "It is greedy."})
    assert unheard.fields == {"text": "It is greedy."}
    pieces = parse_frame(
        {"kind": "correction", "id": "c-3", "turnIds": ["turn-004", "turn-005"], "text": "x"}
    )
    assert pieces.fields == {"text": "x", "turnIds": ["turn-004", "turn-005"]}


def test_a_command_is_identified_by_its_command_id_and_marked_as_the_candidates() -> None:
    item = parse_frame(
        {"kind": "command", "command": {"commandId": "c-1", "type": "pause", "source": "proctor"}}
    )
    assert item.input_id == "c-1" and item.fields["command"]["source"] == "candidate"


@pytest.mark.django_db
def test_an_input_is_stored_once_and_pending_until_processed_oldest_first() -> None:
    session = ExamSessionFactory()
    first = parse_frame({"kind": "answer", "id": "a-1", "text": "Dijkstra is greedy."})
    second = parse_frame({"kind": "candidate_ready", "id": "r-1"})
    assert store_input(session_id=session.pk, item=first).created
    assert store_input(session_id=session.pk, item=second).created
    again = store_input(session_id=session.pk, item=first)
    assert not again.created and not again.processed
    assert CandidateInput.objects.filter(session=session).count() == 2
    assert [i.input_id for i in pending_inputs(session_id=session.pk)] == ["a-1", "r-1"]

    assert mark_processed(session_id=session.pk, input_ids=["a-1", "a-1"]) == 1
    assert mark_processed(session_id=session.pk, input_ids=["a-1"]) == 0
    assert [i.input_id for i in pending_inputs(session_id=session.pk)] == ["r-1"]
    assert store_input(session_id=session.pk, item=first).processed
    # Another session's ids are its own.
    other = ExamSessionFactory()
    assert store_input(session_id=other.pk, item=first).created
