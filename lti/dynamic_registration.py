"""LTI Dynamic Registration 1.0 (docs/lms.md): the LMS administrator pastes the tool's
registration URL in the LMS; the LMS opens it with ``openid_configuration`` and
``registration_token``; the tool reads the platform's OpenID configuration, registers itself
at the platform's ``registration_endpoint`` and stores the platform (``lti_tool``
registration and deployment).

Who may register (issue #32): a signed-in administrator, or whoever holds a registration URL the
tool issued (``manage.py lti_register --dynamic-registration-url``: the URL carries
``viva_token``, signed and valid for ``VIVA_LTI_REGISTRATION_TOKEN_MAX_AGE_SECONDS``, a week by
default). The spec's own ``registration_token`` proves nothing about the caller (any page can
invent one); it is only passed on to the platform. Anyone else is refused before any fetch.

Fail closed: both fetches (the configuration, the registration) go through the outbound address
guard (``web.outbound``: public addresses only, redirects checked again); the configuration's
``issuer`` must be the origin the configuration came from, every URL must be http(s), and the
deployment the platform returns stays **inactive** until an administrator activates it in the
admin console (unless ``VIVA_LTI_DYNAMIC_REGISTRATION_ACTIVATE`` is set).
"""

from __future__ import annotations

import logging
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.urls import reverse
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from web import outbound

logger = logging.getLogger(__name__)

PLATFORM_CONFIGURATION: Final = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION: Final = "https://purl.imsglobal.org/spec/lti-tool-configuration"
SCOPES: Final = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
)
TIMEOUT: Final = 10
REGISTRATION_SALT: Final = "viva.lti.dynamic-registration"
TOKEN_MAX_AGE: Final = 7 * 24 * 3600


class RegistrationRefused(Exception):
    """The platform's configuration or answer cannot be trusted; the message says why."""


def registration_token_issue() -> str:
    """A token for a registration URL (``?viva_token=``), valid for the configured time."""
    return signing.TimestampSigner(salt=REGISTRATION_SALT).sign("register")


def registration_token_valid(token: str) -> bool:
    """Whether ``token`` is one :func:`registration_token_issue` made and still valid."""
    if not token:
        return False
    max_age = getattr(settings, "VIVA_LTI_REGISTRATION_TOKEN_MAX_AGE_SECONDS", TOKEN_MAX_AGE)
    try:
        signing.TimestampSigner(salt=REGISTRATION_SALT).unsign(token, max_age=max_age)
    except signing.BadSignature:
        return False
    return True


def _origin(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise RegistrationRefused(f"{url!r} is not an http(s) URL.")
    return f"{parts.scheme}://{parts.netloc}"


def platform_configuration(url: str) -> dict[str, Any]:
    """The platform's OpenID configuration, checked (module docstring)."""
    origin = _origin(url)
    response = outbound.get(url, timeout=TIMEOUT, stream=True)
    response.raise_for_status()
    config = outbound.json_body(response)
    if not isinstance(config, dict):
        raise RegistrationRefused("The platform's configuration is not a JSON object.")
    issuer = str(config.get("issuer", ""))
    if _origin(issuer or "x:") != origin:
        raise RegistrationRefused(
            f"The platform's issuer {issuer!r} is not where its configuration came from."
        )
    for key in ("authorization_endpoint", "token_endpoint", "jwks_uri", "registration_endpoint"):
        _origin(str(config.get(key, "")))
    return config


# Any: requests types json= as its recursive JSON alias, which a dict of mixed values is not.
def tool_registration_request(base: str, registration: LtiRegistration) -> dict[str, Any]:
    """The client registration the tool sends (LTI DR §3.3)."""
    launch = base + reverse("lti:launch")
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": base + reverse("lti:login", args=[registration.uuid]),
        "redirect_uris": [launch],
        "client_name": "Viva oral exams",
        "jwks_uri": base + reverse("lti:jwks"),
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(SCOPES),
        TOOL_CONFIGURATION: {
            "domain": urlsplit(base).netloc,
            "target_link_uri": launch,
            "claims": ["iss", "sub", "name", "email"],
            "messages": [
                {"type": "LtiResourceLinkRequest"},
                {"type": "LtiDeepLinkingRequest", "target_link_uri": launch},
            ],
        },
    }


def _new_client_id(answer: dict[str, Any], issuer: str) -> str:
    """The client id the platform's answer gives the tool, refused when missing or when a
    registration of ``issuer`` already holds it (registering again, or a platform answering
    another registration's id: the existing one is left as it is)."""
    client_id = str(answer.get("client_id") or "")
    if not client_id:
        raise RegistrationRefused("The platform answered without a client id.")
    if LtiRegistration.objects.filter(issuer=issuer, client_id=client_id).exists():
        raise RegistrationRefused(
            f"{issuer} client {client_id!r} is already registered (registered again?): "
            "remove or edit the existing registration in the admin console first."
        )
    return client_id


def register(*, openid_configuration: str, registration_token: str, base: str) -> LtiDeployment:
    """Register with the platform (module docstring); returns the (inactive) deployment."""
    config = platform_configuration(openid_configuration)
    if not Key.objects.active().exists():
        Key.objects.generate()
    name = str((config.get(PLATFORM_CONFIGURATION) or {}).get("product_family_code") or "")
    with transaction.atomic():
        registration = LtiRegistration.objects.create(
            name=(name or urlsplit(config["issuer"]).netloc)[:255],
            issuer=config["issuer"],
            client_id=f"pending-{LtiRegistration.objects.count() + 1}",
            auth_url=config["authorization_endpoint"],
            token_url=config["token_endpoint"],
            keyset_url=config["jwks_uri"],
            is_active=False,
        )
        headers = {"Authorization": f"Bearer {registration_token}"} if registration_token else {}
        response = outbound.post(
            config["registration_endpoint"],
            json=tool_registration_request(base, registration),
            headers=headers,
            timeout=TIMEOUT,
            stream=True,
        )
        response.raise_for_status()
        answer = outbound.json_body(response)
        if not isinstance(answer, dict):
            raise RegistrationRefused("The platform's answer is not a JSON object.")
        client_id = _new_client_id(answer, registration.issuer)
        deployment_id = str((answer.get(TOOL_CONFIGURATION) or {}).get("deployment_id") or "")
        registration.client_id = client_id
        registration.is_active = True
        registration.save()
        activate = bool(getattr(settings, "VIVA_LTI_DYNAMIC_REGISTRATION_ACTIVATE", False))
        deployment = LtiDeployment.objects.create(
            registration=registration, deployment_id=deployment_id or "1", is_active=activate
        )
    logger.info(
        "LTI dynamic registration: %s client %s deployment %s (active: %s)",
        registration.issuer,
        client_id,
        deployment.deployment_id,
        activate,
    )
    return deployment
