"""Marking endpoints under /api/v1/marking/: marks, decisions, overrides, moderation, reports
and exports. Thin views: input and output serializers nested in each view, reads through
``marking.selectors`` (authorization in the queryset: a session or version the user may not see
answers 404), writes through ``marking.services`` (a refused action answers 409, or 400 for bad
input, with the shared error body)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission
from accounts.roles import Area
from config.api.pagination import StandardPagination
from marking import selectors, services
from marking.models import SessionMark, TargetDecision
from marking.services import MarkingRefused

BAD_INPUT = {"rationale_required", "invalid_level", "unknown_target"}
LEVELS = ["excellent", "satisfactory", "partial", "absent"]


def _mark(request: Request, session_id: str) -> SessionMark:
    try:
        return selectors.mark_get(user=request.user, session_id=session_id)
    except SessionMark.DoesNotExist:
        raise NotFound("No such marked session.") from None


def _version(request: Request, version_id: str) -> Any:
    from publishing.models import PublishedVersion

    try:
        return selectors.version_get(user=request.user, version_id=version_id)
    except PublishedVersion.DoesNotExist:
        raise NotFound("No such assessment.") from None


def _refused(refusal: MarkingRefused) -> Response:
    code = status.HTTP_400_BAD_REQUEST if refusal.code in BAD_INPUT else status.HTTP_409_CONFLICT
    return Response(
        {"error": {"code": refusal.code, "message": refusal.message, "details": {}}}, status=code
    )


class UserSerializer(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.CharField()


class DecisionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    targetKey = serializers.CharField(source="target_key")
    number = serializers.IntegerField()
    level = serializers.CharField()
    source = serializers.CharField()
    rationale = serializers.CharField()
    author = UserSerializer(allow_null=True)
    supersedes = serializers.IntegerField(source="supersedes_id", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    evidence = serializers.JSONField()


class MarkSummarySerializer(serializers.Serializer):
    sessionId = serializers.UUIDField(source="session_id")
    candidate = UserSerializer(source="session.candidate")
    versionId = serializers.UUIDField(source="session.sitting.version_id")
    assessment = serializers.CharField(source="session.sitting.version.title")
    state = serializers.CharField()
    examScore = serializers.FloatField(source="final_score")
    proposedScore = serializers.FloatField(source="proposed_score")
    reviewFlags = serializers.IntegerField(source="review_flags")
    secondMarkingRequired = serializers.BooleanField(source="second_marking_required")
    lockedAt = serializers.DateTimeField(source="locked_at", allow_null=True)
    lockedBy = UserSerializer(source="locked_by", allow_null=True)
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
        "proctor": UserSerializer(proctor).data if proctor is not None else None,
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
    panel = view["panel"]
    return {
        **MarkSummarySerializer(mark).data,
        "scores": view["scores"],
        "proposedScores": view["proposedScores"],
        "targets": [
            {
                "key": t["key"],
                "targetId": t["targetId"],
                "nodeId": t["nodeId"],
                "label": t["label"],
                "weight": t["weight"],
                "level": t["level"],
                "proposedLevel": t["proposedLevel"],
                "overridden": t["overridden"],
                "currentDecision": DecisionSerializer(t["current"]).data if t["current"] else None,
                "rationale": t["rationale"],
                "rules": t["rules"],
                "signals": t["signals"],
                "turnIds": t["turnIds"],
                "learningOutcomes": t["outcomes"],
                "descriptor": t["descriptor"],
                "flags": t["flags"],
                "irregularitySeqs": [i["seq"] for i in t["irregularities"]],
                "affectedTurnIds": t["affectedTurnIds"],
                "panel": t["panel"],
            }
            for t in view["targets"]
        ],
        "flags": view["flags"],
        "irregularities": [_irregularity(i) for i in view["irregularities"]],
        "metrics": view["metrics"],
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
                "missing": view["second"]["missing"],
                "disagreeing": view["second"]["disagreeing"],
                "marks": {k: s.level for k, s in view["second"]["marks"].items()},
            }
            if view["second"]
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
            for a in view["appeals"]
        ],
    }


class MarkListApi(APIView):
    """Marked sessions you may see (``?version=<id>``, ``?state=``)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=MarkSummarySerializer(many=True))
    def get(self, request: Request) -> Response:
        version = request.query_params.get("version") or None
        qs = selectors.mark_list(user=request.user)
        if version is not None:
            qs = qs.filter(session__sitting__version_id__in=[_version(request, version).pk])
        state = request.query_params.get("state")
        if state:
            qs = qs.filter(state=state)
        paginator = StandardPagination()
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
    class InputSerializer(serializers.Serializer):
        targetKey = serializers.CharField()
        level = serializers.ChoiceField(choices=LEVELS)
        rationale = serializers.CharField(min_length=services.MIN_RATIONALE_CHARS)

    @extend_schema(
        request=InputSerializer,
        responses={201: DecisionSerializer, 409: OpenApiResponse(description="locked")},
    )
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            decision = services.override_decision(
                mark=mark,
                target_key=data.validated_data["targetKey"],
                level=data.validated_data["level"],
                rationale=data.validated_data["rationale"],
                user=request.user,
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        return Response(DecisionSerializer(decision).data, status=status.HTTP_201_CREATED)


class LockApi(APIView):
    """Lock the marks (sign-off). 409 when already locked or second marking is unresolved."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingLockInput")
    class InputSerializer(serializers.Serializer):
        note = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses=MarkSummarySerializer)
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.lock_marks(mark=mark, user=request.user, note=data.validated_data["note"])
        except MarkingRefused as refusal:
            return _refused(refusal)
        return Response(MarkSummarySerializer(mark).data)


class AppealApi(APIView):
    """Open an appeal: reopens locked marks (a reason is required)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingAppealInput")
    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(min_length=services.MIN_RATIONALE_CHARS)

    @extend_schema(request=InputSerializer, responses={201: MarkSummarySerializer})
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.open_appeal(mark=mark, user=request.user, reason=data.validated_data["reason"])
        except MarkingRefused as refusal:
            return _refused(refusal)
        mark.refresh_from_db()
        return Response(MarkSummarySerializer(mark).data, status=status.HTTP_201_CREATED)


class SecondMarkingApi(APIView):
    """Turn second-marker mode on or off."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingSecondMarkingInput")
    class InputSerializer(serializers.Serializer):
        required = serializers.BooleanField()

    @extend_schema(request=InputSerializer, responses=MarkSummarySerializer)
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.set_second_marking(
                mark=mark, user=request.user, required=data.validated_data["required"]
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        return Response(MarkSummarySerializer(mark).data)


class SecondMarksApi(APIView):
    """Record the second marker's independent levels."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="MarkingSecondMarksInput")
    class InputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="MarkingSecondMarkItem")
        class Item(serializers.Serializer):
            targetKey = serializers.CharField()
            level = serializers.ChoiceField(choices=LEVELS)
            rationale = serializers.CharField(required=False, allow_blank=True, default="")

        marks = Item(many=True)

    @extend_schema(request=InputSerializer, responses={201: dict})
    def post(self, request: Request, session_id: str) -> Response:
        mark = _mark(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            stored = services.record_second_marks(
                mark=mark, user=request.user, marks=data.validated_data["marks"]
            )
        except MarkingRefused as refusal:
            return _refused(refusal)
        status_now = services.second_mark_status(mark)
        return Response(
            {
                "recorded": [{"targetKey": s.target_key, "level": s.level} for s in stored],
                "missing": status_now["missing"],
                "disagreeing": status_now["disagreeing"],
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
        turns = {row["id"]: row for row in view["transcript"]}
        return Response(
            {
                **MarkSummarySerializer(mark).data,
                "assessment": view["config"].title,
                "scores": view["scores"],
                "learningOutcomes": view["outcomes"],
                "targets": [
                    {
                        "key": t["key"],
                        "label": t["label"],
                        "nodeId": t["nodeId"],
                        "level": t["level"],
                        "proposedLevel": t["proposedLevel"],
                        "why": t["current"].rationale if t["current"] else t["rationale"],
                        "markerRationale": t["rationale"],
                        "excerpts": [
                            {"turnId": turn_id, "text": turns[turn_id]["text"]}
                            for turn_id in t["turnIds"]
                            if turn_id in turns
                        ],
                    }
                    for t in view["targets"]
                ],
                "flags": view["flags"],
                "irregularities": [_irregularity(i) for i in view["irregularities"]],
                "metrics": view["metrics"],
                "reproducible": services.verify_marks(mark),
            }
        )


class CsvRenderer(BaseRenderer):
    """Lets ``Accept: text/csv`` through content negotiation; the views return the CSV
    themselves (errors still render as the shared JSON body)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return json.dumps(data).encode() if data is not None else b""


def _csv(filename: str, header: list[str], rows: list[list[str]]) -> HttpResponse:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class SessionCsvApi(APIView):
    """One session's gradebook row as CSV."""

    area = Area.MARKING
    permission_classes = [AreaPermission]
    renderer_classes = [JSONRenderer, CsvRenderer]

    @extend_schema(responses={(200, "text/csv"): str})
    def get(self, request: Request, session_id: str) -> HttpResponse:
        mark = _mark(request, session_id)
        header, rows = selectors.export_rows([mark])
        return _csv(f"marks-{mark.session_id}.csv", header, rows)


class CohortApi(APIView):
    """Cohort statistics of an assessment version: distribution, per-target levels and
    agreement, learning outcomes, interaction fairness."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        version = _version(request, version_id)
        view = selectors.cohort_view(user=request.user, version=version)
        return Response({"versionId": str(version.pk), "title": version.title, **view["summary"]})


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
        return _csv(f"marks-{version.pk}.csv", header, rows)


class SchemeApi(APIView):
    """The marking configuration compiled from the version (the IR's marking target)."""

    area = Area.MARKING
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        version = _version(request, version_id)
        scheme = services.scheme_for_version(version)
        return Response(
            {
                "compilerVersion": scheme.compiler_version,
                "checksum": scheme.checksum,
                "config": json.loads(scheme.config_json),
            }
        )
