"""Reads of the marking app. Authorization lives in the querysets
(``SessionMark.objects.visible_to``): what a user may not see does not exist for them (404).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from django.db.models import QuerySet
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy
from django_stubs_ext import StrOrPromise

from accounts.models import Requester, User
from ioa.canonical import checksum
from ioa.marking import (
    READ_TYPES,
    ROUTE_LABELS,
    TECHNICAL,
    Level,
    MarkingConfig,
    SessionSummary,
    TargetScheme,
    cohort_summary,
    compute_scores,
    mark_log,
    read_log,
)
from marking.feedback import Feedback, feedback_for
from marking.models import (
    Appeal,
    MarkingAuditEntry,
    MarkingScheme,
    PanelRun,
    PostMarkingIrregularity,
    PracticeFeedback,
    ResultRelease,
    SecondMark,
    SessionMark,
    TargetDecision,
)
from publishing.models import PublishedVersion
from sessions.exam_room import candidate_session, is_over
from sessions.models import ExamSession
from sessions.practice import attempts_of, may_practise_again
from sessions.selectors import iter_rows, wire_from_row


def mark_list(
    *, user: Requester, version_id: uuid.UUID | str | None = None
) -> QuerySet[SessionMark]:
    qs = SessionMark.objects.visible_to(user).select_related(
        "session__candidate", "session__sitting__version", "scheme"
    )
    if version_id is not None:
        qs = qs.filter(session__sitting__version__pk=version_id)
    return qs.order_by("session__sitting__version__title", "session__candidate__username", "pk")


def mark_get(*, user: Requester, session_id: object) -> SessionMark:
    """The marks of a session the user may see; ``SessionMark.DoesNotExist`` otherwise (also for
    a malformed id)."""
    import uuid

    try:
        key = uuid.UUID(str(session_id))
    except ValueError:
        raise SessionMark.DoesNotExist from None
    return mark_list(user=user).get(session_id=key)


def versions_with_marks(*, user: Requester) -> list[PublishedVersion]:
    ids = mark_list(user=user).values("session__sitting__version_id")
    return list(PublishedVersion.objects.filter(pk__in=ids).order_by("title", "number"))


def version_get(*, user: Requester, version_id: object) -> PublishedVersion:
    """A version of which the user may see marks (``PublishedVersion.DoesNotExist`` otherwise)."""
    try:
        key = uuid.UUID(str(version_id))
    except ValueError:
        raise PublishedVersion.DoesNotExist from None
    if not mark_list(user=user, version_id=key).exists():
        raise PublishedVersion.DoesNotExist
    return PublishedVersion.objects.get(pk=key)


# --- the scheme, the marks and their current state -------------------------------------------

_CONFIG_CACHE: dict[tuple[int, str], MarkingConfig] = {}


def scheme_config(scheme: MarkingScheme) -> MarkingConfig:
    key = (scheme.pk, scheme.checksum)
    config = _CONFIG_CACHE.get(key)
    if config is None:
        config = MarkingConfig.from_dict(json.loads(scheme.config_json))
        if len(_CONFIG_CACHE) > 256:
            _CONFIG_CACHE.clear()
        _CONFIG_CACHE[key] = config
    return config


def marking_events(
    session_id: uuid.UUID | str, *, until_seq: int | None = None
) -> list[dict[str, Any]]:
    """The stored envelopes marking reads (chapter 05 §6.3 plus flag-only types), seq order;
    with ``until_seq``, only those up to it (the log a stored mark was computed from)."""
    rows = iter_rows(session_id=session_id, until_seq=until_seq, types=sorted(READ_TYPES))
    return [wire_from_row(r) for r in rows]


def result_digest(result: Mapping[str, Any]) -> str:
    return checksum(dict(result))


def recompute(mark: SessionMark) -> dict[str, Any]:
    """Mark the session again from its stored log up to ``marked_seq`` (nothing stored): the
    same dict as stored when the marker is deterministic (what :func:`verify_marks` compares).
    Events stored after marking (a late irregularity report) are not part of that log: they
    are recorded beside the marks (:func:`marking.services.irregularity_record`)."""
    config = scheme_config(mark.scheme)
    events = marking_events(mark.session_id, until_seq=mark.marked_seq)
    return mark_log(config, read_log(events)).to_dict()


def verify_marks(mark: SessionMark) -> bool:
    """Whether re-marking the stored log reproduces the stored result exactly."""
    return result_digest(recompute(mark)) == mark.result_checksum


def current_decisions(mark: SessionMark) -> dict[str, TargetDecision]:
    """The latest decision per target key."""
    latest: dict[str, TargetDecision] = {}
    for decision in TargetDecision.objects.filter(mark=mark).order_by("target_key", "number"):
        latest[decision.target_key] = decision
    return latest


def current_levels(mark: SessionMark) -> dict[str, Level]:
    return {k: Level.parse(d.level) for k, d in current_decisions(mark).items()}


def final_scores(mark: SessionMark) -> dict[str, Any]:
    """Scores with the current levels (see ``ioa.marking.compute_scores``)."""
    config = scheme_config(mark.scheme)
    scores = compute_scores(config, current_levels(mark), mark.result_json["visitedNodes"])
    return scores.to_dict()


@dataclass(frozen=True)
class SecondMarkStatus:
    """The current cycle's second marks by target key, and the targets still missing or
    disagreeing with the current level."""

    marks: dict[str, SecondMark]
    missing: list[str]
    disagreeing: list[str]


def second_mark_status(mark: SessionMark) -> SecondMarkStatus:
    """The current cycle's second marks (:class:`SecondMarkStatus`)."""
    marks = {
        s.target_key: s
        for s in SecondMark.objects.filter(mark=mark, cycle=mark.cycle).order_by("created_at")
    }
    levels = current_levels(mark)
    missing = [k for k in levels if k not in marks]
    disagreeing = [k for k, s in marks.items() if k in levels and Level.parse(s.level) != levels[k]]
    return SecondMarkStatus(marks=marks, missing=missing, disagreeing=disagreeing)


