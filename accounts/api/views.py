"""Account endpoints: who am I, and issuing candidate invitations."""

from __future__ import annotations

from datetime import timedelta

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission
from accounts.roles import HOME_AREA, Area
from accounts.services import candidate_get_or_create, invitation_create


class MeApi(APIView):
    """The signed-in user, their role and the areas they may enter."""

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        username = serializers.CharField()
        name = serializers.CharField()
        role = serializers.CharField()
        homeArea = serializers.CharField()
        areas = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        user = request.user
        data = {
            "id": user.pk,
            "username": user.username,
            "name": user.name,
            "role": user.role,
            "homeArea": HOME_AREA[user.role].value,
            "areas": [area.value for area in Area if user.may_enter(area)],
        }
        return Response(self.OutputSerializer(data).data)


class InvitationCreateApi(APIView):
    """Issues a single-use invitation link for a candidate (created on first use of the email)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    class InputSerializer(serializers.Serializer):
        email = serializers.EmailField()
        displayName = serializers.CharField(required=False, allow_blank=True, max_length=150)
        ttlHours = serializers.IntegerField(required=False, min_value=1, max_value=24 * 60)
        nextPath = serializers.RegexField(r"^/[^\s]*$", required=False, allow_blank=True)

    class OutputSerializer(serializers.Serializer):
        id = serializers.UUIDField()
        candidate = serializers.CharField()
        url = serializers.URLField()
        expiresAt = serializers.DateTimeField()

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            candidate = candidate_get_or_create(
                email=data.validated_data["email"],
                display_name=data.validated_data.get("displayName", ""),
            )
        except ValueError as exc:
            raise serializers.ValidationError({"email": [str(exc)]}) from exc
        ttl_hours = data.validated_data.get("ttlHours")
        issued = invitation_create(
            candidate=candidate,
            created_by=request.user,
            ttl=timedelta(hours=ttl_hours) if ttl_hours else None,
            next_path=data.validated_data.get("nextPath", ""),
        )
        out = {
            "id": issued.invitation.id,
            "candidate": candidate.username,
            "url": issued.url,
            "expiresAt": issued.invitation.expires_at,
        }
        return Response(self.OutputSerializer(out).data, status=status.HTTP_201_CREATED)
