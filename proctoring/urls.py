"""The proctor dashboard's pages. config/urls.py mounts them with the candidate's pages
(``sessions.urls``) in one namespace, ``exam_sessions``: ``exam_sessions:proctor-session``."""

from django.urls import path

from proctoring import views

urlpatterns = [
    path("proctor/", views.proctor_home, name="proctor-home"),
    path(
        "proctor/sittings/<uuid:sitting_id>/",
        views.sitting_overview,
        name="proctor-sitting",
    ),
    path(
        "proctor/sittings/<uuid:sitting_id>/candidates/",
        views.sitting_candidates,
        name="proctor-candidates",
    ),
    path(
        "proctor/sittings/<uuid:sitting_id>/candidates/import/",
        views.sitting_import,
        name="proctor-import",
    ),
    path(
        "proctor/sittings/<uuid:sitting_id>/invitations/",
        views.sitting_invite,
        name="proctor-invite",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/",
        views.session_view,
        name="proctor-session",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/actions/",
        views.session_action,
        name="proctor-action",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/accommodations/",
        views.session_accommodations,
        name="proctor-accommodations",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/window/",
        views.session_window,
        name="proctor-window",
    ),
]