def current_release(mark: SessionMark) -> ResultRelease | None:
    """The release the candidate may see now: the current cycle's, while the marks are
    locked; ``None`` otherwise (not released, or reopened on appeal)."""
    if mark.locked_at is None:
        return None
    return ResultRelease.objects.filter(mark=mark, cycle=mark.cycle).first()


def decision_history(mark: SessionMark) -> dict[str, list[TargetDecision]]:
    history: dict[str, list[TargetDecision]] = {}
    for decision in (
        TargetDecision.objects.filter(mark=mark)
        .select_related("author")
        .order_by("target_key", "number")
    ):
        history.setdefault(decision.target_key, []).append(decision)
    return history


UNCATEGORISED = "uncategorised"


def _proctors(actors: Iterable[str]) -> dict[str, User]:
    """The users named by events' ``actor`` values (``user:<id>``), by actor."""
    ids = {
        actor: int(pk)
        for actor in actors
        if (parts := actor.partition(":"))[0] == "user" and (pk := parts[2]).isdigit()
    }
    users = User.objects.in_bulk(list(ids.values()))
    return {actor: users[pk] for actor, pk in ids.items() if pk in users}


def _late_flag(item: dict[str, Any]) -> dict[str, Any]:
    """The review flag of an irregularity reported after marking (MRK-I01), shaped like the
    marker's flags."""
    when = "after the marks were locked" if item["afterLock"] else "after marking"
    return {
        "code": "irregularity",
        "severity": "review",
        "message": f"{item['message']} (Reported {when}.)",
        "nodeId": None if item["afterCompletion"] else item["nodeId"],
        "targetKeys": list(item["targetKeys"]),
        "seqs": [item["seq"]],
    }


def irregularities(mark: SessionMark) -> list[dict[str, Any]]:
    """Every proctor's irregularity report on the session, in seq order: those the marker read
    from the log (``result_json["irregularities"]``) and those stored after marking
    (:class:`PostMarkingIrregularity`, ``afterMarking``; ``afterLock`` when the marks were locked
    then). Each with the proctor (a user, when the actor names one), the time as a datetime,
    and the labels of its category and review route. For staff only (never the candidate)."""
    late = list(PostMarkingIrregularity.objects.filter(mark=mark).order_by("seq"))
    items: list[dict[str, Any]] = [
        {**item, "afterMarking": False, "afterLock": False, "recordedAt": None, "cycle": None}
        for item in mark.result_json.get("irregularities", [])
    ]
    items += [
        {
            **row.report,
            "afterMarking": True,
            "afterLock": row.after_lock,
            "recordedAt": row.created_at,
            "cycle": row.cycle,
        }
        for row in late
    ]
    proctors = _proctors(item["actor"] for item in items)
    for item in items:
        user = proctors.get(item["actor"])
        item["proctor"] = user
        item["proctorName"] = user.name if user is not None else item["actor"] or "unknown"
        item["reportedAt"] = parse_datetime(item["timestamp"] or "")
        item["categoryLabel"] = (item["category"] or UNCATEGORISED).capitalize()
        item["routeLabel"] = ROUTE_LABELS.get(item["route"], item["route"])
    return sorted(items, key=lambda item: item["seq"])


