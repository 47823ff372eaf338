"""Marking endpoints under /api/v1/marking/: marks, decisions, overrides, moderation, reports
and exports. Thin views: input and output serializers nested in each view, reads through
``marking.selectors`` (authorization in the queryset: a session or version the user may not see
answers 404), writes through ``marking.services`` (a refused action answers 409, or 400 for bad
input, with the shared error body)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission, signed_in_user
from accounts.api.serializers import UserRefSerializer
from accounts.roles import Area
from marking import selectors, services
from marking.models import SessionMark, TargetDecision
from marking.services import MarkingRefused
from publishing.models import PublishedVersion
from sessions.costs import costs_of
from web.api.pagination import StandardPagination
from web.csv_export import csv_response

BAD_INPUT = {"rationale_required", "invalid_level", "unknown_target"}
LEVELS = ["excellent", "satisfactory", "partial", "absent"]
REFUSED = "refused in the marks' current state (e.g. locked); the code says why"


def _mark(request: Request, session_id: str) -> SessionMark:
    try:
        return selectors.mark_get(user=request.user, session_id=session_id)
    except SessionMark.DoesNotExist:
        raise NotFound("No such marked session.") from None


def _version(request: Request, version_id: str) -> PublishedVersion:
    try:
        return selectors.version_get(user=request.user, version_id=version_id)
    except PublishedVersion.DoesNotExist:
        raise NotFound("No such assessment.") from None


def _refused(refusal: MarkingRefused) -> Response:
    code = status.HTTP_400_BAD_REQUEST if refusal.code in BAD_INPUT else status.HTTP_409_CONFLICT
    return Response(
        {"error": {"code": refusal.code, "message": refusal.message, "details": {}}}, status=code
    )


class DecisionSerializer(serializers.Serializer[object]):
    id = serializers.IntegerField()
    targetKey = serializers.CharField(source="target_key")
    number = serializers.IntegerField()
    level = serializers.CharField()
    # Field.source is an attribute too: DRF's metaclass moves declared fields off the class.
    source = serializers.CharField()  # type: ignore[assignment]
    rationale = serializers.CharField()
    author = UserRefSerializer(allow_null=True)
    supersedes = serializers.IntegerField(source="supersedes_id", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    evidence = serializers.JSONField()


class MarkSummarySerializer(serializers.Serializer[object]):
    sessionId = serializers.UUIDField(source="session_id")
    candidate = UserRefSerializer(source="session.candidate")
    versionId = serializers.UUIDField(source="session.sitting.version_id")
    assessment = serializers.CharField(source="session.sitting.version.title")
    state = serializers.CharField()
    examScore = serializers.FloatField(source="final_score")
    proposedScore = serializers.FloatField(source="proposed_score")
    reviewFlags = serializers.IntegerField(source="review_flags")
    secondMarkingRequired = serializers.BooleanField(source="second_marking_required")
    lockedAt = serializers.DateTimeField(source="locked_at", allow_null=True)
    lockedBy = UserRefSerializer(source="locked_by", allow_null=True)
    resultChecksum = serializers.CharField(source="result_checksum")
    markedAt = serializers.DateTimeField(source="created_at")


def _irregularity(item: dict[str, Any]) -> dict[str, Any]:
    """A proctor's irregularity report as the API gives it (staff only, like the whole area)."""
    proctor = item["proctor"]
    return {
        "eventId": item["eventId"],
        "seq": item["seq"],
        "reportedAt": item["timestamp"],
        "category": item["category"],
        "actor": item["actor"],
        "proctor": UserRefSerializer(proctor).data if proctor is not None else None,
        "reason": item["reason"],
        "nodeId": item["nodeId"],
        "nodeTitle": item["nodeTitle"],
        "afterCompletion": item["afterCompletion"],
        "route": item["route"],
        "targetKeys": item["targetKeys"],
        "affectedTurnIds": item["affectedTurnIds"],
        "message": item["message"],
        "afterMarking": item["afterMarking"],
        "afterLock": item["afterLock"],
        "recordedAt": item["recordedAt"],
    }


