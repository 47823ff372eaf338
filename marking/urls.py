from django.urls import path

from marking import views

app_name = "marking"

urlpatterns = [
    path("", views.home, name="home"),
    path("sessions/<str:session_id>/", views.session_detail, name="session"),
    path("sessions/<str:session_id>/report/", views.session_report, name="session-report"),
    path("sessions/<str:session_id>/marks.csv", views.session_csv, name="session-csv"),
    path("sessions/<str:session_id>/override/", views.override, name="session-override"),
    path("sessions/<str:session_id>/lock/", views.lock, name="session-lock"),
    path("sessions/<str:session_id>/appeal/", views.appeal, name="session-appeal"),
    path("sessions/<str:session_id>/release/", views.release, name="session-release"),
    path(
        "sessions/<str:session_id>/second-marking/",
        views.second_marking,
        name="session-second-marking",
    ),
    path(
        "sessions/<str:session_id>/second-marks/", views.second_marks, name="session-second-marks"
    ),
    path("assessments/<str:version_id>/", views.cohort, name="cohort"),
    path("assessments/<str:version_id>/marks.csv", views.cohort_csv, name="cohort-csv"),
]