def irregularity_summary(mark: SessionMark) -> tuple[int, list[str]]:
    """How many irregularity reports the session has, and their categories (sorted, unique);
    cheap enough for exports (no user lookups)."""
    categories = [item["category"] for item in mark.result_json.get("irregularities", [])]
    categories += [
        row.category or None
        for row in PostMarkingIrregularity.objects.filter(mark=mark).only("category")
    ]
    return len(categories), sorted({c or UNCATEGORISED for c in categories})


JsonObject = dict[str, Any]
"""A record of a stored result (``SessionMark.result_json`` and the panel's, JSON: Django's
JSONField types its content ``Any``)."""


@dataclass(frozen=True)
class DescriptorView:
    """A rubric level's descriptor of a target (what the level means for it)."""

    level: str
    label: str
    description: str
    declared: bool


@dataclass(frozen=True)
class OutcomeView:
    """A learning outcome, with its current score (``None`` on a target, or when not scored)."""

    id: str
    text: str
    score: float | None = None


@dataclass(frozen=True)
class TargetView:
    """One assessment target as the workspace shows it: the marker's proposal, the current
    (moderated) level and decision with its history, the rubric, and what bears on it."""

    key: str
    target_id: str
    node_id: str
    node_title: str
    label: str
    weight: float
    rationale: str
    rules: list[JsonObject]
    signals: list[JsonObject]
    turn_ids: list[str]
    proposed_level: str
    level: str
    level_title: str
    points: int
    score: float
    overridden: bool
    current: TargetDecision | None
    history: list[TargetDecision]
    descriptor: DescriptorView | None
    descriptors: list[DescriptorView]
    outcomes: list[OutcomeView]
    dimension: str
    flags: list[JsonObject]
    irregularities: list[JsonObject]
    affected_turn_ids: list[str]
    panel: JsonObject | None
    second_mark: SecondMark | None


@dataclass(frozen=True)
class TranscriptGroup:
    """The transcript turns of one node, in order; each row with the targets it is evidence
    for (``targets``) and the technical irregularity affecting it (``irregularity``)."""

    node_id: str
    title: str
    rows: list[JsonObject]


@dataclass(frozen=True)
class MarkView:
    """Everything the workspace, the report and the API show for one session's marks."""

    mark: SessionMark
    config: MarkingConfig
    targets: list[TargetView]
    transcript_groups: list[TranscriptGroup]
    transcript: list[JsonObject]
    scores: JsonObject
    proposed_scores: JsonObject
    outcomes: list[OutcomeView]
    flags: list[JsonObject]
    review_flags: list[JsonObject]
    irregularities: list[JsonObject]
    post_lock_irregularities: list[JsonObject]
    metrics: JsonObject
    panel: PanelRun | None
    second: SecondMarkStatus | None
    appeals: list[Appeal]
    release: ResultRelease | None
    feedback: str
    audit: list[MarkingAuditEntry]

    def as_context(self) -> dict[str, object]:
        """The fields as template context (one level deep: the objects stay as they are)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class _Bearing:
    """What bears on a session's targets besides the marker: flags, irregularity reports (and
    the turns technical ones affect), the panel's agreements and the second marks."""

    flags: list[JsonObject]
    reports: list[JsonObject]
    affected: dict[str, JsonObject]
    agreements: dict[str, JsonObject]
    second: SecondMarkStatus | None


def _bearing(mark: SessionMark, panel: PanelRun | None) -> _Bearing:
    reports = irregularities(mark)
    return _Bearing(
        flags=mark.result_json["flags"]
        + [_late_flag(item) for item in reports if item["afterMarking"]],
        reports=reports,
        affected={
            turn_id: item
            for item in reports
            if item["route"] == TECHNICAL
            for turn_id in item["affectedTurnIds"]
        },
        agreements={
            a["key"]: a for a in ((panel.result_json or {}).get("agreements", []) if panel else [])
        },
        second=second_mark_status(mark) if mark.second_marking_required else None,
    )


