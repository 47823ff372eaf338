"""WebSocket URL routes of every app, gathered in one list for the ASGI router."""

from django.urls import path

from config.health import HealthSocketConsumer
from proctoring.routing import websocket_urlpatterns as proctoring_sockets
from sessions.routing import websocket_urlpatterns as session_sockets

websocket_urlpatterns = [
    path("ws/healthz/", HealthSocketConsumer.as_asgi()),
    *session_sockets,
    *proctoring_sockets,
]
