"""WebSocket routes of the proctoring app (gathered in config/routing.py)."""

from django.urls import path

from proctoring.consumers import SittingOverviewConsumer

websocket_urlpatterns = [
    path("ws/proctor/sittings/<uuid:sitting_id>/", SittingOverviewConsumer.as_asgi()),
]
