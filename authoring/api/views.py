"""Draft package endpoints. Other people's drafts answer 404 (filtered in the selectors)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import ProtectedError
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission, signed_in_user
from accounts.roles import Area
from authoring import presence, selectors, services
from authoring.bank_insert import ExtractedNode, NodeNotFound
from authoring.draft_requests import draft_api_or_404, edit_conflict_response
from authoring.models import DraftPackage, QuestionBankEntry
from authoring.question_templates import TEMPLATE_IDS
from ioa.compiler.types import JSONObject
from ioa.schema.export import build_json_schema
from ioa.validation import validate_package
from web.api.pagination import StandardPagination


class ReportSerializer(serializers.Serializer[object]):
    """A validation report (chapter 08 format, plus info[])."""

    packageId = serializers.CharField(allow_null=True)
    irVersion = serializers.CharField(allow_null=True)
    validatedAt = serializers.CharField()
    result = serializers.ChoiceField(choices=["pass", "reject"])
    # Named like Serializer.errors: DRF's metaclass moves declared fields off the class.
    errors = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]
    warnings = serializers.ListField(child=serializers.DictField())
    info = serializers.ListField(child=serializers.DictField())
    summary = serializers.DictField()


class DraftOutputSerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    collaborators = serializers.SerializerMethodField()
    revision = serializers.IntegerField()
    document = serializers.JSONField()
    lastReport = serializers.JSONField(source="last_report")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def get_collaborators(self, obj: DraftPackage) -> list[str]:
        return sorted(u.username for u in obj.collaborators.all())


class DraftSummarySerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    revision = serializers.IntegerField()
    lastResult = serializers.CharField(source="last_result", allow_null=True)
    versionCount = serializers.IntegerField(source="version_count")
    updatedAt = serializers.DateTimeField(source="updated_at")


class StudioApi(APIView):
    area = Area.STUDIO
    permission_classes = [AreaPermission]


class DraftListApi(StudioApi):
    """List your packages, or create one from a JSON document or a shipped example."""

    @extend_schema_serializer(component_name="PackageCreate")
    class InputSerializer(serializers.Serializer[object]):
        document = serializers.JSONField(required=False)
        example = serializers.CharField(required=False)
        title = serializers.CharField(required=False, allow_blank=True, max_length=300)

        # Any: DRF types Serializer.validate's attrs as Any.
        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("document" in attrs) == ("example" in attrs):
                raise serializers.ValidationError("Give exactly one of 'document' or 'example'.")
            return attrs

    pagination_class = StandardPagination

    @extend_schema(responses=DraftSummarySerializer(many=True))
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.draft_list(user=request.user), request, self)
        return paginator.get_paginated_response(DraftSummarySerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: DraftOutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if "example" in data.validated_data:
            try:
                draft = services.draft_create_from_example(
                    owner=signed_in_user(request), example=data.validated_data["example"]
                )
            except ValueError as exc:
                raise serializers.ValidationError({"example": [str(exc)]}) from exc
        else:
            draft = services.draft_create(
                owner=signed_in_user(request),
                document=data.validated_data["document"],
                title=data.validated_data.get("title", ""),
            )
        return Response(DraftOutputSerializer(draft).data, status=status.HTTP_201_CREATED)


class DraftDetailApi(StudioApi):
    """Read, save (with the revision you edited) or delete one of your packages."""

    @extend_schema_serializer(component_name="PackageSave")
    class InputSerializer(serializers.Serializer[object]):
        document = serializers.JSONField()
        revision = serializers.IntegerField(
            required=False, help_text="The revision you edited; 409 if someone saved since."
        )

    @extend_schema(responses=DraftOutputSerializer)
    def get(self, request: Request, draft_id: str) -> Response:
        return Response(DraftOutputSerializer(draft_api_or_404(request, draft_id)).data)

    @extend_schema(
        request=InputSerializer,
        responses={200: DraftOutputSerializer, 409: OpenApiResponse(description="edit conflict")},
    )
    def put(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            draft = services.draft_save(
                draft=draft,
                document=data.validated_data["document"],
                expected_revision=data.validated_data.get("revision"),
            )
        except services.DraftConflict as conflict:
            return edit_conflict_response(conflict)
        return Response(DraftOutputSerializer(draft).data)

    @extend_schema(responses={204: None, 409: OpenApiResponse(description="has versions")})
    def delete(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        user = signed_in_user(request)
        if draft.owner_id != user.pk and user.role != "admin":
            raise NotFound("No such package.")
        try:
            draft.delete()
        except ProtectedError:
            return Response(
                {
                    "error": {
                        "code": "has_versions",
                        "message": "This package has published versions and cannot be deleted.",
                        "details": {},
                    }
                },
                status=status.HTTP_409_CONFLICT,
            )
        return Response(status=status.HTTP_204_NO_CONTENT)


class DraftValidateApi(StudioApi):
    """Validate a package: the stored document, or (if given) a document you are editing.

    Nothing is saved; the studio calls this as you type.
    """

    @extend_schema_serializer(component_name="PackageValidate")
    class InputSerializer(serializers.Serializer[object]):
        document = serializers.JSONField(required=False)

    @extend_schema(request=InputSerializer, responses=ReportSerializer)
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        document = data.validated_data.get("document", draft.document)
        return Response(validate_package(document).to_dict())


class DraftPresenceApi(StudioApi):
    """Say that you have this package open in the studio (the editor sends this every 20 s
    while it is visible, every 5 s while someone else has it open too), or that you left it;
    answers who else has it open now and the package's saved revision (a newer one than the
    page holds: someone else saved, and the editor brings their changes in).

    Someone counts as having it open for 60 s after their last heartbeat, or until their page
    says it left. Only people who may edit the package (owner, co-authors, admins) may ask.
    """

    @extend_schema_serializer(component_name="PackagePresenceBeat")
    class InputSerializer(serializers.Serializer[object]):
        left = serializers.BooleanField(
            required=False, default=False, help_text="True when your editor page is closing."
        )
        nodeId = serializers.CharField(
            required=False,
            allow_null=True,
            allow_blank=True,
            default=None,
            max_length=presence.NODE_ID_MAX,
            help_text="The node your editor has open (shown to the others); empty for none.",
        )

    @extend_schema_serializer(component_name="PackagePresence")
    class OutputSerializer(serializers.Serializer[object]):
        @extend_schema_serializer(component_name="PackagePresenceEditor")
        class EditorSerializer(serializers.Serializer[object]):
            name = serializers.CharField(help_text="Their display name.")
            lastSeen = serializers.DateTimeField(source="last_seen")
            nodeId = serializers.CharField(
                source="node_id", allow_null=True, help_text="The node they have open, if any."
            )

        others = EditorSerializer(many=True, help_text="Everyone else with the package open.")
        heartbeatSec = serializers.IntegerField(
            help_text="Send the next heartbeat after this (sooner while others have it open)."
        )
        revision = serializers.IntegerField(
            help_text="The draft's saved revision now: a newer one than your page holds means "
            "someone else saved."
        )
        expiresAfterSec = serializers.IntegerField(
            help_text="How long after a heartbeat someone still counts as here."
        )

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        user = signed_in_user(request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["left"]:
            services.draft_presence_leave(draft=draft, user=user)
        else:
            services.draft_presence_note(
                draft=draft, user=user, node_id=data.validated_data["nodeId"] or None
            )
        others = selectors.draft_presence_others(draft=draft, user=user)
        body = {
            "others": others,
            "heartbeatSec": (
                presence.SHARED_HEARTBEAT_SECONDS if others else presence.HEARTBEAT_SECONDS
            ),
            "revision": draft.revision,
            "expiresAfterSec": presence.EXPIRY_SECONDS,
        }
        return Response(self.OutputSerializer(body).data)


class ValidateDocumentApi(StudioApi):
    """Validate any package document without storing it (for integrators and CI pipelines)."""

    @extend_schema_serializer(component_name="DocumentValidate")
    class InputSerializer(serializers.Serializer[object]):
        document = serializers.JSONField()

    @extend_schema(request=InputSerializer, responses=ReportSerializer)
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(validate_package(data.validated_data["document"]).to_dict())


class PackageJsonSchemaApi(APIView):
    """The package format as JSON Schema (draft 2020-12), for editors and API clients."""

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    throttle_classes: list[type] = []  # a static document, fetched by every editor page

    @extend_schema(responses=dict)
    def get(self, request: Request) -> Response:
        return Response(build_json_schema())


# --- Question bank ------------------------------------------------------------------------------


@extend_schema_serializer(component_name="QuestionBankEntry")
class BankEntryOutputSerializer(serializers.Serializer[object]):
    """A bank entry: the node with its targets and rubric, the outcomes it names, provenance."""

    @extend_schema_serializer(component_name="QuestionBankEntrySource")
    class SourceSerializer(serializers.Serializer[object]):
        draftId = serializers.UUIDField(source="source_draft_id", allow_null=True)
        revision = serializers.IntegerField(source="source_revision", allow_null=True)
        versionNumber = serializers.IntegerField(
            source="source_version_number",
            allow_null=True,
            help_text="The draft's latest published version when the node was saved.",
        )
        packageId = serializers.CharField(source="source_package_id")
        packageTitle = serializers.CharField(source="source_package_title")
        nodeId = serializers.CharField(source="source_node_id")

    id = serializers.UUIDField()
    title = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    shared = serializers.BooleanField()
    owner = serializers.CharField(source="owner.username")
    language = serializers.CharField()
    node = serializers.JSONField()
    learningOutcomes = serializers.JSONField(source="learning_outcomes")
    savedFrom = SourceSerializer(source="*", help_text="Where the node was saved from.")
    createdAt = serializers.DateTimeField(source="created_at")


def bank_entry_or_404(request: Request, entry_id: str) -> QuestionBankEntry:
    """The entry for an API view; NotFound when it is absent, not visible to the user (another
    author's private entry) or ``entry_id`` is not a UUID."""
    try:
        return selectors.bank_entry_get(user=request.user, entry_id=entry_id)
    except (QuestionBankEntry.DoesNotExist, ValueError, TypeError, ValidationError):
        raise NotFound("No such question bank entry.") from None


class BankEntryListApi(StudioApi):
    """Search the question bank (yours and the shared entries; ``q``: words in the title, tags
    or question, ``tag``: one tag), or save a node of one of your drafts to it."""

    @extend_schema_serializer(component_name="QuestionBankEntryCreate")
    class InputSerializer(serializers.Serializer[object]):
        draftId = serializers.UUIDField()
        nodeId = serializers.CharField(max_length=128)
        title = serializers.CharField(required=False, allow_blank=True, max_length=200)
        tags = serializers.ListField(
            child=serializers.CharField(max_length=40), required=False, max_length=20
        )
        shared = serializers.BooleanField(
            required=False, default=False, help_text="Every author may find and insert it."
        )

    pagination_class = StandardPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description="Words the entry must contain."),
            OpenApiParameter("tag", str, description="A tag the entry must have."),
        ],
        responses=BankEntryOutputSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        entries = selectors.bank_entry_list(
            user=request.user,
            query=str(request.query_params.get("q", ""))[:200],
            tag=str(request.query_params.get("tag", ""))[:40],
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(entries, request, self)
        return paginator.get_paginated_response(BankEntryOutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: BankEntryOutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        draft = draft_api_or_404(request, str(values["draftId"]))
        try:
            entry = services.bank_entry_save(
                owner=signed_in_user(request),
                draft=draft,
                node_id=values["nodeId"],
                title=values.get("title", ""),
                tags=values.get("tags", []),
                shared=values["shared"],
            )
        except NodeNotFound as exc:
            raise serializers.ValidationError({"nodeId": [str(exc)]}) from exc
        return Response(BankEntryOutputSerializer(entry).data, status=status.HTTP_201_CREATED)


class BankEntryDetailApi(StudioApi):
    """Read a bank entry you may see; change the title, tags or sharing of one of yours, or
    delete it (another author's shared entry answers 404 to both)."""

    @extend_schema(responses=BankEntryOutputSerializer)
    def get(self, request: Request, entry_id: str) -> Response:
        return Response(BankEntryOutputSerializer(bank_entry_or_404(request, entry_id)).data)

    @extend_schema_serializer(component_name="QuestionBankEntryUpdate")
    class InputSerializer(serializers.Serializer[object]):
        title = serializers.CharField(required=False, max_length=200)
        tags = serializers.ListField(
            child=serializers.CharField(max_length=40), required=False, max_length=20
        )
        shared = serializers.BooleanField(required=False)

    @extend_schema(request=InputSerializer, responses=BankEntryOutputSerializer)
    def patch(self, request: Request, entry_id: str) -> Response:
        entry = bank_entry_or_404(request, entry_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            entry = services.bank_entry_update(
                entry=entry,
                actor=signed_in_user(request),
                title=values.get("title"),
                tags=values.get("tags"),
                shared=values.get("shared"),
            )
        except services.BankEntryRefused:
            raise NotFound("No such question bank entry.") from None
        except ValueError as exc:
            raise serializers.ValidationError({"title": [str(exc)]}) from exc
        return Response(BankEntryOutputSerializer(entry).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, entry_id: str) -> Response:
        entry = bank_entry_or_404(request, entry_id)
        try:
            services.bank_entry_delete(entry=entry, actor=signed_in_user(request))
        except services.BankEntryRefused:
            raise NotFound("No such question bank entry.") from None
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_serializer(component_name="QuestionTemplate")
class BankTemplateOutputSerializer(serializers.Serializer[object]):
    id = serializers.CharField()
    language = serializers.CharField()
    title = serializers.CharField()
    node = serializers.JSONField()


class BankTemplateListApi(StudioApi):
    """The built-in question templates in a package language (``language``: en, de or es;
    others get English)."""

    @extend_schema(
        parameters=[OpenApiParameter("language", str, description="The package's language.")],
        responses=BankTemplateOutputSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        templates = selectors.bank_templates(language=request.query_params.get("language"))
        return Response(BankTemplateOutputSerializer(templates, many=True).data)


class DraftBankInsertApi(StudioApi):
    """Insert a bank entry or a question template into this package's document: ids that clash
    with the document's are renamed, learning outcomes mapped onto the package's (same text) or
    added, and the question placed after ``afterNodeId`` (by default the last question outside a
    pool). Answers the new document and its report; saves it only when ``revision`` is given
    (409 if someone saved since). 422 when the question would add a validation error."""

    @extend_schema_serializer(component_name="PackageBankInsert")
    class InputSerializer(serializers.Serializer[object]):
        entryId = serializers.UUIDField(required=False)
        templateId = serializers.ChoiceField(choices=list(TEMPLATE_IDS), required=False)
        document = serializers.JSONField(
            required=False, help_text="The document you are editing; the saved one if omitted."
        )
        afterNodeId = serializers.CharField(required=False, allow_null=True, max_length=128)
        revision = serializers.IntegerField(
            required=False, help_text="Save the result as the revision after this one."
        )

        def validate(self, attrs: JSONObject) -> JSONObject:
            if ("entryId" in attrs) == ("templateId" in attrs):
                raise serializers.ValidationError("Give exactly one of 'entryId' or 'templateId'.")
            return attrs

    @extend_schema_serializer(component_name="PackageBankInserted")
    class OutputSerializer(serializers.Serializer[object]):
        nodeId = serializers.CharField(help_text="The inserted node's id (after any rename).")
        after = serializers.CharField(allow_null=True, help_text="The node it follows.")
        renamed = serializers.DictField(child=serializers.CharField())
        outcomesMapped = serializers.DictField(child=serializers.CharField())
        outcomesAdded = serializers.ListField(child=serializers.CharField())
        document = serializers.JSONField()
        report = ReportSerializer()
        revision = serializers.IntegerField(allow_null=True, help_text="Set when saved.")

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            409: OpenApiResponse(description="edit conflict"),
            422: OpenApiResponse(description="the question would add validation errors"),
        },
    )
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        document = values.get("document", draft.document)
        try:
            result, report = services.bank_insert_into(
                document=document,
                extracted=self._extracted(request, values, document),
                after=values.get("afterNodeId") or None,
            )
        except services.InsertRefused as refused:
            return insert_refused_response(refused)
        except (NodeNotFound, ValueError) as exc:
            raise serializers.ValidationError({"afterNodeId": [str(exc)]}) from exc
        revision = None
        if "revision" in values:
            try:
                draft = services.draft_save(
                    draft=draft, document=result.document, expected_revision=values["revision"]
                )
            except services.DraftConflict as conflict:
                return edit_conflict_response(conflict)
            revision = draft.revision
        body = {
            "nodeId": result.node_id,
            "after": result.after,
            "renamed": result.renamed,
            "outcomesMapped": result.outcomes_mapped,
            "outcomesAdded": result.outcomes_added,
            "document": result.document,
            "report": report,
            "revision": revision,
        }
        return Response(self.OutputSerializer(body).data)

    @staticmethod
    def _extracted(request: Request, values: JSONObject, document: object) -> ExtractedNode:
        if "entryId" in values:
            return selectors.bank_entry_extracted(bank_entry_or_404(request, values["entryId"]))
        metadata = document.get("metadata") if isinstance(document, dict) else None
        language = metadata.get("language") if isinstance(metadata, dict) else None
        template = selectors.bank_template_get(
            template_id=values["templateId"],
            language=language if isinstance(language, str) else None,
        )
        return selectors.template_extracted(template)


def insert_refused_response(refused: services.InsertRefused) -> Response:
    """422 with the shared error body; ``details.errors`` are the findings it would add."""
    return Response(
        {
            "error": {
                "code": "insert_refused",
                "message": str(refused),
                "details": {"errors": refused.errors},
            }
        },
        status=status.HTTP_422_UNPROCESSABLE_ENTITY,
    )
