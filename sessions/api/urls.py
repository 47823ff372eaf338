"""The sessions app's routes under /api/v1/ (``config.api.urls``)."""

from django.urls import path

from sessions.api import views

urlpatterns = [
    path(
        "sessions/<uuid:session_id>/materials/",
        views.MaterialUploadApi.as_view(),
        name="api-session-materials",
    ),
]
