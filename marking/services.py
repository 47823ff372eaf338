"""Writes of the marking app: marking a session, the panel, overrides, second marking, locks,
appeals and irregularity reports that arrive after marking. Keyword-only, each in one
transaction, the session's mark row locked (``select_for_update``) before it changes; every
change leaves an audit entry. Lock order: the session row (when taken), then the mark row;
only the mark's own row is locked (``of=self``), never the version's shared scheme row.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Requester, User
from ioa.canonical import canonical_json, checksum
from ioa.errors import IoaError
from ioa.events import EventFactory, EventSource
from ioa.events.payloads import ResultReleased
from ioa.marking import (
    COMPILER_VERSION,
    ChatClient,
    Level,
    compile_marking,
    irregularity_reports,
    mark_log,
    read_log,
    run_panel,
)
from ioa.schema import load_package
from marking import conf, signals
from marking.feedback import feedback_for
from marking.models import (
    Appeal,
    MarkingAuditEntry,
    MarkingRequest,
    MarkingScheme,
    PanelRun,
    PostMarkingIrregularity,
    PracticeFeedback,
    ResultRelease,
    SecondMark,
    SessionMark,
    TargetDecision,
)
from marking.selectors import (
    current_decisions,
    current_release,
    final_scores,
    marking_events,
    result_digest,
    scheme_config,
    second_mark_status,
)
from publishing.models import PublishedVersion
from sessions.event_store import append_events
from sessions.models import ExamSession, SessionEvent

logger = logging.getLogger(__name__)

Action = MarkingAuditEntry.Action
PANEL_STALE_AFTER = timedelta(minutes=15)
"""A pending panel run older than this (its worker died) may be run again."""
MIN_RATIONALE_CHARS = 5
LEVEL_NAMES = [
    (level.label, level.title)
    for level in (Level.EXCELLENT, Level.SATISFACTORY, Level.PARTIAL, Level.ABSENT)
]

OFFLINE_NOTICE = (
    "The LLM marking panel was skipped: no panel models are configured (offline). The "
    "deterministic marks stand; set VIVA_MARKING_PANEL_MODELS to add a panel."
)


class MarkingRefused(Exception):
    """A moderation action is not allowed now; ``code`` names why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# --- the scheme ---------------------------------------------------------------------------------


def scheme_get_or_create(version: PublishedVersion) -> MarkingScheme:
    """The version's marking scheme, compiled and stored on first use (immutable after)."""
    found = MarkingScheme.objects.filter(version=version, compiler_version=COMPILER_VERSION).first()
    if found is not None:
        return found
    config = compile_marking(load_package(json.loads(version.canonical_json)))
    document = config.to_dict()
    try:
        with transaction.atomic():
            return MarkingScheme.objects.create(
                version=version,
                compiler_version=config.compiler_version,
                config_json=canonical_json(document),
                checksum=checksum(document),
            )
    except IntegrityError:  # compiled concurrently: the stored one is identical
        return MarkingScheme.objects.get(version=version, compiler_version=COMPILER_VERSION)


# --- marking ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MarkOutcome:
    mark: SessionMark | None
    created: bool
    error: str = ""


