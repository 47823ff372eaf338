"""Proctoring API routes (mounted under /api/v1/ by config/api/urls.py)."""

from django.urls import path

from proctoring.api import views

urlpatterns = [
    path("invitations/", views.InvitationCreateApi.as_view(), name="api-invitation-create"),
    path("sittings/", views.SittingListApi.as_view(), name="api-sitting-list"),
    path("sittings/<uuid:sitting_id>/", views.SittingDetailApi.as_view(), name="api-sitting"),
    path(
        "sittings/<uuid:sitting_id>/overview/",
        views.OverviewApi.as_view(),
        name="api-sitting-overview",
    ),
    path(
        "sittings/<uuid:sitting_id>/candidates/",
        views.CandidateAddApi.as_view(),
        name="api-sitting-candidates",
    ),
    path(
        "sittings/<uuid:sitting_id>/candidates/import/",
        views.CandidateImportApi.as_view(),
        name="api-sitting-import",
    ),
    path(
        "sittings/<uuid:sitting_id>/invitations/",
        views.InvitationSendApi.as_view(),
        name="api-sitting-invitations",
    ),
    path("sessions/", views.SessionListApi.as_view(), name="api-session-list"),
    path("sessions/<uuid:session_id>/", views.SessionDetailApi.as_view(), name="api-session"),
    path(
        "sessions/<uuid:session_id>/accommodations/",
        views.AccommodationsApi.as_view(),
        name="api-session-accommodations",
    ),
    path(
        "sessions/<uuid:session_id>/timeline/",
        views.TimelineApi.as_view(),
        name="api-session-timeline",
    ),
    path(
        "sessions/<uuid:session_id>/transcript/",
        views.TranscriptApi.as_view(),
        name="api-session-transcript",
    ),
    path(
        "sessions/<uuid:session_id>/ledger/", views.LedgerApi.as_view(), name="api-session-ledger"
    ),
    path(
        "sessions/<uuid:session_id>/interceptions/",
        views.InterceptionsApi.as_view(),
        name="api-session-interceptions",
    ),
    path(
        "sessions/<uuid:session_id>/actions/",
        views.ActionApi.as_view(),
        name="api-session-actions",
    ),
]
