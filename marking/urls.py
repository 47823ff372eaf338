from django.urls import path

from marking import views

app_name = "marking"

urlpatterns = [path("", views.home, name="home")]
