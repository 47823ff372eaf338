"""``{% saml_login next %}``: the sign-in page's buttons for the SAML identity providers
(accounts.saml), one per provider of ``VIVA_SAML_IDPS``."""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from accounts.saml import identity_providers

register = template.Library()


@register.inclusion_tag("accounts/_saml_login.html")
def saml_login(next_url: str = "") -> dict[str, object]:
    query = "?" + urlencode({"next": next_url}) if next_url else ""
    providers = [
        {"name": provider.name, "url": reverse("accounts:saml-login", args=[slug]) + query}
        for slug, provider in identity_providers().items()
    ]
    return {"providers": providers}
