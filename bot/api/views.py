"""The studio's preview endpoint (``bot.studio_preview``): routed with the studio's API under
``/api/v1/packages/<id>/preview/``, served by the bot app, which owns the rehearsal examiner
(authoring sits below the bot and never imports it)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from authoring.api.views import StudioApi
from authoring.draft_requests import draft_api_or_404
from bot.studio_preview import PreviewInputError, parse_inputs, run_preview
from ioa.schema import load_package
from ioa.validation import validate_package
from web.api.errors import unprocessable_response


class DraftPreviewApi(StudioApi):
    """Preview the saved draft as a candidate (text): the author's inputs so far are replayed
    through the runtime controller with the offline examiner; returns the conversation, the
    controller's decisions and its state. Nothing is stored (a preview never counts).
    422 when the draft does not pass validation or an input is malformed."""

    class PreviewInputSerializer(serializers.Serializer[object]):
        inputs = serializers.JSONField(help_text="[{atMs, text} | {atMs, command}], in order")

    @extend_schema(
        request=PreviewInputSerializer,
        responses={200: dict, 422: OpenApiResponse(description="invalid draft or inputs")},
    )
    def post(self, request: Request, draft_id: str) -> Response:
        draft = draft_api_or_404(request, draft_id)
        data = self.PreviewInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = validate_package(draft.document)
        if not report.passed:
            return unprocessable_response(
                "invalid_package",
                "Preview needs a saved package that passes validation; fix its errors first.",
                {"report": report.to_dict()},
            )
        try:
            inputs = parse_inputs(data.validated_data["inputs"])
        except PreviewInputError as problem:
            return unprocessable_response("invalid_inputs", str(problem), {})
        result = run_preview(load_package(draft.document), inputs)
        return Response({"revision": draft.revision, **result})
