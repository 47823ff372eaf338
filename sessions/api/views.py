"""Candidate materials under /api/v1/ (issue #35): an integrator or staff member uploads a
candidate's report or submission for a session.

``POST /sessions/<id>/materials/`` (multipart: ``file``, optional ``kind``, default the first
kind the exam's grounded nodes read) stores it through ``sessions.services.material_upload``
(source ``api``) and answers 201 with what was stored (never the text); 400
``material_refused`` names what is wrong (too large, wrong type, encrypted PDF, no text, the
exam started). The area is ``proctor`` (candidates 403, anonymous 401); sessions outside
``ExamSession.objects.visible_to`` answer 404.
"""

from __future__ import annotations

import uuid

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission
from accounts.models import User
from accounts.roles import Area
from sessions import services
from sessions.material_text import MAX_UPLOAD_BYTES, MaterialRefused
from sessions.materials import material_kinds
from sessions.models import CandidateMaterial, ExamSession
from web.api.schema import ErrorSerializer


def material_json(material: CandidateMaterial) -> dict[str, object]:
    """What the API says about a stored material: its ids, type, size and checksums."""
    return {
        "id": str(material.pk),
        "materialId": material.material_id,
        "sessionId": str(material.session_id),
        "kind": material.kind,
        "fileType": material.file_type,
        "filename": material.filename,
        "size": material.size,
        "sha256": material.sha256,
        "textSha256": material.text_sha256,
        "textChars": len(material.text),
        "source": material.source,
        "createdAt": material.created_at.isoformat(),
    }


class MaterialUploadApi(APIView):
    """Upload a candidate's material for a session (module docstring)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="MaterialUpload")
    class InputSerializer(serializers.Serializer[object]):
        file = serializers.FileField(allow_empty_file=True, help_text="The file (multipart).")
        kind = serializers.ChoiceField(choices=["submission", "report"], required=False)

    @extend_schema(
        request=InputSerializer,
        responses={
            201: dict,
            400: OpenApiResponse(ErrorSerializer, description="the file cannot be used"),
        },
    )
    def post(self, request: Request, session_id: uuid.UUID) -> Response:
        session = ExamSession.objects.visible_to(request.user).filter(pk=session_id).first()
        if session is None:
            raise NotFound("No such session.")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        kinds = material_kinds(session.sitting.version)
        try:
            material = services.material_upload(
                session=session,
                kind=data.validated_data.get("kind") or (kinds[0] if kinds else "submission"),
                filename=data.validated_data["file"].name or "",
                data=data.validated_data["file"].read(MAX_UPLOAD_BYTES + 1),
                uploaded_by=request.user if isinstance(request.user, User) else None,
                source=CandidateMaterial.Source.API,
            )
        except MaterialRefused as refused:
            body = {"code": "material_refused", "message": refused.message, "details": {}}
            return Response({"error": body}, status=status.HTTP_400_BAD_REQUEST)
        return Response(material_json(material), status=status.HTTP_201_CREATED)