def session_mark(*, session_id: uuid.UUID | str) -> MarkOutcome:
    """Mark a completed session once. Idempotent: a re-delivery counts the delivery and returns
    the existing marks; the panel is enqueued (or skipped with a notice) after commit. A
    practice attempt is never marked: its feedback is recorded instead
    (:func:`practice_feedback_record`), and no marking request, mark or audit entry is stored."""
    with transaction.atomic():
        session = (
            ExamSession.objects.select_for_update()
            .select_related("sitting__version")
            .get(pk=session_id)
        )
        if session.is_preview:  # an author's exam-room preview never counts (sessions.previews)
            return MarkOutcome(None, created=False, error="a preview session is never marked")
        if session.sitting.is_practice:  # feedback only, never a mark for the record
            practice_feedback_record(session_id=session.pk)
            return MarkOutcome(None, created=False, error=PRACTICE_NOT_MARKED)
        completed = (
            SessionEvent.objects.filter(session_id=session.pk, type="exam_completed")
            .order_by("seq")
            .values_list("seq", flat=True)
            .first()
        )
        request, created = MarkingRequest.objects.get_or_create(
            session=session, defaults={"completed_seq": completed}
        )
        if not created:
            MarkingRequest.objects.filter(pk=request.pk).update(deliveries=F("deliveries") + 1)
        existing = SessionMark.objects.filter(session=session).first()
        if existing is not None:
            return MarkOutcome(existing, created=False)
        try:
            scheme = scheme_get_or_create(session.sitting.version)
        except (IoaError, ValueError) as exc:
            message = f"the published version cannot be compiled for marking: {exc}"[:2000]
            MarkingRequest.objects.filter(pk=request.pk).update(status="failed", error=message)
            logger.warning("marking %s failed: %s", session.pk, message)
            return MarkOutcome(None, created=False, error=message)
        config = scheme_config(scheme)
        result = mark_log(config, read_log(marking_events(session.pk)))
        document = result.to_dict()
        now = timezone.now()
        mark = SessionMark.objects.create(
            session=session,
            scheme=scheme,
            result_json=document,
            result_checksum=result_digest(document),
            marked_seq=result.last_seq,
            proposed_score=result.scores.exam,
            final_score=result.scores.exam,
            review_flags=sum(1 for f in result.flags if f.severity == "review"),
            state=(
                SessionMark.State.NEEDS_REVIEW
                if result.needs_review
                else SessionMark.State.PROPOSED
            ),
            created_at=now,
            updated_at=now,
        )
        _record_marked(mark, document["targets"], scheme.checksum)
        MarkingRequest.objects.filter(pk=request.pk).update(
            status="marked", marked_at=now, error="", completed_seq=completed
        )
        if not conf.panel_members():
            _record_panel_skipped(mark)
        else:  # marking.receivers enqueues the panel task on commit
            signals.panel_requested.send(sender=SessionMark, mark_id=mark.pk)
    return MarkOutcome(mark, created=True)


def _record_marked(
    mark: SessionMark, targets: Sequence[Mapping[str, object]], scheme_checksum: str
) -> None:
    """The marker's decision per target (number 1) and the ``marked`` audit entry of a new
    mark, stamped with its creation time."""
    for item in targets:
        TargetDecision.objects.create(
            mark=mark,
            target_key=str(item["key"]),
            number=1,
            level=str(item["level"]),
            source=TargetDecision.Source.MARKER,
            rationale=str(item["rationale"]),
            evidence={k: item[k] for k in ("rules", "signals", "turnIds", "review")},
            created_at=mark.created_at,
        )
    MarkingAuditEntry.objects.create(
        mark=mark,
        action=Action.MARKED,
        details={
            "resultChecksum": mark.result_checksum,
            "schemeChecksum": scheme_checksum,
            "lastSeq": mark.marked_seq,
            "examScore": mark.proposed_score,
        },
        created_at=mark.created_at,
    )


PRACTICE_NOT_MARKED = "a practice attempt is never marked for the record"


