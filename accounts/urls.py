from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import saml_views, sso, views

app_name = "accounts"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("invite/<str:token>/", views.invitation, name="invitation"),
    path("sso/", sso.sso_start, name="sso-start"),
    path("sso/callback/", sso.sso_callback, name="sso-callback"),
    path("saml/metadata/", saml_views.saml_metadata, name="saml-metadata"),
    path("saml/acs/", saml_views.saml_acs, name="saml-acs"),
    path("saml/<slug:slug>/login/", saml_views.saml_login, name="saml-login"),
    path("tokens/", views.api_tokens, name="api-tokens"),
    path("tokens/<int:token_id>/revoke/", views.api_token_revoke_view, name="api-token-revoke"),
]