def _descriptors(scheme: TargetScheme | None) -> list[DescriptorView]:
    if scheme is None:
        return []
    return [
        DescriptorView(d.level.label, d.label, d.description, d.declared)
        for d in scheme.descriptors
    ]


def _target_view(
    item: JsonObject,
    *,
    config: MarkingConfig,
    current: TargetDecision | None,
    history: list[TargetDecision],
    bearing: _Bearing,
) -> TargetView:
    key = item["key"]
    scheme = config.target(key)
    level = Level.parse(current.level) if current else Level.parse(item["level"])
    descriptor = scheme.descriptor(level) if scheme else None
    node = config.node(item["nodeId"])
    return TargetView(
        key=key,
        target_id=item["targetId"],
        node_id=item["nodeId"],
        node_title=node.title if node else item["nodeId"],
        label=item["label"],
        weight=item["weight"],
        rationale=item["rationale"],
        rules=item["rules"],
        signals=item["signals"],
        turn_ids=item["turnIds"],
        proposed_level=item["level"],
        level=level.label,
        level_title=level.title,
        points=level.points,
        score=level.score,
        overridden=bool(current and current.source == TargetDecision.Source.OVERRIDE),
        current=current,
        history=history,
        descriptor=(
            DescriptorView(level.label, descriptor.label, descriptor.description, True)
            if descriptor
            else None
        ),
        descriptors=_descriptors(scheme),
        outcomes=[
            OutcomeView(o, config.outcome_text(o)) for o in (scheme.outcome_ids if scheme else ())
        ],
        dimension=scheme.dimension if scheme else "",
        flags=[f for f in bearing.flags if key in f["targetKeys"]],
        irregularities=[i for i in bearing.reports if key in i["targetKeys"]],
        affected_turn_ids=[t for t in item["turnIds"] if t in bearing.affected],
        panel=bearing.agreements.get(key),
        second_mark=bearing.second.marks.get(key) if bearing.second else None,
    )


def _transcript_groups(
    transcript: list[JsonObject],
    *,
    config: MarkingConfig,
    targets: list[TargetView],
    affected: dict[str, JsonObject],
) -> list[TranscriptGroup]:
    """The transcript grouped by node (consecutive turns of one node form a group)."""
    evidence_of: dict[str, list[dict[str, str]]] = {}
    for target in targets:
        for turn_id in target.turn_ids:
            evidence_of.setdefault(turn_id, []).append({"key": target.key, "label": target.label})
    groups: list[TranscriptGroup] = []
    for row in transcript:
        if not groups or groups[-1].node_id != row["nodeId"]:
            node = config.node(row["nodeId"])
            title = node.title if node else row["nodeId"]
            groups.append(TranscriptGroup(node_id=row["nodeId"], title=title, rows=[]))
        groups[-1].rows.append(
            {
                **row,
                "targets": evidence_of.get(row["id"], []),
                "irregularity": affected.get(row["id"]),
            }
        )
    return groups


def mark_view(mark: SessionMark) -> MarkView:
    """Everything the workspace, the report and the API show for one session's marks."""
    config = scheme_config(mark.scheme)
    result = mark.result_json
    decisions = current_decisions(mark)
    history = decision_history(mark)
    panel = PanelRun.objects.filter(mark=mark).first()
    bearing = _bearing(mark, panel)
    targets = [
        _target_view(
            item,
            config=config,
            current=decisions.get(item["key"]),
            history=history.get(item["key"], []),
            bearing=bearing,
        )
        for item in result["targets"]
    ]
    scores = final_scores(mark)
    return MarkView(
        mark=mark,
        config=config,
        targets=targets,
        transcript_groups=_transcript_groups(
            result["transcript"], config=config, targets=targets, affected=bearing.affected
        ),
        transcript=result["transcript"],
        scores=scores,
        proposed_scores=result["scores"],
        outcomes=[
            OutcomeView(o.outcome_id, o.text, scores["outcomes"].get(o.outcome_id))
            for o in config.outcomes
        ],
        flags=bearing.flags,
        review_flags=[f for f in bearing.flags if f["severity"] == "review"],
        irregularities=bearing.reports,
        post_lock_irregularities=[i for i in bearing.reports if i["afterLock"]],
        metrics=result["metrics"],
        panel=panel,
        second=bearing.second,
        appeals=list(mark.appeals.select_related("opened_by", "closed_by").order_by("opened_at")),
        release=current_release(mark),
        feedback=feedback_for(mark.session.sitting.version).value,
        audit=list(
            MarkingAuditEntry.objects.filter(mark=mark)
            .select_related("actor")
            .order_by("created_at", "id")
        ),
    )


