"""Review before publish: comments on a draft's nodes and the draft's approval (issue #34).
Other people's drafts and comments answer 404 (filtered in the selectors)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.access import signed_in_user
from authoring import selectors, services
from authoring.api.views import StudioApi
from authoring.draft_requests import draft_api_or_404, edit_conflict_response
from authoring.models import DraftPackage, ReviewComment
from authoring.selectors import ReviewState


@extend_schema_serializer(component_name="ReviewComment")
class ReviewCommentOutputSerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    nodeId = serializers.CharField(source="node_id")
    nodeRemoved = serializers.BooleanField(source="node_removed")
    author = serializers.CharField(source="author.username")
    authorName = serializers.CharField(source="author.name")
    revision = serializers.IntegerField()
    text = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")
    resolved = serializers.BooleanField()
    resolvedBy = serializers.CharField(source="resolved_by.username", allow_null=True)


@extend_schema_serializer(component_name="ReviewCommentList")
class ReviewCommentListOutputSerializer(serializers.Serializer[object]):
    """The answer of the comment list: ``{"comments": [...]}``."""

    comments = ReviewCommentOutputSerializer(many=True)


@extend_schema_serializer(component_name="DraftReviewState")
class ReviewStateOutputSerializer(serializers.Serializer[object]):
    approvalRequired = serializers.BooleanField(source="approval_required")
    approvedBy = serializers.CharField(source="approved_by.username", allow_null=True)
    approvedRevision = serializers.IntegerField(source="approved_revision", allow_null=True)
    approvalCurrent = serializers.BooleanField(source="approval_current")
    unresolvedComments = serializers.IntegerField(source="unresolved_comments")


def _comment_or_404(request: Request, draft: DraftPackage, comment_id: str) -> ReviewComment:
    try:
        return selectors.comment_get(user=request.user, draft=draft, comment_id=comment_id)
    except (ReviewComment.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such comment.") from None


def _listed(request: Request, draft: DraftPackage, comment: ReviewComment) -> ReviewComment:
    """``comment`` as listed (with ``node_removed`` set against the current document)."""
    listed = selectors.comment_list(user=request.user, draft=draft)
    return next(c for c in listed if c.pk == comment.pk)


def _state(draft: DraftPackage) -> ReviewState:
    return selectors.review_state(draft=DraftPackage.objects.get(pk=draft.pk))


class DraftCommentListApi(StudioApi):
    """List a draft's comments (on removed nodes too) or add one on a node or the package."""

    @extend_schema_serializer(component_name="ReviewCommentCreate")
    class CommentCreateInputSerializer(serializers.Serializer[object]):
        nodeId = serializers.CharField(required=False, allow_blank=True, max_length=128)
        text = serializers.CharField(max_length=4000)

    @extend_schema(responses=ReviewCommentListOutputSerializer)
    def get(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        comments = selectors.comment_list(user=request.user, draft=draft)
        return Response(ReviewCommentListOutputSerializer({"comments": comments}).data)

    @extend_schema(
        request=CommentCreateInputSerializer, responses={201: ReviewCommentOutputSerializer}
    )
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.CommentCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            comment = services.comment_create(
                draft=draft,
                author=signed_in_user(request),
                node_id=data.validated_data.get("nodeId", ""),
                text=data.validated_data["text"],
            )
        except ValueError as exc:
            raise serializers.ValidationError({"text": [str(exc)]}) from exc
        return Response(
            ReviewCommentOutputSerializer(_listed(request, draft, comment)).data,
            status=status.HTTP_201_CREATED,
        )


class DraftCommentDetailApi(StudioApi):
    """Resolve or reopen a comment."""

    @extend_schema_serializer(component_name="ReviewCommentUpdate")
    class CommentUpdateInputSerializer(serializers.Serializer[object]):
        resolved = serializers.BooleanField()

    @extend_schema(request=CommentUpdateInputSerializer, responses=ReviewCommentOutputSerializer)
    def patch(self, request: Request, draft_id: str, comment_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        comment = _comment_or_404(request, draft, comment_id)
        data = self.CommentUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        comment = services.comment_set_resolved(
            comment=comment, user=signed_in_user(request), resolved=data.validated_data["resolved"]
        )
        return Response(ReviewCommentOutputSerializer(_listed(request, draft, comment)).data)


class DraftReviewApi(StudioApi):
    """Read the draft's review state; the owner says whether publishing needs an approval."""

    @extend_schema_serializer(component_name="DraftReviewUpdate")
    class ReviewUpdateInputSerializer(serializers.Serializer[object]):
        approvalRequired = serializers.BooleanField()

    @extend_schema(responses=ReviewStateOutputSerializer)
    def get(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        return Response(ReviewStateOutputSerializer(_state(draft)).data)

    @extend_schema(request=ReviewUpdateInputSerializer, responses=ReviewStateOutputSerializer)
    def patch(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.ReviewUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.draft_set_approval_required(
                draft=draft,
                user=signed_in_user(request),
                required=data.validated_data["approvalRequired"],
            )
        except services.ReviewRefused as exc:
            raise PermissionDenied(str(exc)) from None
        return Response(ReviewStateOutputSerializer(_state(draft)).data)


class DraftApproveApi(StudioApi):
    """Approve the draft's current revision (409 when it was saved since)."""

    @extend_schema_serializer(component_name="DraftApprove")
    class ApproveInputSerializer(serializers.Serializer[object]):
        revision = serializers.IntegerField()

    @extend_schema(
        request=ApproveInputSerializer,
        responses={
            200: ReviewStateOutputSerializer,
            409: OpenApiResponse(description="edit conflict"),
        },
    )
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.ApproveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.draft_approve(
                draft=draft, user=signed_in_user(request), revision=data.validated_data["revision"]
            )
        except services.DraftConflict as conflict:
            return edit_conflict_response(conflict)
        return Response(ReviewStateOutputSerializer(_state(draft)).data)
