"""Reads of the marking app. Authorization lives in the querysets
(``SessionMark.objects.visible_to``): what a user may not see does not exist for them (404).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet
from django.utils.dateparse import parse_datetime

from ioa.marking import ROUTE_LABELS, TECHNICAL, Level, SessionSummary, cohort_summary
from marking.models import (
    MarkingAuditEntry,
    PanelRun,
    PostMarkingIrregularity,
    SessionMark,
    TargetDecision,
)
from marking.services import current_decisions, final_scores, scheme_config, second_mark_status


def mark_list(*, user: object, version_id: object | None = None) -> QuerySet[SessionMark]:
    qs = SessionMark.objects.visible_to(user).select_related(
        "session__candidate", "session__sitting__version", "scheme"
    )
    if version_id is not None:
        qs = qs.filter(session__sitting__version_id=version_id)
    return qs.order_by("session__sitting__version__title", "session__candidate__username", "pk")


def mark_get(*, user: object, session_id: object) -> SessionMark:
    """The marks of a session the user may see; ``SessionMark.DoesNotExist`` otherwise (also for
    a malformed id)."""
    import uuid

    try:
        key = uuid.UUID(str(session_id))
    except ValueError:
        raise SessionMark.DoesNotExist from None
    return mark_list(user=user).get(session_id=key)


def versions_with_marks(*, user: object) -> list[Any]:
    from publishing.models import PublishedVersion

    ids = mark_list(user=user).values("session__sitting__version_id")
    return list(PublishedVersion.objects.filter(pk__in=ids).order_by("title", "number"))


def version_get(*, user: object, version_id: object) -> Any:
    """A version of which the user may see marks (``PublishedVersion.DoesNotExist`` otherwise)."""
    import uuid

    from publishing.models import PublishedVersion

    try:
        key = uuid.UUID(str(version_id))
    except ValueError:
        raise PublishedVersion.DoesNotExist from None
    if not mark_list(user=user, version_id=key).exists():
        raise PublishedVersion.DoesNotExist
    return PublishedVersion.objects.get(pk=key)


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


def _proctors(actors: Iterable[str]) -> dict[str, Any]:
    """The users named by events' ``actor`` values (``user:<id>``), by actor."""
    from django.contrib.auth import get_user_model

    ids = {
        actor: int(pk)
        for actor in actors
        if (parts := actor.partition(":"))[0] == "user" and (pk := parts[2]).isdigit()
    }
    users = get_user_model().objects.in_bulk(list(ids.values()))
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


def mark_view(mark: SessionMark) -> dict[str, Any]:
    """Everything the workspace, the report and the API show for one session's marks."""
    config = scheme_config(mark.scheme)
    result = mark.result_json
    decisions = current_decisions(mark)
    history = decision_history(mark)
    panel = PanelRun.objects.filter(mark=mark).first()
    agreements = {
        a["key"]: a for a in ((panel.result_json or {}).get("agreements", []) if panel else [])
    }
    second = second_mark_status(mark) if mark.second_marking_required else None
    reports = irregularities(mark)
    flags = result["flags"] + [_late_flag(item) for item in reports if item["afterMarking"]]
    affected = {
        turn_id: item
        for item in reports
        if item["route"] == TECHNICAL
        for turn_id in item["affectedTurnIds"]
    }
    targets = []
    for item in result["targets"]:
        key = item["key"]
        scheme = config.target(key)
        current = decisions.get(key)
        level = Level.parse(current.level) if current else Level.parse(item["level"])
        descriptor = scheme.descriptor(level) if scheme else None
        targets.append(
            {
                **item,
                "proposedLevel": item["level"],
                "level": level.label,
                "levelTitle": level.title,
                "points": level.points,
                "score": level.score,
                "overridden": bool(current and current.source == TargetDecision.Source.OVERRIDE),
                "current": current,
                "history": history.get(key, []),
                "descriptor": (
                    {"label": descriptor.label, "description": descriptor.description}
                    if descriptor
                    else None
                ),
                "descriptors": (
                    [
                        {
                            "level": d.level.label,
                            "label": d.label,
                            "description": d.description,
                            "declared": d.declared,
                        }
                        for d in scheme.descriptors
                    ]
                    if scheme
                    else []
                ),
                "outcomes": [
                    {"id": o, "text": config.outcome_text(o)}
                    for o in (scheme.outcome_ids if scheme else ())
                ],
                "dimension": scheme.dimension if scheme else "",
                "nodeTitle": (
                    config.node(item["nodeId"]).title
                    if config.node(item["nodeId"])
                    else item["nodeId"]
                ),
                "flags": [f for f in flags if key in f["targetKeys"]],
                "irregularities": [i for i in reports if key in i["targetKeys"]],
                "affectedTurnIds": [t for t in item["turnIds"] if t in affected],
                "panel": agreements.get(key),
                "secondMark": second["marks"].get(key) if second else None,
            }
        )
    scores = final_scores(mark)
    evidence_of: dict[str, list[dict[str, str]]] = {}
    for target in targets:
        for turn_id in target["turnIds"]:
            evidence_of.setdefault(turn_id, []).append(
                {"key": target["key"], "label": target["label"]}
            )
    groups: list[dict[str, Any]] = []
    for row in result["transcript"]:
        if not groups or groups[-1]["nodeId"] != row["nodeId"]:
            node = config.node(row["nodeId"])
            groups.append(
                {
                    "nodeId": row["nodeId"],
                    "title": node.title if node else row["nodeId"],
                    "rows": [],
                }
            )
        groups[-1]["rows"].append(
            {
                **row,
                "targets": evidence_of.get(row["id"], []),
                "irregularity": affected.get(row["id"]),
            }
        )
    return {
        "mark": mark,
        "transcriptGroups": groups,
        "config": config,
        "targets": targets,
        "scores": scores,
        "proposedScores": result["scores"],
        "flags": flags,
        "reviewFlags": [f for f in flags if f["severity"] == "review"],
        "irregularities": reports,
        "postLockIrregularities": [i for i in reports if i["afterLock"]],
        "metrics": result["metrics"],
        "transcript": result["transcript"],
        "panel": panel,
        "second": second,
        "appeals": list(
            mark.appeals.select_related("opened_by", "closed_by").order_by("opened_at")
        ),
        "audit": list(
            MarkingAuditEntry.objects.filter(mark=mark)
            .select_related("actor")
            .order_by("created_at", "id")
        ),
        "outcomes": [
            {"id": o.outcome_id, "text": o.text, "score": scores["outcomes"].get(o.outcome_id)}
            for o in config.outcomes
        ],
    }


def export_columns(config: Any) -> list[str]:
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


def cohort_view(*, user: object, version: Any) -> dict[str, Any]:
    from marking.services import current_levels

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


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