def practice_feedback_record(*, session_id: uuid.UUID | str) -> PracticeFeedback | None:
    """The formative feedback of a practice attempt (docs/spec/practice-sittings.md): the
    deterministic marker's level per target on the attempt's log, stored once. Idempotent (a
    second call returns the stored row). ``None`` when the session is not a completed practice
    attempt, or its version cannot be compiled for marking (logged)."""
    with transaction.atomic():
        session = (
            ExamSession.objects.select_for_update()
            .select_related("sitting__version")
            .get(pk=session_id)
        )
        if session.is_preview or not session.sitting.is_practice:
            return None
        existing = PracticeFeedback.objects.filter(session=session).first()
        if existing is not None:
            return existing
        if not SessionEvent.objects.filter(session_id=session.pk, type="exam_completed").exists():
            return None
        try:
            scheme = scheme_get_or_create(session.sitting.version)
        except (IoaError, ValueError) as exc:
            logger.warning("practice feedback of %s failed: %s", session.pk, exc)
            return None
        result = mark_log(scheme_config(scheme), read_log(marking_events(session.pk)))
        targets = [
            {"key": item["key"], "label": item["label"], "level": item["level"]}
            for item in result.to_dict()["targets"]
        ]
        return PracticeFeedback.objects.create(
            session=session, scheme=scheme, targets=targets, marked_seq=result.last_seq
        )


def _state(mark: SessionMark) -> str:
    if mark.locked_at is not None:
        return SessionMark.State.LOCKED
    if Appeal.objects.filter(mark=mark, closed_at__isnull=True).exists():
        return SessionMark.State.APPEALED
    panel = PanelRun.objects.filter(mark=mark).first()
    routed = bool(panel and panel.routed)
    if mark.review_flags or routed:
        return SessionMark.State.NEEDS_REVIEW
    if (
        mark.second_marking_required
        and (status := second_mark_status(mark))
        and (status.missing or status.disagreeing)
    ):
        return SessionMark.State.NEEDS_REVIEW
    return SessionMark.State.PROPOSED


def _refresh(mark: SessionMark) -> None:
    mark.final_score = final_scores(mark)["exam"]
    mark.state = _state(mark)
    mark.updated_at = timezone.now()
    mark.save(update_fields=["final_score", "state", "updated_at"])


def _locked_row(mark: SessionMark) -> SessionMark:
    """The mark's row, locked; only that row (``of=self``): the scheme's row is shared by every
    session of the version and is never written."""
    return (
        SessionMark.objects.select_for_update(of=("self",)).select_related("scheme").get(pk=mark.pk)
    )


def _refuse_if_locked(mark: SessionMark) -> None:
    if mark.locked_at is not None:
        raise MarkingRefused(
            "locked", "These marks are locked. Open an appeal to reopen them first."
        )


# --- moderation ---------------------------------------------------------------------------------


def _rationale(text: str, what: str = "rationale") -> str:
    cleaned = (text or "").strip()
    if len(cleaned) < MIN_RATIONALE_CHARS:
        raise MarkingRefused(
            "rationale_required",
            f"A {what} of at least {MIN_RATIONALE_CHARS} characters is required.",
        )
    return cleaned


def decision_override(
    *, mark: SessionMark, target_key: str, level: str, rationale: str, user: User
) -> TargetDecision:
    """Record a moderator's level for one target as a new decision (history is kept)."""
    reason = _rationale(rationale)
    try:
        new_level = Level.parse(level)
    except ValueError:
        raise MarkingRefused("invalid_level", f"Unknown level {level!r}.") from None
    with transaction.atomic():
        row = _locked_row(mark)
        _refuse_if_locked(row)
        latest = current_decisions(row)
        previous = latest.get(target_key)
        if previous is None:
            raise MarkingRefused("unknown_target", f"No target {target_key!r} in these marks.")
        decision = TargetDecision.objects.create(
            mark=row,
            target_key=target_key,
            number=previous.number + 1,
            level=new_level.label,
            source=TargetDecision.Source.OVERRIDE,
            rationale=reason,
            evidence={"previousLevel": previous.level, "previousDecision": previous.pk},
            author=user,
            supersedes=previous,
        )
        MarkingAuditEntry.objects.create(
            mark=row,
            action=Action.OVERRIDE,
            actor=user,
            reason=reason,
            details={"targetKey": target_key, "from": previous.level, "to": new_level.label},
        )
        _refresh(row)
    mark.refresh_from_db()
    return decision


