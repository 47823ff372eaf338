"""Marking's part of a personal-data erasure (docs/privacy.md), run inside the erasure's
transaction (``sessions.signals.personal_data_erased``).

The stored result (``SessionMark.result_json``) copies the candidate's words (the transcript,
proctors' reasons). It becomes the marker's result recomputed from the now erased log, which
carries the pseudonyms, when that gives the same levels, points and scores (the marker never
reads the words, so it does); otherwise the copied words, the targets' rationales and their
rules' texts (they quote excerpts) are pseudonymised in place. Either way the levels, scores,
moderation and locks stay, ``result_checksum`` follows the new document, and an audit entry
records the erasure with both checksums and whether re-marking the erased log still reproduces
the stored result.

Every free text written about the candidate's answers becomes the marker (issue #32): the
marker's own decisions take the erased result's rationale and evidence; moderators' overrides,
second markers' rationales, appeals (the candidate's reason and the outcome), the marking panel
members' rationales, post-marking irregularity reports (a proctor's words), a failed marking
request's error, and the audit log's reasons (an appeal opened, a lock's note on its outcome, an
override) with any string of an entry's details that quotes one of these texts. Who acted, when,
which level and score stay: the marks remain accountable, the words are gone. The only text kept
is the machine's own notice (the panel skipped offline).
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
    MarkingRequest,
    PanelRun,
    PostMarkingIrregularity,
    SecondMark,
    SessionMark,
    TargetDecision,
)
from marking.selectors import recompute, verify_marks
from marking.services import OFFLINE_NOTICE
from sessions.models import PersonalDataErasure


def _marks_of(result: Mapping[str, Any]) -> tuple[Any, ...]:
    targets = tuple((t["key"], t["level"], t["points"]) for t in result.get("targets", []))
    return targets, result.get("scores")


def _pseudonymised(result: Mapping[str, Any]) -> dict[str, Any]:
    """The stored result with the words it copied from the log replaced."""
    document = dict(result)
    document["transcript"] = [{**row, "text": ERASED_TEXT} for row in result.get("transcript", [])]
    document["targets"] = [
        {**_rules_erased(item), "rationale": _erased(str(item.get("rationale", "")))}
        for item in result.get("targets", [])
    ]
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


def _decisions_follow(mark: SessionMark, document: Mapping[str, Any]) -> None:
    """The marker's own decisions (number 1) take the rationale and evidence of the erased
    result, which quote the pseudonyms instead of the candidate's words; a marker's decision the
    erased result no longer matches, and every moderator's override, keep their levels with the
    rationale replaced (the erasure path is the only update of these append-only rows)."""
    targets = {t["key"]: t for t in document.get("targets", [])}
    for row in TargetDecision._base_manager.filter(mark=mark):
        item = targets.get(row.target_key)
        own = row.source == TargetDecision.Source.MARKER and row.number == 1
        if own and item is not None and item["level"] == row.level:
            TargetDecision._base_manager.filter(pk=row.pk).update(
                rationale=item["rationale"],
                evidence={k: item[k] for k in ("rules", "signals", "turnIds", "review")},
            )
        else:
            TargetDecision._base_manager.filter(pk=row.pk).update(
                rationale=_erased(row.rationale), evidence=_rules_erased(row.evidence)
            )


def _erased(text: str) -> str:
    """A free text replaced by the marker (an empty one stays empty)."""
    return ERASED_TEXT if text else text


def _rules_erased(evidence: Mapping[str, Any]) -> dict[str, Any]:
    """A decision's evidence with the rules' texts (they quote excerpts) replaced."""
    if not isinstance(evidence, Mapping):
        return {}
    rules = evidence.get("rules")
    if not isinstance(rules, list):
        return dict(evidence)
    return {
        **evidence,
        "rules": [{**r, "text": ERASED_TEXT} if isinstance(r, Mapping) else r for r in rules],
    }


def _scrubbed(value: Any, words: frozenset[str]) -> Any:
    """``value`` (JSON) with every string holding one of ``words`` replaced by the marker."""
    if isinstance(value, str):
        return ERASED_TEXT if any(word in value for word in words) else value
    if isinstance(value, list):
        return [_scrubbed(item, words) for item in value]
    if isinstance(value, Mapping):
        return {key: _scrubbed(item, words) for key, item in value.items()}
    return value


def _free_texts(mark: SessionMark) -> frozenset[str]:
    """Every free text written about the candidate's marks (before they are replaced): what an
    audit entry's details could quote."""
    texts = [row.get("text", "") for row in mark.result_json.get("transcript", [])]
    texts += Appeal.objects.filter(mark=mark).values_list("reason", flat=True)
    texts += Appeal.objects.filter(mark=mark).values_list("outcome", flat=True)
    texts += TargetDecision._base_manager.filter(mark=mark).values_list("rationale", flat=True)
    texts += SecondMark._base_manager.filter(mark=mark).values_list("rationale", flat=True)
    texts += MarkingAuditEntry._base_manager.filter(mark=mark).values_list("reason", flat=True)
    return frozenset(t for t in texts if isinstance(t, str) and len(t) >= 8 and t != ERASED_TEXT)


