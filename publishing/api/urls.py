from django.urls import path

from publishing.api import views

urlpatterns = [
    path(
        "packages/<str:draft_id>/publish/", views.PublishApi.as_view(), name="api-package-publish"
    ),
    path(
        "packages/<str:draft_id>/dry-run/",
        views.DraftDryRunApi.as_view(),
        name="api-package-dry-run",
    ),
    path("versions/", views.VersionListApi.as_view(), name="api-version-list"),
    path("versions/<str:version_id>/", views.VersionDetailApi.as_view(), name="api-version-detail"),
    path(
        "versions/<str:version_id>/report/",
        views.VersionReportApi.as_view(),
        name="api-version-report",
    ),
    path(
        "versions/<str:version_id>/dry-run/",
        views.VersionDryRunApi.as_view(),
        name="api-version-dry-run",
    ),
    path(
        "versions/<str:version_id>/compiled/",
        views.VersionCompiledApi.as_view(),
        name="api-version-compiled",
    ),
]
