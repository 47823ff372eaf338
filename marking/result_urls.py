"""The candidate's result page, mounted under ``/exam/`` (the exam area)."""

from django.urls import path

from marking import result_views

app_name = "results"

urlpatterns = [
    path("<uuid:session_id>/result/", result_views.result_page, name="result"),
]