def _audit_erased(mark: SessionMark, words: frozenset[str]) -> None:
    """The audit log keeps who did what and when; the reasons people gave (an appeal's text, a
    lock's note on the appeal's outcome, an override's rationale, a proctor's report) become the
    marker, and any string of the details quoting a free text of these marks too. The machine's
    own notice (the panel skipped offline) stays."""
    for row in MarkingAuditEntry._base_manager.filter(mark=mark):
        reason = row.reason if row.reason == OFFLINE_NOTICE else _erased(row.reason)
        details = _scrubbed(row.details, words)
        if (reason, details) != (row.reason, row.details):
            MarkingAuditEntry._base_manager.filter(pk=row.pk).update(reason=reason, details=details)


def _people_erased(mark: SessionMark) -> None:
    """What people wrote about the candidate's answers: appeals (the candidate's reason, the
    moderator's outcome), second markers' rationales, the panel members' rationales, the
    post-marking irregularity reports (a proctor's words)."""
    for appeal in Appeal.objects.filter(mark=mark):
        Appeal.objects.filter(pk=appeal.pk).update(
            reason=_erased(appeal.reason), outcome=_erased(appeal.outcome)
        )
    SecondMark._base_manager.filter(mark=mark).exclude(rationale="").update(rationale=ERASED_TEXT)
    for panel in PanelRun.objects.filter(mark=mark).exclude(result_json__isnull=True):
        PanelRun.objects.filter(pk=panel.pk).update(
            result_json=panel_result_pseudonymised(panel.result_json or {})
        )
    for row in PostMarkingIrregularity._base_manager.filter(mark=mark):  # the erasure path only
        report = {**row.report, "reason": ERASED_TEXT} if row.report.get("reason") else row.report
        PostMarkingIrregularity._base_manager.filter(pk=row.pk).update(
            reason=_erased(row.reason), report=report
        )


def on_personal_data_erased(
    *, session_id: uuid.UUID, erasure: PersonalDataErasure, **_: object
) -> None:
    """Pseudonymise the session's marking records (see the module docstring)."""
    MarkingRequest.objects.filter(session_id=session_id).exclude(error="").update(error=ERASED_TEXT)
    mark = SessionMark.objects.select_for_update().filter(session_id=session_id).first()
    if mark is None:
        return
    words = _free_texts(mark)
    before = mark.result_checksum
    document = erased_result(mark)
    mark.result_json, mark.result_checksum = document, checksum(document)
    SessionMark.objects.filter(pk=mark.pk).update(
        result_json=document, result_checksum=mark.result_checksum, updated_at=timezone.now()
    )
    _decisions_follow(mark, document)
    _people_erased(mark)
    _audit_erased(mark, words)
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
