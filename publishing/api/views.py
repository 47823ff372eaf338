"""Publishing endpoints: publish a draft; list and read immutable versions."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission, signed_in_user
from accounts.roles import Area
from authoring.draft_requests import draft_api_or_404, edit_conflict_response
from authoring.services import DraftConflict
from publishing import selectors
from publishing.cost_estimate import DEFAULT_CANDIDATES, MAX_CANDIDATES
from publishing.dry_runs import DryRunRefused, document_dry_run, dry_run_estimate
from publishing.models import PublishedVersion
from publishing.services import PublishNeedsReview, PublishRejected, version_publish
from web.api.errors import unprocessable_response
from web.api.pagination import StandardPagination


class VersionSummarySerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    packageDraftId = serializers.UUIDField(source="draft_id")
    number = serializers.IntegerField()
    packageId = serializers.CharField(source="package_id")
    title = serializers.CharField()
    irVersion = serializers.CharField(source="ir_version")
    adapterVersion = serializers.CharField(source="adapter_version")
    checksum = serializers.CharField()
    publishedBy = serializers.CharField(source="published_by.username")
    publishedAt = serializers.DateTimeField(source="published_at")


class VersionDetailSerializer(VersionSummarySerializer):
    document = serializers.SerializerMethodField()
    validationReport = serializers.JSONField(source="validation_report")

    # Any: drf-spectacular documents the return type; a version's document is any JSON.
    def get_document(self, obj: PublishedVersion) -> Any:
        return json.loads(obj.canonical_json)


def _get_version(request: Request, version_id: str) -> PublishedVersion:
    try:
        return selectors.version_get(user=request.user, version_id=version_id)
    except (PublishedVersion.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such version.") from None


class PublishApi(APIView):
    """Publish the draft: validate + compile + store atomically; 422 with the report if rejected."""

    area = Area.STUDIO
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="Publish")
    class InputSerializer(serializers.Serializer[object]):
        revision = serializers.IntegerField(required=False)

    @extend_schema(
        request=InputSerializer,
        responses={
            201: VersionSummarySerializer,
            200: OpenApiResponse(VersionSummarySerializer, description="unchanged: latest version"),
            409: OpenApiResponse(description="edit conflict"),
            422: OpenApiResponse(
                description="rejected (the body has the validation report) or review_missing "
                "(the owner requires an approval; details.missing names what is missing)"
            ),
        },
    )
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            outcome = version_publish(
                draft=draft,
                user=signed_in_user(request),
                expected_revision=data.validated_data.get("revision"),
            )
        except DraftConflict as conflict:
            return edit_conflict_response(conflict)
        except PublishRejected as rejected:
            return unprocessable_response("rejected", str(rejected), {"report": rejected.report})
        except PublishNeedsReview as refused:
            return unprocessable_response(
                "review_missing", str(refused), {"missing": refused.missing}
            )
        return Response(
            VersionSummarySerializer(outcome.version).data,
            status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK,
        )


class VersionListApi(APIView):
    """Published versions you can see, optionally of one draft (``?package=<draft id>``)."""

    pagination_class = StandardPagination

    @extend_schema(
        parameters=[OpenApiParameter("package", str, description="Only this draft's versions.")],
        responses=VersionSummarySerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        draft_id = request.query_params.get("package")
        paginator = self.pagination_class()
        qs = selectors.version_list(user=request.user, draft_id=draft_id or None)
        page = paginator.paginate_queryset(qs, request, self)
        return paginator.get_paginated_response(VersionSummarySerializer(page, many=True).data)


class VersionDetailApi(APIView):
    @extend_schema(responses=VersionDetailSerializer)
    def get(self, request: Request, version_id: str) -> Response:
        return Response(VersionDetailSerializer(_get_version(request, version_id)).data)


class VersionReportApi(APIView):
    """The validation report stored with the version at publication."""

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        return Response(_get_version(request, version_id).validation_report)


class VersionCompiledApi(APIView):
    """The compiled Pipecat flow stored with the version (byte-stable JSON)."""

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        return Response(json.loads(_get_version(request, version_id).compiled_json))


class DraftDryRunApi(APIView):
    """The dry run of a draft: the stored document, or (if given) a document you are editing.

    Simulated candidates run through the runtime controller; nothing is stored. 422 with the
    validation report when the package does not pass validation. ``costEstimate``: the
    estimated cost of an exam and of a sitting of ``candidates`` (default 100) from the dry run,
    per exam mode, with its assumptions (docs/studio.md, "Dry run"); null without an examiner
    bot.
    """

    area = Area.STUDIO
    permission_classes = [AreaPermission]

    class DryRunInputSerializer(serializers.Serializer[object]):
        document = serializers.JSONField(required=False)
        candidates = serializers.IntegerField(
            required=False, min_value=1, max_value=MAX_CANDIDATES, default=DEFAULT_CANDIDATES
        )

    @extend_schema(
        request=DryRunInputSerializer,
        responses={
            200: OpenApiResponse(description="the dry-run report"),
            422: OpenApiResponse(description="the package does not pass validation"),
        },
    )
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.DryRunInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        document = data.validated_data.get("document", draft.document)
        try:
            report = document_dry_run(document=document)
        except DryRunRefused as refused:
            return unprocessable_response(
                "invalid_package", str(refused), {"report": refused.report}
            )
        cost = dry_run_estimate(
            document=document, report=report, candidates=data.validated_data["candidates"]
        )
        return Response({**report, "costEstimate": cost.as_json() if cost else None})


class VersionDryRunApi(APIView):
    """The dry-run report stored with the version at publication (``{}`` for older ones)."""

    @extend_schema(responses=dict)
    def get(self, request: Request, version_id: str) -> Response:
        return Response(_get_version(request, version_id).dry_run_report)
