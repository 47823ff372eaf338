"""Voice signalling URLs; mounted under ``voice/`` (``path("voice/", include("bot.urls"))``)."""

from django.urls import path

from bot import webrtc_views

app_name = "voice"

urlpatterns = [
    path(
        "sessions/<uuid:session_id>/webrtc/offer",
        webrtc_views.webrtc_offer,
        name="webrtc-offer",
    ),
    path(
        "sessions/<uuid:session_id>/livekit/token",
        webrtc_views.livekit_token,
        name="livekit-token",
    ),
]
