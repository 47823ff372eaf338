from django.urls import path

from sessions import views

app_name = "exam_sessions"

urlpatterns = [
    path("proctor/", views.proctor_home, name="proctor-home"),
    path("exam/", views.candidate_home, name="candidate-home"),
    path("exam/<uuid:session_id>/", views.exam_entry, name="exam-entry"),
    path("exam/<uuid:session_id>/identity/", views.exam_identity, name="exam-identity"),
    path("exam/<uuid:session_id>/briefing/", views.exam_briefing, name="exam-briefing"),
    path("exam/<uuid:session_id>/setup/", views.exam_setup, name="exam-setup"),
    path("exam/<uuid:session_id>/room/", views.exam_room_view, name="exam-room"),
    path("exam/<uuid:session_id>/done/", views.exam_done, name="exam-done"),
]
