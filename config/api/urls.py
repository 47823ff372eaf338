"""The /api/v1/ tree: every app contributes its routes here."""

from django.urls import include, path

urlpatterns = [
    path("", include("accounts.api.urls")),
    path("", include("authoring.api.urls")),
    path("", include("publishing.api.urls")),
    path("", include("marking.api.urls")),
    path("", include("proctoring.api.urls")),
    path("", include("sessions.api.urls")),
    path("", include("bot.api.urls")),
]
