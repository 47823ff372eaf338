"""WebSocket routes of the sessions app (gathered in config/routing.py)."""

from django.urls import path

from sessions.consumers import SessionEventsConsumer

websocket_urlpatterns = [
    path("ws/sessions/<uuid:session_id>/events/", SessionEventsConsumer.as_asgi()),
]
