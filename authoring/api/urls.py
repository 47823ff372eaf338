from django.urls import path

from authoring.api import review_views, views

urlpatterns = [
    path("packages/", views.DraftListApi.as_view(), name="api-package-list"),
    path("packages/<str:draft_id>/", views.DraftDetailApi.as_view(), name="api-package-detail"),
    path(
        "packages/<str:draft_id>/validate/",
        views.DraftValidateApi.as_view(),
        name="api-package-validate",
    ),
    path(
        "packages/<str:draft_id>/presence/",
        views.DraftPresenceApi.as_view(),
        name="api-package-presence",
    ),
    path(
        "packages/<str:draft_id>/bank-insert/",
        views.DraftBankInsertApi.as_view(),
        name="api-package-bank-insert",
    ),
    path(
        "packages/<str:draft_id>/comments/",
        review_views.DraftCommentListApi.as_view(),
        name="api-package-comments",
    ),
    path(
        "packages/<str:draft_id>/comments/<str:comment_id>/",
        review_views.DraftCommentDetailApi.as_view(),
        name="api-package-comment-detail",
    ),
    path(
        "packages/<str:draft_id>/review/",
        review_views.DraftReviewApi.as_view(),
        name="api-package-review",
    ),
    path(
        "packages/<str:draft_id>/review/approve/",
        review_views.DraftApproveApi.as_view(),
        name="api-package-approve",
    ),
    path("question-bank/", views.BankEntryListApi.as_view(), name="api-bank-list"),
    path(
        "question-bank/templates/",
        views.BankTemplateListApi.as_view(),
        name="api-bank-templates",
    ),
    path(
        "question-bank/<str:entry_id>/",
        views.BankEntryDetailApi.as_view(),
        name="api-bank-detail",
    ),
    path("validate/", views.ValidateDocumentApi.as_view(), name="api-validate"),
    path("schema/package/", views.PackageJsonSchemaApi.as_view(), name="api-package-schema"),
]
