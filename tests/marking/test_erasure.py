"""Erasure reaches the marks (``marking.erasure``): once a candidate's personal data is erased
their words are gone from every marking row too, the levels, scores and moderation stay, and
the marks still verify against the erased log. The session is a real one: the runtime
controller drives the exam and the marker marks it (``tests/marking/exams.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import TestCase

from marking.erasure import panel_result_pseudonymised
from marking.models import MarkingAuditEntry, PanelRun, SessionMark
from marking.selectors import verify_marks
from sessions.erasure import erase_candidate
from sessions.selectors import verify_log
from tests.factories import CandidateFactory
from tests.sessions.test_erasure import traces

pytestmark = pytest.mark.django_db

SAID = "I enjoyed the graph algorithms part"
"""The candidate's first answer (warm-up), in no package or rubric text."""

PANEL: dict[str, Any] = {
    "routed": ["tgt-a"],
    "rounds": [
        {
            "member": "m1",
            "round": 1,
            "error": "",
            "judgements": [
                {
                    "key": "tgt-a",
                    "level": "good",
                    "rationale": 'She said "I live at 12 Byron Road"',
                    "turnIds": ["turn-1"],
                },
                {"key": "tgt-b", "level": "absent", "rationale": "", "turnIds": []},
            ],
        }
    ],
}


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> None:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40


def levels(mark: SessionMark) -> list[tuple[str, str, int, float]]:
    return [(t["key"], t["level"], t["points"], t["score"]) for t in mark.result_json["targets"]]


def test_erasure_pseudonymises_the_marks_copies_and_keeps_the_marks(make_session: Any) -> None:
    ada = CandidateFactory(first_name="Ada", last_name="Lovelace")
    with TestCase.captureOnCommitCallbacks(execute=True):  # marked on commit
        session = make_session("strong", candidate=ada)
    mark = SessionMark.objects.get(session=session)
    before = (levels(mark), mark.result_json["scores"], mark.final_score, mark.state)
    quoted = "settles the unvisited vertex"  # an excerpt the marker's rationale quotes
    assert "marking.TargetDecision.rationale" in traces(quoted)
    assert traces(SAID) == ["exam_sessions.SessionEvent.payload", "marking.SessionMark.result_json"]

    PanelRun.objects.update_or_create(
        mark=mark, defaults={"status": "completed", "result_json": PANEL}
    )

    erase_candidate(candidate=ada, requested_by=None, reason="the candidate asked")

    assert traces(SAID, "Lovelace", "Byron") == []
    panel = PanelRun.objects.get(mark=mark).result_json
    assert panel["rounds"][0]["judgements"][0]["level"] == "good"
    mark.refresh_from_db()
    assert (levels(mark), mark.result_json["scores"], mark.final_score, mark.state) == before
    assert "marking.TargetDecision.rationale" not in traces(quoted)
    assert "marking.TargetDecision.evidence" not in traces(quoted)
    assert {row["text"] for row in mark.result_json["transcript"]} == {"[erased]"}
    assert verify_marks(mark)  # re-marking the erased log reproduces the stored result
    assert verify_log(session_id=session.pk) == []
    entry = MarkingAuditEntry.objects.get(mark=mark, action="personal_data_erased")
    assert entry.details["marksVerify"] is True
    assert entry.details["resultChecksum"] == mark.result_checksum
    assert entry.details["resultChecksumBefore"] != mark.result_checksum


def test_the_panel_members_rationales_are_pseudonymised_and_their_levels_kept() -> None:
    stored = PANEL
    erased = panel_result_pseudonymised(stored)
    judgements = erased["rounds"][0]["judgements"]
    assert [j["rationale"] for j in judgements] == ["[erased]", ""]
    assert [(j["key"], j["level"], j["turnIds"]) for j in judgements] == [
        ("tgt-a", "good", ["turn-1"]),
        ("tgt-b", "absent", []),
    ]
    assert erased["routed"] == ["tgt-a"] and "Byron" in str(stored)  # the input is not mutated


def test_when_re_marking_differs_the_copied_words_and_quoting_rationales_go_in_place(
    make_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback (re-marking the erased log no longer gives the stored levels): the stored
    result keeps its levels and scores, and its transcript, the targets' rationales and their
    rules' texts (which quote excerpts) become the marker (issue #32)."""
    import marking.erasure as erasure

    ada = CandidateFactory(first_name="Ada", last_name="Lovelace")
    with TestCase.captureOnCommitCallbacks(execute=True):
        session = make_session("strong", candidate=ada)
    mark = SessionMark.objects.get(session=session)
    before = (levels(mark), mark.result_json["scores"])
    quoted = "settles the unvisited vertex"
    assert quoted in str(mark.result_json["targets"])
    monkeypatch.setattr(erasure, "recompute", lambda m: {"targets": [], "scores": None})

    erase_candidate(candidate=ada, requested_by=None, reason="the candidate asked")

    mark.refresh_from_db()
    assert (levels(mark), mark.result_json["scores"]) == before
    assert quoted not in str(mark.result_json) and SAID not in str(mark.result_json)
    assert {t["rationale"] for t in mark.result_json["targets"]} == {"[erased]"}
    assert traces(SAID, "Lovelace") == []
    assert verify_log(session_id=session.pk) == []
