from django.urls import path

from accounts.api import views

urlpatterns = [
    path("me/", views.MeApi.as_view(), name="api-me"),
]