def second_marking_set(*, mark: SessionMark, required: bool, user: User) -> SessionMark:
    """Turn second-marker mode on or off for the session (not while locked)."""
    with transaction.atomic():
        row = _locked_row(mark)
        _refuse_if_locked(row)
        row.second_marking_required = required
        row.save(update_fields=["second_marking_required"])
        MarkingAuditEntry.objects.create(
            mark=row, action=Action.SECOND_MARKING, actor=user, details={"required": required}
        )
        _refresh(row)
    mark.refresh_from_db()
    return mark


def second_marks_record(
    *, mark: SessionMark, user: User, marks: Sequence[Mapping[str, str]]
) -> list[SecondMark]:
    """The second marker's independent levels (``targetKey``, ``level``, ``rationale``). The
    second marker must be someone who has not overridden these marks in this cycle."""
    with transaction.atomic():
        row = _locked_row(mark)
        _refuse_if_locked(row)
        if not row.second_marking_required:
            raise MarkingRefused("not_second_marking", "Second marking is not turned on.")
        since = _cycle_start(row)
        overrode = TargetDecision.objects.filter(
            mark=row, source=TargetDecision.Source.OVERRIDE, author=user, created_at__gte=since
        ).exists()
        if overrode:
            raise MarkingRefused(
                "not_independent",
                "You overrode these marks in this round; a second marker must be someone else.",
            )
        keys = set(current_decisions(row))
        stored: list[SecondMark] = []
        for item in marks:
            key = str(item.get("targetKey", ""))
            if key not in keys:
                raise MarkingRefused("unknown_target", f"No target {key!r} in these marks.")
            try:
                level = Level.parse(item.get("level"))
            except ValueError:
                raise MarkingRefused(
                    "invalid_level", f"Unknown level {item.get('level')!r}."
                ) from None
            stored.append(
                SecondMark.objects.create(
                    mark=row,
                    cycle=row.cycle,
                    target_key=key,
                    level=level.label,
                    rationale=str(item.get("rationale") or "").strip(),
                    author=user,
                )
            )
        MarkingAuditEntry.objects.create(
            mark=row,
            action=Action.SECOND_MARK,
            actor=user,
            details={"levels": {s.target_key: s.level for s in stored}, "cycle": row.cycle},
        )
        _refresh(row)
    mark.refresh_from_db()
    return stored


def _cycle_start(mark: SessionMark) -> datetime:
    appeal = Appeal.objects.filter(mark=mark).order_by("-opened_at").first()
    return appeal.opened_at if appeal is not None and mark.cycle > 1 else mark.created_at


def marks_lock(*, mark: SessionMark, user: User, note: str = "") -> SessionMark:
    """Sign the marks off. Refused while second marking is incomplete or disagrees with the
    current levels; closes an open appeal with ``note`` as its outcome. Sends
    ``marking.signals.marks_locked`` inside the lock's transaction (its receivers write outbox
    messages: ``sessions.outbox``)."""
    with transaction.atomic():
        row = _locked_row(mark)
        _refuse_if_locked(row)
        if row.second_marking_required:
            status = second_mark_status(row)
            if status.missing:
                raise MarkingRefused(
                    "second_marking_incomplete",
                    "Second marking is on: the second marker has not marked "
                    + ", ".join(status.missing),
                )
            if status.disagreeing:
                raise MarkingRefused(
                    "second_marking_disagrees",
                    "The second marker disagrees on "
                    + ", ".join(status.disagreeing)
                    + ": override to the agreed level (with a rationale) before locking.",
                )
        now = timezone.now()
        text = (note or "").strip()
        appeal_open = Appeal.objects.filter(mark=row, closed_at__isnull=True).first()
        if appeal_open is not None:
            outcome = _rationale(text, "note on the appeal's outcome")
            appeal_open.closed_at = now
            appeal_open.closed_by = user
            appeal_open.outcome = outcome
            appeal_open.save(update_fields=["closed_at", "closed_by", "outcome"])
        row.locked_at = now
        row.locked_by = user
        row.save(update_fields=["locked_at", "locked_by"])
        MarkingAuditEntry.objects.create(
            mark=row,
            action=Action.LOCKED,
            actor=user,
            reason=text,
            details={"finalScore": final_scores(row)["exam"], "cycle": row.cycle},
        )
        _refresh(row)
        signals.marks_locked.send(
            sender="marking",
            mark_id=row.pk,
            session_id=row.session_id,
            cycle=row.cycle,
            locked_at=now,
        )
    mark.refresh_from_db()
    return mark


