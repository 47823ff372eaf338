"""A URL table with one API view that forgets its area (for tests/accounts/test_area_permission)."""

from __future__ import annotations

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission
from accounts.roles import Area


class ForgotItsArea(APIView):
    permission_classes = [AreaPermission]

    def get(self, request: Request) -> Response:
        return Response({"secret": "served"})


class NamesItsArea(APIView):
    permission_classes = [AreaPermission]
    area = Area.STUDIO

    def get(self, request: Request) -> Response:
        return Response({"studio": "served"})


urlpatterns = [
    path("api/forgot/", ForgotItsArea.as_view()),
    path("api/named/", NamesItsArea.as_view()),
]
