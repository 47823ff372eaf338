from django.urls import path

from authoring import views

app_name = "authoring"

urlpatterns = [
    path("", views.package_list, name="package-list"),
    path("new/", views.package_create, name="package-create"),
    path("<uuid:draft_id>/", views.package_edit, name="package-edit"),
    path("<uuid:draft_id>/versions/", views.package_versions, name="package-versions"),
]
