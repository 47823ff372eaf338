from django.urls import path

from sessions import preview_views, proctor_views, views

app_name = "exam_sessions"

urlpatterns = [
    path("proctor/", proctor_views.proctor_home, name="proctor-home"),
    path(
        "proctor/sittings/<uuid:sitting_id>/",
        proctor_views.sitting_overview,
        name="proctor-sitting",
    ),
    path(
        "proctor/sittings/<uuid:sitting_id>/candidates/",
        proctor_views.sitting_candidates,
        name="proctor-candidates",
    ),
    path(
        "proctor/sittings/<uuid:sitting_id>/candidates/import/",
        proctor_views.sitting_import,
        name="proctor-import",
    ),
    path(
        "proctor/sittings/<uuid:sitting_id>/invitations/",
        proctor_views.sitting_invite,
        name="proctor-invite",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/",
        proctor_views.session_view,
        name="proctor-session",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/actions/",
        proctor_views.session_action,
        name="proctor-action",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/accommodations/",
        proctor_views.session_accommodations,
        name="proctor-accommodations",
    ),
    path(
        "proctor/sessions/<uuid:session_id>/window/",
        proctor_views.session_window,
        name="proctor-window",
    ),
    path("exam/", views.candidate_home, name="candidate-home"),
    path("exam/<uuid:session_id>/", views.exam_entry, name="exam-entry"),
    path("exam/<uuid:session_id>/identity/", views.exam_identity, name="exam-identity"),
    path("exam/<uuid:session_id>/briefing/", views.exam_briefing, name="exam-briefing"),
    path("exam/<uuid:session_id>/setup/", views.exam_setup, name="exam-setup"),
    path("exam/<uuid:session_id>/room/", views.exam_room_view, name="exam-room"),
    path("exam/<uuid:session_id>/done/", views.exam_done, name="exam-done"),
    path("exam/<uuid:session_id>/window/", views.exam_window, name="exam-window"),
    path("exam/preview/<uuid:draft_id>/", preview_views.preview_start, name="preview-start"),
    path(
        "exam/<uuid:session_id>/preview/decisions/",
        preview_views.preview_decisions,
        name="preview-decisions",
    ),
]
