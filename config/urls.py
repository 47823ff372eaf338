"""Root URL map. Each area has its prefix; the API lives under /api/v1/."""

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from accounts.views import home
from config.health import healthz
from config.i18n import javascript_catalog
from config.metrics import metrics
from proctoring import urls as proctoring_urls
from sessions import urls as sessions_urls
from web.api.errors import no_such_endpoint

handler400 = "web.body_limit.bad_request"  # an oversized body is a 413, not a bare 400

admin.site.site_header = "Viva platform administration"
admin.site.site_title = "Viva admin"

urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("accounts.urls")),
    path("studio/", include("authoring.urls")),
    path("studio/", include("publishing.urls")),
    # The candidate's and the proctor's pages share one namespace (exam_sessions:exam-room,
    # exam_sessions:proctor-session): names the templates, emails and LTI links already use.
    path(
        "", include(([*sessions_urls.urlpatterns, *proctoring_urls.urlpatterns], "exam_sessions"))
    ),
    path("marking/", include("marking.urls")),
    path("exam/", include("marking.result_urls")),
    path("lti/", include("lti.urls")),
    path("voice/", include("bot.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("jsi18n/<str:lang>/", javascript_catalog, name="javascript-catalog"),
    path("api/v1/", include("config.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    # Last: whatever else is under /api/ answers the API's JSON 404, not the site's HTML page.
    re_path(r"^api/", no_such_endpoint, name="api-not-found"),
]
