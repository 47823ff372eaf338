"""The bot's routes in the API tree (mounted under /api/v1/ by config/api/urls.py)."""

from django.urls import path

from bot.api import views

urlpatterns = [
    path(
        "packages/<str:draft_id>/preview/",
        views.DraftPreviewApi.as_view(),
        name="api-package-preview",
    ),
]
