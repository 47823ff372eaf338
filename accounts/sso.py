"""Staff single sign-on through OpenID Connect (docs/sso.md), on mozilla-django-oidc.

Off unless ``VIVA_OIDC_ISSUER`` is set (the embedded default keeps local passwords; local
passwords also stay on when single sign-on is on). The authorization code flow with nonce and
state is mozilla-django-oidc's; the id token's signature (JWKS) and expiry are checked by it
(PyJWT), and this backend adds what it leaves out: the issuer must be ``VIVA_OIDC_ISSUER`` and
the audience must contain the client id.

Accounts and roles:

* a signed-in person is the account ``oidc-<digest of issuer and sub>`` (never an existing
  local account: an identity provider's user called ``admin`` does not become our ``admin``),
  created on first sign-in, with the ``email`` and ``name`` claims and no usable password;
* the role comes from the claims on every sign-in: ``VIVA_OIDC_ROLE_CLAIM`` (default
  ``groups``) holds a string or a list; ``VIVA_OIDC_ROLE_MAP`` maps its values to roles
  (``lecturers=author,invigilators=proctor,viva-admins=admin``). Several matches: the first of
  admin, author, proctor. No match: sign-in refused (logged), and an existing account is
  deactivated (a person removed from every staff group loses access). Candidates never sign in
  this way (they arrive by invitation or LTI); a map naming ``candidate`` is a configuration
  error (system check ``accounts.E001``).

The provider's endpoints come from its discovery document when only the issuer is configured
(``accounts.sso_discovery``: fetched through the guard, its ``issuer`` exactly ours, kept for
``VIVA_OIDC_DISCOVERY_MAX_AGE_SECONDS``); explicit endpoint settings override it. A discovery
that fails is the refusal page (502) with a logged reason and no session, at the start and at
the callback. PKCE is always on (``OIDC_USE_PKCE``, S256): mozilla-django-oidc stores the
``code_verifier`` server-side beside the state and nonce (the session's ``oidc_states``) and sends
it with the token request.

Every call to the provider (discovery, JWKS, token, userinfo) goes through the outbound address
guard (``web.outbound``: public addresses only, unless ``VIVA_OUTBOUND_ALLOWED_NETWORKS`` lists the
provider's network). A callback the flow cannot accept (a forged or replayed ``state``, no
state at all) is the clear refusal page (``templates/accounts/sso_refused.html``, 400) with a
logged reason, and leaves no session behind (``web.no_session``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import jwt
import mozilla_django_oidc.auth
import requests
from django.apps import AppConfig
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.checks import CheckMessage, Error, Warning, register
from django.core.exceptions import SuspiciousOperation
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from accounts.models import User
from accounts.roles import Role
from accounts.sso_discovery import (
    DiscoveryFailed,
    Endpoints,
    configured_endpoints,
    provider_endpoints,
)
from web.no_session import forget_session
from web.outbound import route_library_through_guard

logger = logging.getLogger(__name__)

route_library_through_guard(mozilla_django_oidc.auth)  # JWKS, token, userinfo: guarded

STAFF_ROLES: Final = (Role.ADMIN, Role.AUTHOR, Role.PROCTOR)
"""Roles single sign-on may grant, in order of precedence."""


def sso_enabled() -> bool:
    return bool(getattr(settings, "VIVA_OIDC_ISSUER", ""))


def role_map() -> dict[str, str]:
    """``VIVA_OIDC_ROLE_MAP`` as ``{claim value: role}`` (a dict, or ``a=b,c=d`` text)."""
    raw = getattr(settings, "VIVA_OIDC_ROLE_MAP", "") or ""
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()}
    pairs = (item.split("=", 1) for item in str(raw).split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs if key.strip()}


def role_from_claims(claims: Mapping[str, object]) -> str | None:
    """The staff role the claims map to (module docstring), or ``None``."""
    claim = getattr(settings, "VIVA_OIDC_ROLE_CLAIM", "groups") or "groups"
    value = claims.get(claim)
    values: list[object]
    if isinstance(value, str):
        values = [value]
    elif isinstance(value, list | tuple):
        values = list(value)
    else:  # absent, or not a string or list of them: no role (refused), never a crash
        values = []
    mapping = role_map()
    granted = {mapping[str(v)] for v in values if str(v) in mapping}
    return next((role.value for role in STAFF_ROLES if role.value in granted), None)


def username_for(issuer: str, subject: str) -> str:
    """The local account of an issuer's subject: stable, and never a local username."""
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()[:24]
    return f"oidc-{digest}"


class StaffOIDCBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    """mozilla-django-oidc's backend with issuer and audience checks and role mapping."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.enabled = sso_enabled()
        if self.enabled:
            super().__init__(*args, **kwargs)
        else:
            self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **kwargs: object) -> User | None:
        """The code flow (mozilla-django-oidc); any refusal (a token with the wrong issuer,
        audience, nonce or signature, an expired one, a code the provider rejects, the
        provider out of reach) is logged and signs nobody in: the callback then sends the
        person to the sign-in page with a clear message."""
        if not self.enabled or request is None:
            return None
        if not (request.GET.get("code") and request.GET.get("state")):
            return None  # not the provider's callback (a password sign-in): no discovery
        try:
            self.use_endpoints(provider_endpoints())
            user: User | None = super().authenticate(request, **kwargs)
            return user
        except SuspiciousOperation as refusal:
            logger.warning("OIDC sign-in refused: %s", refusal)
        except (requests.RequestException, jwt.PyJWTError) as error:
            logger.warning("OIDC sign-in failed: %s: %s", type(error).__name__, error)
        except DiscoveryFailed as failure:
            logger.warning("OIDC sign-in failed: discovery: %s", failure)
        return None

    def use_endpoints(self, endpoints: Endpoints) -> None:
        """Call the provider at ``endpoints`` (explicit settings, the rest discovered)."""
        self.OIDC_OP_TOKEN_ENDPOINT = endpoints.token
        self.OIDC_OP_USER_ENDPOINT = endpoints.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks

    def get_payload_data(self, token: bytes, key: object) -> dict[str, object]:
        payload: dict[str, object] = super().get_payload_data(token, key)
        issuer = settings.VIVA_OIDC_ISSUER
        audience = payload.get("aud")
        audiences = (
            [audience]
            if isinstance(audience, str)
            else list(audience)
            if isinstance(audience, Iterable)
            else []
        )
        if payload.get("iss") != issuer:
            logger.warning("OIDC sign-in refused: issuer %r is not %r", payload.get("iss"), issuer)
            raise SuspiciousOperation("The identity provider's token names another issuer.")
        if self.OIDC_RP_CLIENT_ID not in audiences:
            logger.warning("OIDC sign-in refused: audience %r lacks our client id", audience)
            raise SuspiciousOperation("The identity provider's token is for another client.")
        self._check_party_and_expiry(payload)
        return payload

    def _check_party_and_expiry(self, payload: Mapping[str, object]) -> None:
        """OpenID Connect Core §3.1.3.7 beyond issuer and audience: an ``azp`` (authorized
        party) must be our client id (a token obtained by another client that lists us among
        its audiences is not ours), and the token must expire (``exp``; PyJWT refuses a past
        one, but not a token without it)."""
        azp = payload.get("azp")
        if azp is not None and azp != self.OIDC_RP_CLIENT_ID:
            logger.warning("OIDC sign-in refused: authorized party %r is not our client", azp)
            raise SuspiciousOperation("The identity provider's token was issued to another client.")
        if not isinstance(payload.get("exp"), int | float):
            logger.warning("OIDC sign-in refused: the token has no expiry (exp)")
            raise SuspiciousOperation("The identity provider's token never expires.")

    def verify_claims(self, claims: Mapping[str, object]) -> bool:
        if not claims.get("sub"):
            logger.warning("OIDC sign-in refused: no sub claim")
            return False
        if role_from_claims(claims) is None:
            self._deactivate(claims)
            logger.warning(
                "OIDC sign-in refused: sub %r has no staff role in claim %r",
                claims.get("sub"),
                getattr(settings, "VIVA_OIDC_ROLE_CLAIM", "groups"),
            )
            return False
        return True

    def _deactivate(self, claims: Mapping[str, object]) -> None:
        self.filter_users_by_claims(claims).filter(is_active=True).update(is_active=False)

    def filter_users_by_claims(self, claims: Mapping[str, object]) -> QuerySet[User]:
        username = username_for(settings.VIVA_OIDC_ISSUER, str(claims.get("sub", "")))
        return User.objects.filter(username=username)

    def create_user(self, claims: Mapping[str, object]) -> User:
        user = User(username=username_for(settings.VIVA_OIDC_ISSUER, str(claims["sub"])))
        user.set_unusable_password()
        return self.update_user(user, claims)

    def update_user(self, user: User, claims: Mapping[str, object]) -> User:
        """Email, name and role follow the identity provider at every sign-in."""
        user.email = str(claims.get("email") or user.email or "")[:254]
        user.display_name = str(claims.get("name") or user.display_name or "")[:150]
        role = role_from_claims(claims)
        if role is None:  # verify_claims refused these claims already; never an account without
            raise SuspiciousOperation("The identity provider's claims grant no staff role.")
        user.role = role
        user.is_active = True
        user.save()
        logger.info("OIDC sign-in: %s as %s", user.username, user.role)
        return user


class _StartView(OIDCAuthenticationRequestView):  # type: ignore[misc]
    """mozilla-django-oidc's start, sending the person to the discovered (or configured)
    authorization endpoint; PKCE (S256) by ``OIDC_USE_PKCE``."""

    authorization_endpoint = ""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.OIDC_OP_AUTH_ENDPOINT = self.authorization_endpoint


def sso_start(request: HttpRequest) -> HttpResponse:
    """Start single sign-on (404 when it is not configured; the refusal page when the
    provider's discovery fails)."""
    if not sso_enabled():
        raise Http404("Single sign-on is not configured.")
    try:
        endpoints = provider_endpoints()
    except DiscoveryFailed as failure:
        return _discovery_refused(request, failure, "start")
    view = _StartView.as_view(authorization_endpoint=endpoints.authorization)
    response: HttpResponse = view(request)
    return response


def _forget_attempt(request: HttpRequest) -> None:
    """The sign-in's state is dropped, and a session left with nothing else is ended."""
    session = getattr(request, "session", None)
    for key in ("oidc_states", "oidc_login_next"):
        if session is not None and key in session:
            del session[key]
    forget_session(request)


def _discovery_refused(request: HttpRequest, failure: DiscoveryFailed, step: str) -> HttpResponse:
    """The refusal page (502: the provider's answer failed) for a failing discovery; nothing
    of the attempt is kept (:func:`_forget_attempt`)."""
    logger.warning("OIDC sign-in refused: %s: discovery: %s", step, failure)
    _forget_attempt(request)
    return render(request, "accounts/sso_refused.html", {"cause": "provider"}, status=502)


def sso_callback(request: HttpRequest) -> HttpResponse:
    """The identity provider's redirect back (404 when single sign-on is not configured)."""
    if not sso_enabled():
        raise Http404("Single sign-on is not configured.")
    reason = _state_refusal(request)
    if reason is None:
        try:
            provider_endpoints()  # kept since the start; refetched only once it expired
        except DiscoveryFailed as failure:
            return _discovery_refused(request, failure, "callback")
        try:
            response: HttpResponse = OIDCAuthenticationCallbackView.as_view()(request)
        except SuspiciousOperation as refusal:
            reason = str(refusal)
        else:
            if response.get("Location") == settings.LOGIN_REDIRECT_URL_FAILURE:
                # Refused by the provider's answer or our rules (no staff role, wrong
                # issuer...): the sign-in page says so; nothing of the attempt is kept.
                logger.warning("OIDC sign-in refused: callback: the provider's answer")
                _forget_attempt(request)
            return response
    logger.warning("OIDC sign-in refused: callback: %s", reason)
    forget_session(request)
    return render(request, "accounts/sso_refused.html", {"cause": "state"}, status=400)


def _state_refusal(request: HttpRequest) -> str | None:
    """Why the callback cannot belong to a sign-in this browser started (its ``state`` is
    missing, forged, replayed or expired), or ``None``. The provider's own error answer
    (``error=``) goes on to mozilla-django-oidc's failure redirect."""
    if request.GET.get("error"):
        return None
    state = request.GET.get("state", "")
    if not state:
        return "the callback carries no state"
    if state not in (request.session.get("oidc_states") or {}):
        return f"state {state[:40]!r} was not issued to this browser (forged, replayed, expired)"
    return None


@register()
def check_role_map(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    """``VIVA_OIDC_ROLE_MAP`` may only grant staff roles."""
    allowed = {role.value for role in STAFF_ROLES}
    wrong = sorted({role for role in role_map().values() if role not in allowed})
    if not wrong:
        return []
    return [
        Error(
            f"VIVA_OIDC_ROLE_MAP grants {', '.join(wrong)}; single sign-on grants only "
            + ", ".join(sorted(allowed)),
            id="accounts.E001",
        )
    ]


@register()
def check_oidc_provider(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    """Warn (``accounts.W001``) when an OpenID Connect client id or endpoint is configured
    without the issuer: single sign-on stays off; and (``accounts.W002``) when the issuer is set
    without a client id."""
    client_id = getattr(settings, "OIDC_RP_CLIENT_ID", "")
    endpoints = [url for url in configured_endpoints().values() if url]
    if not sso_enabled():
        if not (client_id or endpoints):
            return []
        return [
            Warning(
                "An OpenID Connect client or endpoint is configured but VIVA_OIDC_ISSUER is "
                "not: single sign-on is off (the issuer turns it on, is checked in every token "
                "and names the discovery document).",
                hint="Set VIVA_OIDC_ISSUER; the endpoints are discovered from "
                "<issuer>/.well-known/openid-configuration.",
                id="accounts.W001",
            )
        ]
    if not client_id:
        return [
            Warning(
                "VIVA_OIDC_ISSUER is set but VIVA_OIDC_CLIENT_ID is not: no sign-in can succeed.",
                id="accounts.W002",
            )
        ]
    return []
