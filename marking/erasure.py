"""Marking's part of a personal-data erasure (docs/privacy.md), run inside the erasure's
transaction (``sessions.signals.personal_data_erased``).

The stored result (``SessionMark.result_json``) copies the candidate's words (the transcript,
proctors' reasons). It becomes the marker's result recomputed from the now erased log, which
carries the pseudonyms, when that gives the same levels, points and scores (the marker never
reads the words, so it does); otherwise the copied words are pseudonymised in place. Either way
the levels, scores, moderation and locks stay, ``result_checksum`` follows the new document,
and an audit entry records the erasure with both checksums and whether re-marking the erased
log still reproduces the stored result. The marker's own target decisions take the erased
result's rationale and evidence (they quote the candidate's excerpts); appeals' reasons and the
post-marking irregularity reports (a proctor's words) and the marking panel members'
rationales are pseudonymised. Moderators' override rationales are staff's words and stay.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from ioa.canonical import checksum
from ioa.events.personal import ERASED_TEXT
from marking.models import (
    Appeal,
    MarkingAuditEntry,
    PanelRun,
    PostMarkingIrregularity,
    SessionMark,
    TargetDecision,
)
from marking.selectors import recompute, verify_marks
from sessions.models import PersonalDataErasure


def _marks_of(result: Mapping[str, Any]) -> tuple[Any, ...]:
    targets = tuple((t["key"], t["level"], t["points"]) for t in result.get("targets", []))
    return targets, result.get("scores")


def _pseudonymised(result: Mapping[str, Any]) -> dict[str, Any]:
    """The stored result with the words it copied from the log replaced."""
    document = dict(result)
    document["transcript"] = [{**row, "text": ERASED_TEXT} for row in result.get("transcript", [])]
    if "irregularities" in result:
        document["irregularities"] = [
            {**item, "reason": ERASED_TEXT if item.get("reason") else item.get("reason")}
            for item in result["irregularities"]
        ]
    return document


def panel_result_pseudonymised(result: Mapping[str, Any]) -> dict[str, Any]:
    """The marking panel's stored result with its members' rationales (their own words about
    the candidate's answers, which may quote them) replaced; levels, agreements and the turns
    each judgement cites stay."""
    rounds = [
        {
            **item,
            "judgements": [
                {**j, "rationale": ERASED_TEXT if j.get("rationale") else j.get("rationale")}
                for j in item.get("judgements", [])
            ],
        }
        for item in result.get("rounds", [])
    ]
    return {**result, "rounds": rounds} if "rounds" in result else dict(result)


def erased_result(mark: SessionMark) -> dict[str, Any]:
    """What ``mark.result_json`` becomes once the session's log is erased."""
    recomputed = recompute(mark)
    if _marks_of(recomputed) == _marks_of(mark.result_json):
        return recomputed
    return _pseudonymised(mark.result_json)


def _marker_decisions_follow(mark: SessionMark, document: Mapping[str, Any]) -> None:
    """The marker's own decisions (number 1) take the rationale and evidence of the erased
    result, which quote the pseudonyms instead of the candidate's words (the erasure path is
    the only update of these append-only rows)."""
    targets = {t["key"]: t for t in document.get("targets", [])}
    rows = TargetDecision._base_manager.filter(mark=mark, number=1, source="marker")
    for row in rows:
        item = targets.get(row.target_key)
        if item is None or item["level"] != row.level:
            continue
        TargetDecision._base_manager.filter(pk=row.pk).update(
            rationale=item["rationale"],
            evidence={k: item[k] for k in ("rules", "signals", "turnIds", "review")},
        )


def on_personal_data_erased(
    *, session_id: uuid.UUID, erasure: PersonalDataErasure, **_: object
) -> None:
    """Pseudonymise the session's marking records (see the module docstring)."""
    mark = SessionMark.objects.select_for_update().filter(session_id=session_id).first()
    if mark is None:
        return
    before = mark.result_checksum
    document = erased_result(mark)
    mark.result_json, mark.result_checksum = document, checksum(document)
    SessionMark.objects.filter(pk=mark.pk).update(
        result_json=document, result_checksum=mark.result_checksum, updated_at=timezone.now()
    )
    _marker_decisions_follow(mark, document)
    Appeal.objects.filter(mark=mark).exclude(reason="").update(reason=ERASED_TEXT)
    for panel in PanelRun.objects.filter(mark=mark).exclude(result_json=None):
        PanelRun.objects.filter(pk=panel.pk).update(
            result_json=panel_result_pseudonymised(panel.result_json or {})
        )
    for row in PostMarkingIrregularity._base_manager.filter(mark=mark):  # the erasure path only
        report = {**row.report, "reason": ERASED_TEXT} if row.report.get("reason") else row.report
        PostMarkingIrregularity._base_manager.filter(pk=row.pk).update(
            reason=ERASED_TEXT if row.reason else "", report=report
        )
    MarkingAuditEntry.objects.create(
        mark=mark,
        action=MarkingAuditEntry.Action.PERSONAL_DATA_ERASED,
        details={
            "erasure": str(erasure.pk),
            "resultChecksumBefore": before,
            "resultChecksum": mark.result_checksum,
            "marksVerify": verify_marks(mark),
        },
    )
