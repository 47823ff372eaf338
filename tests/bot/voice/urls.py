"""The voice URLs mounted as the project mounts them (``voice/``), for the view tests."""

from django.urls import include, path

urlpatterns = [path("voice/", include("bot.urls"))]