def appeal_open(*, mark: SessionMark, user: User, reason: str) -> Appeal:
    """Reopen locked marks for an appeal (a reason is required); a new moderation cycle."""
    text = _rationale(reason, "reason for the appeal")
    with transaction.atomic():
        row = _locked_row(mark)
        if row.locked_at is None:
            raise MarkingRefused("not_locked", "Only locked marks can be appealed.")
        appeal = Appeal.objects.create(mark=row, reason=text, opened_by=user)
        row.locked_at = None
        row.locked_by = None
        row.cycle += 1
        row.save(update_fields=["locked_at", "locked_by", "cycle"])
        MarkingAuditEntry.objects.create(
            mark=row,
            action=Action.APPEAL_OPENED,
            actor=user,
            reason=text,
            details={"cycle": row.cycle},
        )
        _refresh(row)
    mark.refresh_from_db()
    return appeal


# --- results released to candidates -------------------------------------------------------------


def result_release(*, mark: SessionMark, user: User) -> ResultRelease:
    """Release the locked marks of the current moderation cycle to the candidate: a deliberate
    act, stored as a :class:`ResultRelease`, a ``result_released`` session event and an audit
    entry, in one transaction, which also sends ``marking.signals.result_released``. Refused
    (``not_locked``) unless the marks are locked; releasing a cycle again returns its release
    (idempotent). Lock order: the session row, then the mark row (the event store appends under
    the session row's lock)."""
    with transaction.atomic():
        ExamSession.objects.select_for_update().filter(pk=mark.session_id).first()
        row = _locked_row(mark)
        if row.locked_at is None:
            raise MarkingRefused("not_locked", "Only locked marks can be released.")
        existing = ResultRelease.objects.filter(mark=row, cycle=row.cycle).first()
        if existing is not None:
            return existing
        feedback = feedback_for(row.session.sitting.version)
        score = float(row.final_score)
        payload = ResultReleased(
            actor=str(user.pk), cycle=row.cycle, feedback=feedback.value, finalScore=score
        )
        event = EventFactory(session_id=str(row.session_id), source=EventSource.SYSTEM)(payload)
        append_events(session=row.session_id, events=[event])
        release = ResultRelease.objects.create(
            mark=row,
            cycle=row.cycle,
            final_score=score,
            feedback=feedback.value,
            released_by=user,
            event_id=event.eventId,
        )
        MarkingAuditEntry.objects.create(
            mark=row,
            action=Action.RESULT_RELEASED,
            actor=user,
            details={"cycle": row.cycle, "finalScore": score, "feedback": feedback.value},
        )
        signals.result_released.send(
            sender="marking", mark_id=row.pk, session_id=row.session_id, cycle=row.cycle
        )
    mark.refresh_from_db()
    return release


def appeal_open_by_candidate(*, mark: SessionMark, candidate: Requester, reason: str) -> Appeal:
    """The candidate lodges an appeal against their released result (from the result page):
    only their own, only while it is released (``not_released`` otherwise); it reopens the
    marks for a new moderation cycle like a staff appeal (:func:`appeal_open`)."""
    if not isinstance(candidate, User) or mark.session.candidate_id != candidate.pk:
        raise MarkingRefused("not_released", "There is no released result to appeal.")
    if current_release(mark) is None:
        raise MarkingRefused("not_released", "There is no released result to appeal.")
    return appeal_open(mark=mark, user=candidate, reason=reason)