def export_columns(config: MarkingConfig) -> list[str]:
    return [t.key for t in config.targets()]


def export_rows(marks: Iterable[SessionMark]) -> tuple[list[str], list[list[str]]]:
    """Gradebook CSV: one row per session, the current (moderated) marks."""
    marks = list(marks)
    header = [
        "candidate_username",
        "candidate_name",
        "candidate_email",
        "session_id",
        "assessment",
        "version",
        "state",
        "exam_score_percent",
        "proposed_score_percent",
    ]
    target_keys: list[str] = []
    outcome_ids: list[str] = []
    for mark in marks:
        config = scheme_config(mark.scheme)
        for key in export_columns(config):
            if key not in target_keys:
                target_keys.append(key)
        for outcome in config.outcomes:
            if outcome.outcome_id not in outcome_ids:
                outcome_ids.append(outcome.outcome_id)
    header += [f"level:{k}" for k in target_keys]
    header += [f"outcome_percent:{o}" for o in outcome_ids]
    header += ["review_flags", "locked_at", "irregularities", "irregularity_categories"]
    rows: list[list[str]] = []
    for mark in marks:
        decisions = current_decisions(mark)
        scores = final_scores(mark)
        candidate = mark.session.candidate
        version = mark.session.sitting.version
        row = [
            candidate.username,
            candidate.name,
            candidate.email or "",
            str(mark.session_id),
            version.title,
            str(version.number),
            mark.state,
            percent(scores["exam"]),
            percent(mark.proposed_score),
        ]
        row += [decisions[k].level if k in decisions else "" for k in target_keys]
        row += [
            percent(scores["outcomes"][o]) if scores["outcomes"].get(o) is not None else ""
            for o in outcome_ids
        ]
        count, categories = irregularity_summary(mark)
        row += [str(mark.review_flags), mark.locked_at.isoformat() if mark.locked_at else ""]
        row += [str(count), ";".join(categories)]
        rows.append(row)
    return header, rows


def percent(value: float) -> str:
    return f"{value * 100:.1f}"


def cohort_view(*, user: Requester, version: PublishedVersion) -> dict[str, Any]:
    marks = list(mark_list(user=user, version_id=version.pk))
    config = scheme_config(marks[0].scheme) if marks else None
    summaries = []
    for mark in marks:
        levels = current_levels(mark)
        raters: dict[str, dict[str, Level]] = {}
        for item in mark.result_json["targets"]:
            raters[item["key"]] = {"marker": Level.parse(item["level"])}
        panel = PanelRun.objects.filter(mark=mark).first()
        for agreement in (panel.result_json or {}).get("agreements", []) if panel else []:
            for member, level in agreement.get("round2", {}).items():
                raters.setdefault(agreement["key"], {})[member] = Level.parse(level)
        scores = final_scores(mark)
        summaries.append(
            SessionSummary(
                session_id=str(mark.session_id),
                exam_score=mark.final_score,
                levels=levels,
                metrics=mark.result_json["metrics"],
                review_flags=mark.review_flags,
                raters=raters,
                outcomes=scores["outcomes"],
            )
        )
    summary = cohort_summary(config, summaries) if config else None
    return {"version": version, "marks": marks, "config": config, "summary": summary}


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


# --- the candidate's result ---------------------------------------------------------------------