def _detail(mark: SessionMark) -> dict[str, Any]:
    view = selectors.mark_view(mark)
    panel = view.panel
    second = view.second
    return {
        **MarkSummarySerializer(mark).data,
        "scores": view.scores,
        "proposedScores": view.proposed_scores,
        "targets": [
            {
                "key": t.key,
                "targetId": t.target_id,
                "nodeId": t.node_id,
                "label": t.label,
                "weight": t.weight,
                "level": t.level,
                "proposedLevel": t.proposed_level,
                "overridden": t.overridden,
                "currentDecision": DecisionSerializer(t.current).data if t.current else None,
                "rationale": t.rationale,
                "rules": t.rules,
                "signals": t.signals,
                "turnIds": t.turn_ids,
                "learningOutcomes": [{"id": o.id, "text": o.text} for o in t.outcomes],
                "descriptor": (
                    {"label": t.descriptor.label, "description": t.descriptor.description}
                    if t.descriptor
                    else None
                ),
                "flags": t.flags,
                "irregularitySeqs": [i["seq"] for i in t.irregularities],
                "affectedTurnIds": t.affected_turn_ids,
                "panel": t.panel,
            }
            for t in view.targets
        ],
        "flags": view.flags,
        "irregularities": [_irregularity(i) for i in view.irregularities],
        "metrics": view.metrics,
        "panel": (
            {
                "status": panel.status,
                "notice": panel.notice,
                "alphaRound1": panel.alpha_round1,
                "alphaRound2": panel.alpha_round2,
                "routed": panel.routed,
            }
            if panel
            else None
        ),
        "secondMarking": (
            {
                "missing": second.missing,
                "disagreeing": second.disagreeing,
                "marks": {k: s.level for k, s in second.marks.items()},
            }
            if second
            else None
        ),
        "appeals": [
            {
                "reason": a.reason,
                "openedBy": a.opened_by.username,
                "openedAt": a.opened_at,
                "closedAt": a.closed_at,
                "outcome": a.outcome,
            }
            for a in view.appeals
        ],
        "costs": [cost.as_json() for cost in costs_of([mark.session_id])],
    }


class MarkListApi(APIView):
    """Marked sessions you may see (``?version=<id>``, ``?state=``)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    pagination_class = StandardPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("version", str, description="Only this assessment version's."),
            OpenApiParameter("state", str, description="Only marks in this state."),
        ],
        responses=MarkSummarySerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        version = request.query_params.get("version") or None
        qs = selectors.mark_list(user=request.user)
        if version is not None:
            qs = qs.filter(session__sitting__version_id__in=[_version(request, version).pk])
        state = request.query_params.get("state")
        if state:
            qs = qs.filter(state=state)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, self)
        return paginator.get_paginated_response(MarkSummarySerializer(page, many=True).data)


class MarkDetailApi(APIView):
    """One session's marks: scores, per-target levels with their evidence and reasons, flags."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, session_id: str) -> Response:
        return Response(_detail(_mark(request, session_id)))