# --- irregularities reported after marking ------------------------------------------------------


@dataclass(frozen=True)
class IrregularityOutcome:
    """What :func:`irregularity_record` did: ``recorded`` (the marks need review again),
    ``recorded_after_lock`` (the marks are locked and unchanged), ``duplicate`` (already
    recorded), ``in_marks`` (the marks were computed with it), ``not_marked`` (no marks yet:
    marking reads it from the log), ``not_an_irregularity``."""

    status: str
    record: PostMarkingIrregularity | None = None


def _proctor(actor: str) -> User | None:
    """The user an event's ``actor`` (``user:<id>``) names, or None."""
    prefix, _, pk = actor.partition(":")
    if prefix != "user" or not pk.isdigit():
        return None
    return User.objects.filter(pk=int(pk)).first()


def irregularity_record(*, session_id: uuid.UUID | str, event_id: str) -> IrregularityOutcome:
    """Take a proctor's irregularity report stored in the session log into the session's marks.

    Enqueued on commit for every stored ``flag_irregularity`` (``marking.tasks``). Under the
    session row's lock, then the mark row's (the app's lock order), so it is serialised with
    marking, moderation and itself:

    * no marks yet, or marks computed from a log that already held the report: nothing to do
      (the marker's MRK-I rules read it from the log);
    * marks not locked: the report is recorded beside them (:class:`PostMarkingIrregularity`
      with the marker's reading of it, ``ioa.marking.irregularity_reports``), counted as a
      review flag, and the marks go back to *needs review* (MRK-I06); levels and scores are
      not touched;
    * marks locked: recorded the same way as a post-lock irregularity; the marks, their state
      and score are not changed (an appeal reopens them);
    * the same event again (a re-delivered event or task): nothing changes.

    Every recording leaves an audit entry naming the proctor (``actor``) and their reason.
    """
    with transaction.atomic():
        # FOR NO KEY UPDATE: waits for marking (FOR UPDATE) and for appends, but not for the
        # FOR KEY SHARE that a moderation commit takes on the session row when it checks the
        # mark's foreign keys (a FOR UPDATE here would deadlock with a marks_lock in progress).
        session = ExamSession.objects.select_for_update(no_key=True).get(pk=session_id)
        row = SessionEvent.objects.filter(session_id=session.pk, event_id=event_id).first()
        if (
            row is None
            or row.type != "proctor_action"
            or not isinstance(row.payload, dict)
            or row.payload.get("action") != "flag_irregularity"
        ):
            return IrregularityOutcome("not_an_irregularity")
        mark = (
            SessionMark.objects.select_for_update(of=("self",))
            .select_related("scheme")
            .filter(session_id=session.pk)
            .first()
        )
        if mark is None:
            return IrregularityOutcome("not_marked")
        if row.seq <= mark.marked_seq:
            return IrregularityOutcome("in_marks")
        existing = PostMarkingIrregularity.objects.filter(mark=mark, event_id=str(event_id)).first()
        if existing is not None:
            return IrregularityOutcome("duplicate", existing)
        config = scheme_config(mark.scheme)
        log = read_log(marking_events(session.pk, until_seq=row.seq))
        scored = [item["key"] for item in mark.result_json["targets"]]
        report = next(
            (r for r in irregularity_reports(config, log, scored) if r.seq == row.seq), None
        )
        if report is None:  # stored events are valid: only a payload marking cannot read
            logger.warning("irregularity %s of %s could not be read", event_id, session.pk)
            return IrregularityOutcome("not_an_irregularity")
        locked = mark.locked_at is not None
        item = report.irregularity
        record = PostMarkingIrregularity.objects.create(
            mark=mark,
            event_id=str(event_id),
            seq=row.seq,
            category=item.category or "",
            actor=item.actor,
            reason=item.reason,
            node_id=item.node_id or "",
            reported_at=row.timestamp,
            report=report.to_dict(),
            after_lock=locked,
            cycle=mark.cycle,
        )
        MarkingAuditEntry.objects.create(
            mark=mark,
            action=Action.IRREGULARITY_AFTER_LOCK if locked else Action.IRREGULARITY_REPORTED,
            actor=_proctor(item.actor),
            reason=item.reason,
            details={
                "eventId": str(event_id),
                "seq": row.seq,
                "category": item.category,
                "actor": item.actor,
                "nodeId": report.node_id,
                "route": report.route,
                "targetKeys": list(report.target_keys),
                "markedSeq": mark.marked_seq,
                "afterLock": locked,
                "cycle": mark.cycle,
                "marksChanged": False,
            },
        )
        mark.review_flags += 1
        mark.updated_at = timezone.now()
        fields = ["review_flags", "updated_at"]
        if not locked:  # back to needs review (an open appeal keeps it "appealed")
            mark.final_score = final_scores(mark)["exam"]
            mark.state = _state(mark)
            fields += ["final_score", "state"]
        mark.save(update_fields=fields)  # one update of the row
    return IrregularityOutcome("recorded_after_lock" if locked else "recorded", record)