def candidate_result(*, user: Requester, session_id: uuid.UUID | str) -> dict[str, Any] | None:
    """What the candidate may see of their own session's result, or ``None`` when the session
    is not theirs (404). Keys: ``session``, ``status`` (``pending``: not marked, not locked or
    not released; ``released``; ``appealed``: reopened on an appeal, being reconsidered),
    ``release``, ``feedback`` (``marking.feedback``), ``score`` (percent, when shown),
    ``outcomes`` / ``targets`` (when shown), ``appeals`` (the candidate's own, with outcomes),
    ``mayAppeal``. Nothing else of the marks (no rubric, evidence or moderators' words but
    an appeal's outcome, which answers the candidate)."""
    session = candidate_session(user=user, session_id=session_id)
    if session is None:
        return None
    mark = SessionMark.objects.filter(session=session).select_related("scheme").first()
    view: dict[str, Any] = {
        "session": session,
        "status": "pending",
        "release": None,
        "feedback": feedback_for(session.sitting.version).value,
        "score": None,
        "outcomes": [],
        "targets": [],
        "appeals": [],
        "mayAppeal": False,
    }
    if mark is None:
        return view
    appeals = list(mark.appeals.filter(opened_by_id=session.candidate_id).order_by("opened_at"))
    view["appeals"] = appeals
    released_before = mark.releases.exists()
    release = current_release(mark)
    if release is None:
        if released_before and any(a.open for a in appeals):
            view["status"] = "appealed"
        return view
    feedback = Feedback(release.feedback)
    view.update(status="released", release=release, feedback=feedback.value, mayAppeal=True)
    if feedback.shows_score:
        view["score"] = percent(release.final_score)
    if feedback.shows_outcomes or feedback.shows_levels:
        config = scheme_config(mark.scheme)
        scores = final_scores(mark)
        if feedback.shows_outcomes:
            view["outcomes"] = [
                {"text": o.text, "score": _maybe_percent(scores["outcomes"].get(o.outcome_id))}
                for o in config.outcomes
            ]
        if feedback.shows_levels:
            decisions = current_decisions(mark)
            labels = {t["key"]: t["label"] for t in mark.result_json["targets"]}
            view["targets"] = [
                {"label": labels.get(key, key), "level": Level.parse(d.level).title}
                for key, d in decisions.items()
            ]
    return view


def _maybe_percent(value: float | None) -> str:
    return "—" if value is None else percent(value)


# --- a practice attempt's feedback ------------------------------------------------------------

LEVEL_TITLES: dict[str, StrOrPromise] = {
    "excellent": gettext_lazy("Excellent"),
    "satisfactory": gettext_lazy("Satisfactory"),
    "partial": gettext_lazy("Partial"),
    "absent": gettext_lazy("Absent"),
}
"""The marker's levels in the page's language (docs/spec/practice-sittings.md)."""


@dataclass(frozen=True, slots=True)
class PracticeTarget:
    """One evidence target of a practice attempt's feedback: its label and the level reached."""

    label: str
    level: StrOrPromise


@dataclass(frozen=True, slots=True)
class PracticeAttempt:
    """One attempt and its feedback (``targets`` ``None``: none yet)."""

    session: ExamSession
    over: bool
    targets: list[PracticeTarget] | None


@dataclass(frozen=True, slots=True)
class PracticeView:
    """What the candidate sees after a practice attempt (:func:`practice_result`)."""

    session: ExamSession
    over: bool
    targets: list[PracticeTarget] | None
    attempts: list[PracticeAttempt]
    may_practise_again: bool


def practice_targets(session: ExamSession) -> list[PracticeTarget] | None:
    """A practice attempt's feedback: per target its label (the author's, in the exam's
    language) and the level reached (translated); ``None`` while there is none yet."""
    feedback = PracticeFeedback.objects.filter(session=session).first()
    if feedback is None:
        return None
    return [
        PracticeTarget(str(t["label"]), LEVEL_TITLES.get(t["level"], str(t["level"])))
        for t in feedback.targets
    ]


def practice_result(*, user: Requester, session_id: uuid.UUID | str) -> PracticeView | None:
    """What the candidate sees after a practice attempt, or ``None`` when the session is not
    their own attempt in a practice sitting: the attempt, its feedback, every attempt of theirs
    in the sitting (oldest first, each with its feedback) and whether "Practise again" is
    offered. Never rubric descriptors, rationales, prompts, evidence, transcripts or a score."""
    session = candidate_session(user=user, session_id=session_id)
    if session is None or not session.sitting.is_practice:
        return None
    attempts = [PracticeAttempt(a, is_over(a), practice_targets(a)) for a in attempts_of(session)]
    return PracticeView(
        session=session,
        over=is_over(session),
        targets=practice_targets(session),
        attempts=attempts,
        may_practise_again=may_practise_again(session),
    )
