"""``{% sso_login next %}``: the staff single sign-on link of the sign-in page (accounts.sso)."""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.conf import settings
from django.http import HttpRequest
from django.template import Context
from django.urls import reverse

from accounts.sso import sso_enabled

register = template.Library()


@register.inclusion_tag("accounts/_sso_login.html", takes_context=True)
def sso_login(context: Context, next_url: str = "") -> dict[str, object]:
    if not sso_enabled():
        return {"enabled": False}
    url = reverse("accounts:sso-start")
    if next_url:
        url += "?" + urlencode({"next": next_url})
    request = context.get("request")
    failed = isinstance(request, HttpRequest) and request.GET.get("sso") == "failed"
    return {"enabled": True, "url": url, "name": settings.VIVA_OIDC_NAME, "failed": failed}
