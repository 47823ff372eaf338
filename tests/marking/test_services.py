"""Moderation: overrides keep history, rationales are required, locks, second marking, appeals;
re-marking reproduces the stored marks; the LLM panel against a scripted local server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from marking import selectors, services
from marking.models import (
    Appeal,
    MarkingAuditEntry,
    PanelRun,
    SessionMark,
    TargetDecision,
)
from marking.services import MarkingRefused
from tests.factories import AuthorFactory
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _mark(make_session: Any, profile: str = "mixed") -> SessionMark:
    return SessionMark.objects.get(session=make_session(profile))


def test_remarking_the_stored_log_reproduces_the_marks(make_session: Any) -> None:
    mark = _mark(make_session)
    assert selectors.verify_marks(mark)
    assert selectors.recompute(mark) == mark.result_json


def test_an_override_is_a_new_decision_with_author_and_rationale(make_session: Any) -> None:
    mark = _mark(make_session)
    moderator = AuthorFactory()
    before = mark.final_score
    decision = services.decision_override(
        mark=mark,
        target_key="tgt-negative-weights",
        level="satisfactory",
        rationale="Answered negative weights in the wrap-up.",
        user=moderator,
    )
    history = list(TargetDecision.objects.filter(mark=mark, target_key="tgt-negative-weights"))
    assert [(d.number, d.level, d.source) for d in history] == [
        (1, "absent", "marker"),
        (2, "satisfactory", "override"),
    ]
    assert decision.author == moderator and decision.supersedes == history[0]
    assert decision.rationale == "Answered negative weights in the wrap-up."
    mark.refresh_from_db()
    assert mark.final_score == pytest.approx(before + 0.5 * 0.2 * 2 / 3, abs=1e-6)
    assert mark.proposed_score == before
    entry = MarkingAuditEntry.objects.get(mark=mark, action="override")
    assert entry.actor == moderator and entry.details["from"] == "absent"


@pytest.mark.parametrize("rationale", ["", "   ", "ok"])
def test_an_override_needs_a_rationale(make_session: Any, rationale: str) -> None:
    mark = _mark(make_session)
    with pytest.raises(MarkingRefused) as refused:
        services.decision_override(
            mark=mark,
            target_key="tgt-complexity",
            level="excellent",
            rationale=rationale,
            user=AuthorFactory(),
        )
    assert refused.value.code == "rationale_required"
    assert TargetDecision.objects.filter(mark=mark, source="override").count() == 0


def test_lock_appeal_and_relock(make_session: Any) -> None:
    mark = _mark(make_session)
    marker = AuthorFactory()
    services.marks_lock(mark=mark, user=marker, note="Moderated.")
    assert mark.state == "locked" and mark.locked_by == marker
    with pytest.raises(MarkingRefused) as refused:
        services.decision_override(
            mark=mark,
            target_key="tgt-complexity",
            level="excellent",
            rationale="Should be higher.",
            user=marker,
        )
    assert refused.value.code == "locked"
    with pytest.raises(MarkingRefused):
        services.appeal_open(mark=mark, user=marker, reason="")
    appeal = services.appeal_open(mark=mark, user=marker, reason="Candidate disputes the STT.")
    assert mark.state == "appealed" and mark.cycle == 2 and appeal.open
    services.decision_override(
        mark=mark,
        target_key="tgt-complexity",
        level="excellent",
        rationale="The audio shows a clear answer.",
        user=marker,
    )
    with pytest.raises(MarkingRefused) as refused:
        services.marks_lock(mark=mark, user=marker, note="")  # the appeal needs an outcome
    assert refused.value.code == "rationale_required"
    services.marks_lock(mark=mark, user=marker, note="Upheld in part.")
    assert mark.state == "locked"
    assert not Appeal.objects.get(pk=appeal.pk).open
    assert [e.action for e in MarkingAuditEntry.objects.filter(mark=mark)] == [
        "marked",
        "panel_skipped",
        "locked",
        "appeal_opened",
        "override",
        "locked",
    ]


def test_second_marking_must_be_independent_and_agree_before_locking(make_session: Any) -> None:
    mark = _mark(make_session)
    first, second = AuthorFactory(), AuthorFactory()
    services.second_marking_set(mark=mark, required=True, user=first)
    services.decision_override(
        mark=mark,
        target_key="tgt-negative-weights",
        level="partial",
        rationale="Some mention of negative edges.",
        user=first,
    )
    with pytest.raises(MarkingRefused) as refused:
        services.marks_lock(mark=mark, user=first)
    assert refused.value.code == "second_marking_incomplete"
    levels = selectors.current_levels(mark)
    with pytest.raises(MarkingRefused) as refused:
        services.second_marks_record(mark=mark, user=first, marks=[])
    assert refused.value.code == "not_independent"
    services.second_marks_record(
        mark=mark,
        user=second,
        marks=[
            {"targetKey": k, "level": v.label} for k, v in levels.items() if k != "tgt-complexity"
        ]
        + [{"targetKey": "tgt-complexity", "level": "partial"}],
    )
    with pytest.raises(MarkingRefused) as refused:
        services.marks_lock(mark=mark, user=first)
    assert refused.value.code == "second_marking_disagrees"
    assert mark.state == "needs_review"
    services.decision_override(
        mark=mark,
        target_key="tgt-complexity",
        level="partial",
        rationale="Agreed with the second marker.",
        user=first,
    )
    services.marks_lock(mark=mark, user=first, note="Double marked.")
    assert mark.state == "locked"


def test_the_panel_runs_against_an_openai_compatible_server(
    make_session: Any, settings: Any
) -> None:
    mark = _mark(make_session)  # offline: the panel was skipped for this one
    assert PanelRun.objects.get(mark=mark).status == "skipped"
    levels = {t["key"]: t["level"] for t in mark.result_json["targets"]}

    def answer(shift: dict[str, str]) -> Any:
        def reply(request: RecordedRequest) -> Reply:
            assert request.body["model"] in {"panel-a", "panel-b"}
            assert "RUBRIC" in request.messages[1]["content"]
            judged = {**levels, **shift}
            return Reply.text(
                json.dumps(
                    {
                        "targets": [
                            {"key": k, "level": v, "rationale": "because", "turnIds": []}
                            for k, v in judged.items()
                        ]
                    }
                )
            )

        return reply

    with OpenAICompatibleServer() as server:
        server.script(
            answer({}),
            answer({"tgt-negative-weights": "excellent"}),  # round 1
            answer({}),
            answer({"tgt-negative-weights": "satisfactory"}),  # round 2
        )
        settings.VIVA_MARKING_PANEL_MODELS = "a=panel-a,b=panel-b"
        settings.VIVA_MARKING_PANEL_BASE_URL = server.base_url
        settings.VIVA_MARKING_PANEL_API_KEY = "test"
        fresh = _mark(make_session, "mixed")  # marking enqueues the panel (eager)
        assert len(server.requests) == 4 and not server.unscripted
        assert server.requests[0].headers.get("Authorization") == "Bearer test"
    run = PanelRun.objects.get(mark=fresh)
    assert run.status == "completed"
    assert run.routed == ["tgt-negative-weights"]
    assert run.alpha_round1 is not None and run.alpha_round2 is not None
    fresh.refresh_from_db()
    assert fresh.state == "needs_review"
    # idempotent: running again asks nobody
    assert services.panel_run(mark_id=fresh.pk).pk == run.pk


def test_an_unreachable_panel_fails_softly(make_session: Any, settings: Any) -> None:
    settings.VIVA_MARKING_PANEL_MODELS = "panel-a"
    settings.VIVA_MARKING_PANEL_BASE_URL = "http://127.0.0.1:9/v1"
    settings.VIVA_MARKING_PANEL_TIMEOUT = "2"
    mark = _mark(make_session, "strong")
    run = PanelRun.objects.get(mark=mark)
    assert run.status == "failed" and "No panel model answered" in run.notice
    assert "PanelCallError" in run.result_json["rounds"][0]["error"]
