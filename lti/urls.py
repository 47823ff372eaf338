from django.urls import path
from lti_tool.views import jwks

from lti import placement_views, views

app_name = "lti"

urlpatterns = [
    path("login/<uuid:registration_uuid>/", views.LoginInitiationView.as_view(), name="login"),
    path("launch/", views.LaunchView.as_view(), name="launch"),
    path("jwks/", jwks, name="jwks"),
    path("deep-link/", views.DeepLinkView.as_view(), name="deep-link"),
    path("placement/", placement_views.PlacementView.as_view(), name="placement"),
    path("register/", views.DynamicRegistrationView.as_view(), name="register"),
]
