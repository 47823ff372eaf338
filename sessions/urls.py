"""The candidate's pages. config/urls.py mounts them with the proctor's (``proctoring.urls``)
in one namespace, ``exam_sessions``: ``exam_sessions:exam-room``, ``exam_sessions:proctor-home``."""

from django.urls import path

from sessions import material_views, preview_views, views

urlpatterns = [
    path("exam/", views.candidate_home, name="candidate-home"),
    path("exam/<uuid:session_id>/", views.exam_entry, name="exam-entry"),
    path("exam/<uuid:session_id>/identity/", views.exam_identity, name="exam-identity"),
    path("exam/<uuid:session_id>/briefing/", views.exam_briefing, name="exam-briefing"),
    path("exam/<uuid:session_id>/material/", views.exam_material, name="exam-material"),
    path("exam/<uuid:session_id>/setup/", views.exam_setup, name="exam-setup"),
    path("exam/<uuid:session_id>/room/", views.exam_room_view, name="exam-room"),
    path("exam/<uuid:session_id>/done/", views.exam_done, name="exam-done"),
    path("exam/<uuid:session_id>/window/", views.exam_window, name="exam-window"),
    path("exam/<uuid:session_id>/practise-again/", views.practise_again, name="practise-again"),
    path("exam/<uuid:session_id>/examiner/", views.exam_examiner_wait, name="exam-examiner-wait"),
    path(
        "proctor/sittings/<uuid:sitting_id>/materials/",
        material_views.sitting_materials,
        name="proctor-materials",
    ),
    path("exam/preview/<uuid:draft_id>/", preview_views.preview_start, name="preview-start"),
    path(
        "exam/<uuid:session_id>/preview/decisions/",
        preview_views.preview_decisions,
        name="preview-decisions",
    ),
]
