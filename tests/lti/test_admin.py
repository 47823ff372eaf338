"""Platform registration in the admin console (django-lti's admin) and the tool's records."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from lti_tool.models import LtiDeployment, LtiRegistration

from tests.factories import AdminFactory, AuthorFactory

pytestmark = pytest.mark.django_db


def test_an_admin_registers_a_platform_and_activates_a_deployment(client: Client) -> None:
    client.force_login(AdminFactory())
    add = "/admin/lti_tool/ltiregistration/add/"
    assert client.get(add).status_code == 200
    response = client.post(
        add,
        {
            "name": "Uni Canvas",
            "uuid": "6f1c1d2e-0000-4000-8000-000000000001",
            "issuer": "https://canvas.instructure.com",
            "client_id": "10000000000001",
            "audience": "",
            "auth_url": "https://sso.canvaslms.com/api/lti/authorize_redirect",
            "token_url": "https://sso.canvaslms.com/login/oauth2/token",
            "keyset_url": "https://sso.canvaslms.com/api/lti/security/jwks",
            "is_active": "on",
            "public_key": "",
            "private_key": "",
            "deployments-TOTAL_FORMS": "1",
            "deployments-INITIAL_FORMS": "0",
            "deployments-0-deployment_id": "1:abc",
            "deployments-0-is_active": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    registration = LtiRegistration.objects.get(client_id="10000000000001")
    deployment = LtiDeployment.objects.get(registration=registration)
    assert (deployment.deployment_id, deployment.is_active) == ("1:abc", True)
    change = client.get(f"/admin/lti_tool/ltiregistration/{registration.pk}/change/")
    assert change.status_code == 200 and "1:abc" in change.content.decode()
    for page in ("/admin/lti/sittinglink/", "/admin/lti/gradepassback/"):
        assert client.get(page).status_code == 200, page
    client.force_login(AuthorFactory())
    assert client.get(add).status_code == 302  # the admin console is for admins only


@pytest.mark.parametrize("option", ["--session", "--sitting"])
def test_resync_with_a_malformed_id_is_a_clear_command_error(option: str) -> None:
    """A typo in an id is the command's usage error naming it, not a traceback."""
    with pytest.raises(CommandError, match="not-a-uuid"):
        call_command("lti_resync_grades", option, "not-a-uuid")