# --- the panel ----------------------------------------------------------------------------------


def _record_panel_skipped(mark: SessionMark) -> None:
    PanelRun.objects.create(mark=mark, status=PanelRun.Status.SKIPPED, notice=OFFLINE_NOTICE)
    MarkingAuditEntry.objects.create(mark=mark, action=Action.PANEL_SKIPPED, reason=OFFLINE_NOTICE)


def panel_run(*, mark_id: int, client: ChatClient | None = None) -> PanelRun:
    """Run the configured panel for a session once (idempotent; a stale pending run is retried).
    Offline (no members) the run is recorded as skipped with a notice."""
    from marking.panel_client import OpenAICompatibleClient

    members = conf.panel_members()
    with transaction.atomic():
        mark = (
            SessionMark.objects.select_for_update(of=("self",))
            .select_related("scheme")
            .get(pk=mark_id)
        )
        run = PanelRun.objects.filter(mark=mark).first()
        if run is not None and not (
            run.status == PanelRun.Status.PENDING
            and run.created_at < timezone.now() - PANEL_STALE_AFTER
        ):
            return run
        if not members:
            if run is None:
                _record_panel_skipped(mark)
            return PanelRun.objects.get(mark=mark)
        if run is None:
            run = PanelRun.objects.create(mark=mark, status=PanelRun.Status.PENDING)
        else:
            run.created_at = timezone.now()
            run.save(update_fields=["created_at"])
    config = scheme_config(mark.scheme)
    log = read_log(marking_events(mark.session_id, until_seq=mark.marked_seq))
    result = mark_log(config, log, with_transcript=False)
    client = client or OpenAICompatibleClient(
        base_url=conf.panel_base_url(), api_key=conf.panel_api_key(), timeout=conf.panel_timeout()
    )
    panel = run_panel(config, log, result, members, client)
    answered = any(r.error is None for r in panel.rounds)
    with transaction.atomic():
        row = _locked_row(mark)
        run = PanelRun.objects.select_for_update().get(mark=row)
        run.status = PanelRun.Status.COMPLETED if answered else PanelRun.Status.FAILED
        run.notice = (
            ""
            if answered
            else "No panel model answered; the deterministic marks stand. See the errors below."
        )
        run.result_json = panel.to_dict()
        run.alpha_round1 = panel.alpha_round1
        run.alpha_round2 = panel.alpha_round2
        run.routed = panel.routed
        run.completed_at = timezone.now()
        run.save()
        MarkingAuditEntry.objects.create(
            mark=row,
            action=Action.PANEL_COMPLETED if answered else Action.PANEL_FAILED,
            details={"routed": panel.routed, "alphaRound2": panel.alpha_round2},
        )
        _refresh(row)
    return run
