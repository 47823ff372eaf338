from django.urls import path

from sessions import views

app_name = "exam_sessions"

urlpatterns = [
    path("proctor/", views.proctor_home, name="proctor-home"),
    path("exam/", views.candidate_home, name="candidate-home"),
]
