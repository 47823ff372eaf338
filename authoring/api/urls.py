from django.urls import path

from authoring.api import views

urlpatterns = [
    path("packages/", views.DraftListApi.as_view(), name="api-package-list"),
    path("packages/<str:draft_id>/", views.DraftDetailApi.as_view(), name="api-package-detail"),
    path(
        "packages/<str:draft_id>/validate/",
        views.DraftValidateApi.as_view(),
        name="api-package-validate",
    ),
    path(
        "packages/<str:draft_id>/presence/",
        views.DraftPresenceApi.as_view(),
        name="api-package-presence",
    ),
    path("validate/", views.ValidateDocumentApi.as_view(), name="api-validate"),
    path("schema/package/", views.PackageJsonSchemaApi.as_view(), name="api-package-schema"),
]
