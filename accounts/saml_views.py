"""The SAML 2.0 sign-in pages (accounts.saml, docs/sso.md): start at a provider, the assertion
consumer service, our metadata. Each answers 404 while SAML sign-in is off; each refusal is the
clear sign-in refusal page (status 4xx, the reason logged, no session left), never a 500."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import login as auth_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from accounts import saml

logger = logging.getLogger("accounts.saml")


def _refused(request: HttpRequest, refusal: saml.SamlRefused) -> HttpResponse:
    """The refusal page; the reason goes to the log, never to the page; the session ends."""
    logger.warning("SAML sign-in refused: %s", refusal.reason)
    request.session.flush()
    status = refusal.status if 400 <= refusal.status < 500 else 403
    return render(request, "accounts/saml_refused.html", {}, status=status)


def _provider(slug: str) -> saml.IdentityProvider:
    provider = saml.identity_providers().get(slug)
    if provider is None:
        raise Http404("No such SAML identity provider.")
    return provider


def _with_browser_cookie(request: HttpRequest, response: HttpResponse, key: str) -> HttpResponse:
    """``response`` setting the browser's key (``saml.BROWSER_COOKIE``) for the assertion
    consumer service only, for as long as a request may be answered. The provider posts the
    answer from its own site, so the cookie is ``SameSite=None; Secure`` over HTTPS and on
    ``localhost`` (a secure context for browsers); over plain HTTP elsewhere browsers refuse
    that, and it is ``Lax`` (a provider on another site then cannot sign anyone in)."""
    cross_site = request.is_secure() or request.get_host().split(":")[0] == "localhost"
    response.set_cookie(
        saml.BROWSER_COOKIE,
        key,
        max_age=int(getattr(settings, "VIVA_SAML_REQUEST_LIFETIME_SECONDS", 600)),
        path=reverse("accounts:saml-acs").rsplit("acs/", 1)[0],
        secure=cross_site,
        httponly=True,
        samesite="None" if cross_site else "Lax",
    )
    return response


def _next_path(request: HttpRequest) -> str:
    target = request.GET.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts=None):
        return target
    return ""


@never_cache
@require_GET
def saml_login(request: HttpRequest, slug: str) -> HttpResponse:
    """Send the browser to the provider with a signed AuthnRequest (HTTP-Redirect), with the
    cookie that ties the answer to this browser."""
    provider = _provider(slug)
    key = saml.browser_key(request)
    try:
        location = saml.authn_request_url(request, provider, _next_path(request), key)
    except saml.SamlRefused as refusal:
        return _refused(request, refusal)
    return _with_browser_cookie(request, HttpResponseRedirect(location), key)


@csrf_exempt  # the provider's cross-site POST; its signature and our stored request vouch for it
@never_cache
def saml_acs(request: HttpRequest) -> HttpResponse:
    """The assertion consumer service (HTTP-POST): sign the person in, or refuse (a GET, e.g.
    the back button, is the refusal page with 405)."""
    if not saml.saml_enabled():
        raise Http404("SAML sign-in is not configured.")
    if request.method != "POST":
        refusal = saml.SamlRefused(f"{request.method} to the assertion consumer service", 405)
        response = _refused(request, refusal)
        response["Allow"] = "POST"
        return response
    try:
        user = saml.saml_account_sign_in(sign_in=(sign_in := saml.read_response(request)))
    except saml.SamlRefused as refusal:
        return _refused(request, refusal)
    except Exception as error:  # whatever else goes wrong is a refusal, never a 500
        logger.exception("SAML sign-in failed")
        return _refused(request, saml.SamlRefused(f"{type(error).__name__}: {error}", 400))
    auth_login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
    return HttpResponseRedirect(sign_in.next_path or reverse("home"))


@require_GET
def saml_metadata(request: HttpRequest) -> HttpResponse:
    """Our service provider's metadata, for the federation or the provider (signed when our key
    is configured)."""
    if not saml.saml_enabled():
        raise Http404("SAML sign-in is not configured.")
    xml = saml.sp_metadata(saml.base_url(request))
    return HttpResponse(xml, content_type="application/samlmetadata+xml")