class DecisionListApi(APIView):
    """Every decision for every target, oldest first (overrides never erase history)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=DecisionSerializer(many=True))
    def get(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        qs = (
            TargetDecision.objects.filter(mark=mark)
            .select_related("author")
            .order_by("target_key", "number")
        )
        return Response(DecisionSerializer(qs, many=True).data)


class OverrideApi(APIView):
    """Override one target's level; a rationale is required. 409 when the marks are locked."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingOverrideInput")
    class InputSerializer(serializers.Serializer[object]):
        targetKey = serializers.CharField()
        level = serializers.ChoiceField(choices=LEVELS)
        rationale = serializers.CharField(min_length=services.MIN_RATIONALE_CHARS)

    @extend_schema(
        request=InputSerializer,
        responses={201: DecisionSerializer, 409: OpenApiResponse(description=REFUSED)},
    )
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            decision = services.decision_override(
                mark=mark,
                target_key=data.validated_data["targetKey"],
                level=data.validated_data["level"],
                rationale=data.validated_data["rationale"],
                user=signed_in_user(request),
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        return Response(DecisionSerializer(decision).data, status=status.HTTP_201_CREATED)


class LockApi(APIView):
    """Lock the marks (sign-off). 409 when already locked or second marking is unresolved."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingLockInput")
    class InputSerializer(serializers.Serializer[object]):
        note = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        request=InputSerializer,
        responses={200: MarkSummarySerializer, 409: OpenApiResponse(description=REFUSED)},
    )
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.marks_lock(
                mark=mark, user=signed_in_user(request), note=data.validated_data["note"]
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        return Response(MarkSummarySerializer(mark).data)


class AppealApi(APIView):
    """Open an appeal: reopens locked marks (a reason is required)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingAppealInput")
    class InputSerializer(serializers.Serializer[object]):
        reason = serializers.CharField(min_length=services.MIN_RATIONALE_CHARS)

    @extend_schema(
        request=InputSerializer,
        responses={201: MarkSummarySerializer, 409: OpenApiResponse(description=REFUSED)},
    )
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.appeal_open(
                mark=mark, user=signed_in_user(request), reason=data.validated_data["reason"]
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        mark.refresh_from_db()
        return Response(MarkSummarySerializer(mark).data, status=status.HTTP_201_CREATED)


class ReleaseApi(APIView):
    """Release the locked marks of the current cycle to the candidate (idempotent: a cycle
    already released answers 200 with its release); 409 ``not_locked`` otherwise."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    class ReleaseOutputSerializer(serializers.Serializer[object]):
        cycle = serializers.IntegerField()
        finalScore = serializers.FloatField(source="final_score")
        feedback = serializers.CharField()
        releasedBy = serializers.CharField(source="released_by.username")
        releasedAt = serializers.DateTimeField(source="released_at")
        eventId = serializers.UUIDField(source="event_id")

    @extend_schema(
        request=None,
        responses={
            201: ReleaseOutputSerializer,
            200: OpenApiResponse(ReleaseOutputSerializer, description="released before"),
            409: OpenApiResponse(description="not_locked"),
        },
    )
    def post(self, request: Request, session_id: str) -> Response:
        # No body is needed, but one that is sent passes the parser's limits like on every write
        # (a malformed or oversized body is a 400/413, never ignored).
        _ = request.data
        mark = _mark(request, session_id)
        existed = selectors.current_release(mark) is not None
        try:
            release = services.result_release(mark=mark, user=signed_in_user(request))
        except MarkingRefused as refusal:
            return _refused(refusal)
        code = status.HTTP_200_OK if existed else status.HTTP_201_CREATED
        return Response(self.ReleaseOutputSerializer(release).data, status=code)


class SecondMarkingApi(APIView):
    """Turn second-marker mode on or off."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingSecondMarkingInput")
    class InputSerializer(serializers.Serializer[object]):
        # Field.required too (DRF's metaclass moves declared fields off the class).
        required = serializers.BooleanField()  # type: ignore[assignment]

    @extend_schema(
        request=InputSerializer,
        responses={200: MarkSummarySerializer, 409: OpenApiResponse(description=REFUSED)},
    )
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.second_marking_set(
                mark=mark, user=signed_in_user(request), required=data.validated_data["required"]
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        return Response(MarkSummarySerializer(mark).data)


class SecondMarksApi(APIView):
    """Record the second marker's independent levels."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingSecondMarksInput")
    class InputSerializer(serializers.Serializer[object]):
        @extend_schema_serializer(component_name="MarkingSecondMarkItem")
        class Item(serializers.Serializer[object]):
            targetKey = serializers.CharField()
            level = serializers.ChoiceField(choices=LEVELS)
            rationale = serializers.CharField(required=False, allow_blank=True, default="")

        marks = Item(many=True)

    @extend_schema(
        request=InputSerializer,
        responses={201: dict, 409: OpenApiResponse(description=REFUSED)},
    )
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            stored = services.second_marks_record(
                mark=mark, user=signed_in_user(request), marks=data.validated_data["marks"]
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        status_now = selectors.second_mark_status(mark)
        return Response(
            {
                "recorded": [{"targetKey": s.target_key, "level": s.level} for s in stored],
                "missing": status_now.missing,
                "disagreeing": status_now.disagreeing,
            },
            status=status.HTTP_201_CREATED,
        )


class ReportApi(APIView):
    """The per-candidate report: score per target and outcome, excerpts, flags."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        view = selectors.mark_view(mark)
        turns = {row["id"]: row for row in view.transcript}
        return Response(
            {
                **MarkSummarySerializer(mark).data,
                "assessment": view.config.title,
                "scores": view.scores,
                "learningOutcomes": [
                    {"id": o.id, "text": o.text, "score": o.score} for o in view.outcomes
                ],
                "targets": [
                    {
                        "key": t.key,
                        "label": t.label,
                        "nodeId": t.node_id,
                        "level": t.level,
                        "proposedLevel": t.proposed_level,
                        "why": t.current.rationale if t.current else t.rationale,
                        "markerRationale": t.rationale,
                        "excerpts": [
                            {"turnId": turn_id, "text": turns[turn_id]["text"]}
                            for turn_id in t.turn_ids
                            if turn_id in turns
                        ],
                    }
                    for t in view.targets
                ],
                "flags": view.flags,
                "irregularities": [_irregularity(i) for i in view.irregularities],
                "metrics": view.metrics,
                "reproducible": selectors.verify_marks(mark),
            }
        )


class CsvRenderer(BaseRenderer):
    """Lets ``Accept: text/csv`` through content negotiation; the views return the CSV
    themselves (errors still render as the shared JSON body)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: object,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, object] | None = None,
    ) -> bytes:
        return json.dumps(data).encode() if data is not None else b""


class SessionCsvApi(APIView):
    """One session's gradebook row as CSV."""

    area = Area.MARKING
    permission_classes = [AreaPermission]
    renderer_classes = [JSONRenderer, CsvRenderer]

    @extend_schema(responses={(200, "text/csv"): str})
    def get(self, request: Request, session_id: str) -> HttpResponse:
        mark = _mark(request, session_id)
        header, rows = selectors.export_rows([mark])
        return csv_response(f"marks-{mark.session_id}.csv", header, rows)


class CohortApi(APIView):
    """Cohort statistics of an assessment version: distribution, per-target levels and
    agreement, learning outcomes, interaction fairness."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        version = _version(request, version_id)
        view = selectors.cohort_view(user=request.user, version=version)
        costs = costs_of(mark.session_id for mark in view["marks"])
        return Response(
            {
                "versionId": str(version.pk),
                "title": version.title,
                **(view["summary"] or {}),
                "costs": [cost.as_json() for cost in costs],
            }
        )


class CohortCsvApi(APIView):
    """The gradebook CSV of an assessment version (one row per marked session)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]
    renderer_classes = [JSONRenderer, CsvRenderer]

    @extend_schema(responses={(200, "text/csv"): str})
    def get(self, request: Request, version_id: str) -> HttpResponse:
        version = _version(request, version_id)
        header, rows = selectors.export_rows(
            selectors.mark_list(user=request.user, version_id=version.pk)
        )
        return csv_response(f"marks-{version.pk}.csv", header, rows)


class SchemeApi(APIView):
    """The marking configuration compiled from the version (the IR's marking target)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        version = _version(request, version_id)
        scheme = services.scheme_get_or_create(version)
        return Response(
            {
                "compilerVersion": scheme.compiler_version,
                "checksum": scheme.checksum,
                "config": json.loads(scheme.config_json),
            }
        )
