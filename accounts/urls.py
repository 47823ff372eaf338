from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import sso, views

app_name = "accounts"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("invite/<str:token>/", views.invitation, name="invitation"),
    path("sso/", sso.sso_start, name="sso-start"),
    path("sso/callback/", sso.sso_callback, name="sso-callback"),
    path("tokens/", views.api_tokens, name="api-tokens"),
    path("tokens/<int:token_id>/revoke/", views.api_token_revoke_view, name="api-token-revoke"),
]
