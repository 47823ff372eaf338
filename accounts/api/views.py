"""Account endpoints: who am I. (Issuing a candidate's invitation is a proctoring endpoint:
``proctoring.api.views.InvitationCreateApi``.)"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import signed_in_user
from accounts.roles import HOME_AREA, Area


class MeApi(APIView):
    """The signed-in user, their role and the areas they may enter."""

    @extend_schema_serializer(component_name="Me")
    class OutputSerializer(serializers.Serializer[object]):
        id = serializers.IntegerField()
        username = serializers.CharField()
        name = serializers.CharField()
        role = serializers.CharField()
        homeArea = serializers.CharField()
        areas = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        user = signed_in_user(request)
        data = {
            "id": user.pk,
            "username": user.username,
            "name": user.name,
            "role": user.role,
            "homeArea": HOME_AREA[user.role].value,
            "areas": [area.value for area in Area if user.may_enter(area)],
        }
        return Response(self.OutputSerializer(data).data)
