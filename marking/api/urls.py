from django.urls import path

from marking.api import views

urlpatterns = [
    path("marking/sessions/", views.MarkListApi.as_view(), name="api-marking-list"),
    path(
        "marking/sessions/<str:session_id>/",
        views.MarkDetailApi.as_view(),
        name="api-marking-detail",
    ),
    path(
        "marking/sessions/<str:session_id>/decisions/",
        views.DecisionListApi.as_view(),
        name="api-marking-decisions",
    ),
    path(
        "marking/sessions/<str:session_id>/overrides/",
        views.OverrideApi.as_view(),
        name="api-marking-override",
    ),
    path(
        "marking/sessions/<str:session_id>/lock/", views.LockApi.as_view(), name="api-marking-lock"
    ),
    path(
        "marking/sessions/<str:session_id>/appeals/",
        views.AppealApi.as_view(),
        name="api-marking-appeal",
    ),
    path(
        "marking/sessions/<str:session_id>/release/",
        views.ReleaseApi.as_view(),
        name="api-marking-release",
    ),
    path(
        "marking/sessions/<str:session_id>/second-marking/",
        views.SecondMarkingApi.as_view(),
        name="api-marking-second-marking",
    ),
    path(
        "marking/sessions/<str:session_id>/second-marks/",
        views.SecondMarksApi.as_view(),
        name="api-marking-second-marks",
    ),
    path(
        "marking/sessions/<str:session_id>/report/",
        views.ReportApi.as_view(),
        name="api-marking-report",
    ),
    path(
        "marking/sessions/<str:session_id>/export.csv",
        views.SessionCsvApi.as_view(),
        name="api-marking-session-csv",
    ),
    path(
        "marking/versions/<str:version_id>/cohort/",
        views.CohortApi.as_view(),
        name="api-marking-cohort",
    ),
    path(
        "marking/versions/<str:version_id>/export.csv",
        views.CohortCsvApi.as_view(),
        name="api-marking-cohort-csv",
    ),
    path(
        "marking/versions/<str:version_id>/scheme/",
        views.SchemeApi.as_view(),
        name="api-marking-scheme",
    ),
]
