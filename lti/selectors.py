"""Reads of the LTI app: the URLs an LMS administrator enters (docs/lms.md)."""

from __future__ import annotations

from django.urls import reverse
from lti_tool.models import LtiRegistration


def tool_urls(base: str, registration: LtiRegistration | None = None) -> dict[str, str]:
    """The tool's registration URLs on ``base`` (the public URL). The login initiation URL
    names a registration (``<registration uuid>`` until one is registered)."""
    base = base.rstrip("/")
    login = (
        base + reverse("lti:login", args=[registration.uuid])
        if registration is not None
        else base + "/lti/login/<registration uuid>/"
    )
    return {
        "OpenID Connect login initiation URL": login,
        "Launch / redirect / target link URI": base + reverse("lti:launch"),
        "Public keyset (JWKS) URL": base + reverse("lti:jwks"),
        "Dynamic registration URL": base + reverse("lti:register"),
    }
