"""Root URL map. Each area has its prefix; the API lives under /api/v1/."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from accounts.views import home
from config.health import healthz

admin.site.site_header = "Viva platform administration"
admin.site.site_title = "Viva admin"

urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("accounts.urls")),
    path("studio/", include("authoring.urls")),
    path("", include("sessions.urls")),
    path("marking/", include("marking.urls")),
    path("voice/", include("bot.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/v1/", include("config.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
]
