from django.urls import path

from authoring import views

app_name = "authoring"

urlpatterns = [
    path("", views.package_list, name="package-list"),
    path("new/", views.package_create, name="package-create"),
    path("<uuid:draft_id>/", views.package_edit, name="package-edit"),
    path("import/", views.package_import, name="package-import"),
    path("<uuid:draft_id>/export/", views.package_export, name="package-export"),
    path(
        "<uuid:draft_id>/collaborators/", views.package_collaborators, name="package-collaborators"
    ),
    path("<uuid:draft_id>/preview/", views.package_preview, name="package-preview"),
]
