"""Preview as a candidate in the real exam room (issue #20): a sandbox session that never counts.

An author (or admin) who may edit a draft asks for a preview (:func:`preview_start`): the draft's
saved document passes the same gate as a publication (validation, compilation) and is stored as
a *preview build* — a :class:`~publishing.models.PublishedVersion` with ``is_preview=True`` and
number 0, reused while the draft's checksum is unchanged, so real publications stay immutable
and keep their numbering 1, 2, 3... A sandbox :class:`~sessions.models.Sitting` and
:class:`~sessions.models.ExamSession` (both ``is_preview=True``) are created with the author as
the candidate; identity, consent and briefing are taken as read, so the author lands on the mode
choice (voice or text) and then in the real exam room, with the real bot and examiner.

It never counts: preview sittings, sessions and builds are left out of every ``visible_to``
(rosters, proctor dashboards, exports, marking lists, the REST API, LTI links), marking skips
them (``marking.services.session_mark``), the grade passback refuses them, and every journey page
shows the preview banner. Only the author who started it may open it
(``ExamSession.objects.previews_of``); its controller decisions are read by
:func:`preview_decisions` for the staff-only panel beside the room, never sent on the
candidate's socket.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Final

from django.db import transaction
from django.utils import timezone

from accounts.models import Requester, User
from authoring.models import DraftPackage
from ioa.canonical import canonical_json, checksum
from ioa.compiler import compile_package, serialise_compiled_flow
from ioa.schema import load_package
from ioa.validation import validate_package
from publishing.models import PublishedVersion
from sessions.exam_room import CONSENT_VERSION
from sessions.models import ExamSession, SessionEvent, Sitting


class PreviewRejected(Exception):
    """The draft does not pass the gate; ``report`` is the validation report."""

    def __init__(self, report: dict[str, Any]) -> None:  # Any: ValidationReport.to_dict's type
        errors = report.get("errors", [])
        first = errors[0]["message"] if errors else "see the report"
        super().__init__(f"the draft cannot be previewed: {len(errors)} error(s): {first}")
        self.report = report


def _preview_build(*, draft: DraftPackage, user: User) -> PublishedVersion:
    """The preview build of the draft's saved document (reused while unchanged)."""
    report = validate_package(draft.document, now=timezone.now())
    report_dict = report.to_dict()
    if not report.passed:
        raise PreviewRejected(report_dict)
    digest = checksum(draft.document)
    existing = PublishedVersion.objects.filter(
        draft=draft, is_preview=True, checksum=digest
    ).first()
    if existing is not None:
        return existing
    package = load_package(draft.document)
    compiled = compile_package(package)
    version = PublishedVersion(
        draft=draft,
        number=0,
        is_preview=True,
        package_id=str(package.metadata.packageId),
        title=package.metadata.title,
        ir_version=package.irVersion,
        adapter_version=compiled["adapterVersion"],
        canonical_json=canonical_json(draft.document),
        checksum=digest,
        compiled_json=serialise_compiled_flow(compiled),
        validation_report=report_dict,
        published_by=user,
    )
    version.save()
    return version


@transaction.atomic
def preview_start(*, draft: DraftPackage, user: User) -> ExamSession:
    """A new preview session of ``draft`` for ``user`` (who must be allowed to edit it: the
    caller checks with ``authoring.selectors``). Raises :class:`PreviewRejected` when the
    draft has errors."""
    locked = DraftPackage.objects.select_for_update().get(pk=draft.pk)
    version = _preview_build(draft=locked, user=user)
    sitting = Sitting.objects.create(
        version=version,
        title=f"Preview: {version.title}"[:300],
        created_by=user,
        is_preview=True,
    )
    now = timezone.now()
    return ExamSession.objects.create(
        sitting=sitting,
        candidate=user,
        is_preview=True,
        identity_confirmed_at=now,
        consent_given_at=now,
        consent_version=CONSENT_VERSION,
        briefing_seen_at=now,
    )


def preview_session(*, user: Requester, session_id: uuid.UUID | str) -> ExamSession | None:
    """``user``'s own preview session, else ``None``."""
    try:
        key = session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))
    except ValueError:
        return None
    return (
        ExamSession.objects.previews_of(user)
        .filter(pk=key)
        .select_related("sitting", "sitting__version")
        .first()
    )


PANEL_TYPES: Final = (
    "exam_state_changed",
    "node_entered",
    "node_exited",
    "transition_decision",
    "evidence_signal",
    "follow_up_used",
    "guardrail_triggered",
    "time_warning",
    "recovery_started",
    "recovery_resolved",
    "candidate_command_received",
    "misconception_detected",
    "exam_completed",
    "system_error",
)
"""What the controller decided, as the panel shows it (no transcript: the room shows that)."""


def _summary(kind: str, payload: Mapping[str, object]) -> str:
    keys = {
        "exam_state_changed": ("fromState", "toState", "reason"),
        "node_entered": ("nodeId", "reason"),
        "node_exited": ("nodeId", "reason", "durationSec", "followUpsUsed"),
        "transition_decision": ("fromNodeId", "toNodeId", "reason", "conditionType"),
        "evidence_signal": ("nodeId", "targetIds", "signalKind", "rubricLevel", "confidence"),
        "follow_up_used": ("nodeId", "followUpIndex", "maxFollowUps", "reason"),
        "guardrail_triggered": ("guardrailType", "severity", "actionTaken", "contextNodeId"),
        "time_warning": ("scope", "nodeId", "remainingSec", "wrapUp"),
        "candidate_command_received": ("commandType", "accepted", "rejectionReason"),
        "recovery_started": ("recoveryType", "nodeId", "attempt", "action"),
        "recovery_resolved": ("resolution", "durationSec"),
        "misconception_detected": ("nodeId", "misconceptionId", "targetIds", "confidence"),
        "exam_completed": ("reason", "nodesVisited", "totalEvidenceSignals", "totalFollowUps"),
    }.get(kind, ())
    parts = [f"{k}={payload[k]}" for k in keys if payload.get(k) not in (None, "")]
    return ", ".join(parts) if parts else ", ".join(sorted(payload))[:200]


def preview_decisions(*, session: ExamSession, after_seq: int = 0) -> dict[str, object]:
    """The controller's decisions in the stored log after ``after_seq``, for the panel:
    ``{"lastSeq", "node", "state", "decisions": [{"seq", "type", "summary", "payload"}]}``."""
    rows = list(
        SessionEvent.objects.filter(session_id=session.pk, seq__gt=after_seq, type__in=PANEL_TYPES)
        .order_by("seq")
        .values("seq", "type", "payload")[:500]
    )
    node = (
        SessionEvent.objects.filter(session_id=session.pk, type="node_entered")
        .order_by("-seq")
        .values_list("payload", flat=True)
        .first()
    )
    return {
        "lastSeq": rows[-1]["seq"] if rows else after_seq,
        "state": session.state,
        "node": (node or {}).get("nodeId"),
        "decisions": [
            {
                "seq": r["seq"],
                "type": r["type"],
                "summary": _summary(r["type"], r["payload"]),
                "payload": r["payload"],
            }
            for r in rows
        ],
    }
