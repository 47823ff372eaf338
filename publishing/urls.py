"""The studio's publishing pages, under /studio/ beside authoring's (config/urls.py)."""

from django.urls import path

from publishing import views

app_name = "publishing"

urlpatterns = [
    path("<uuid:draft_id>/publish/", views.package_publish, name="package-publish"),
    path("<uuid:draft_id>/versions/", views.package_versions, name="package-versions"),
]
