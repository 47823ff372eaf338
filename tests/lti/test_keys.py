"""The tool's JWKS and key rotation (django-lti's ``rotate_keys``): a new key is published beside
the old one, the tool signs with the newest, and keys past the rotation age leave the JWKS."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import jwt
import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from lti_tool.models import Key, LtiRegistration

pytestmark = pytest.mark.django_db


def kids(client: Client) -> list[str]:
    response = client.get("/lti/jwks/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return [key["kid"] for key in response.json()["keys"]]


def test_rotation_publishes_the_new_key_beside_the_old_and_signs_with_it(client: Client) -> None:
    call_command(
        "lti_register",
        name="LMS",
        issuer="https://lms.example",
        client_id="c1",
        auth_url="https://lms.example/auth",
        token_url="https://lms.example/token",
        keyset_url="https://lms.example/jwks",
        deployment=["d1"],
        stdout=StringIO(),
    )
    (first,) = kids(client)
    call_command("rotate_keys", stdout=StringIO())
    both = kids(client)
    assert len(both) == 2 and first in both
    newest = Key.objects.active().latest()
    registration = LtiRegistration.objects.get().to_registration()
    token = jwt.encode({"sub": "c1"}, registration.get_tool_private_key(), algorithm="RS256")
    public = jwt.PyJWK(newest.as_jwk()).key
    assert jwt.decode(token, public, algorithms=["RS256"])["sub"] == "c1"
    # Keys older than the rotation age are deactivated and leave the JWKS.
    oldest = Key.objects.order_by("id").first()
    assert oldest is not None and oldest.as_jwk()["kid"] == first
    Key.objects.filter(pk=oldest.pk).update(datetime_created=timezone.now() - timedelta(days=30))
    call_command("rotate_keys", "--deactivate-after", "7", stdout=StringIO())
    remaining = kids(client)
    assert first not in remaining and len(remaining) == 2
