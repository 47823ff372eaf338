"""Staff single sign-on through SAML 2.0 (docs/sso.md): a service provider on pysaml2.

Off unless ``VIVA_SAML_IDPS`` names an identity provider (a university's Shibboleth, an eduGAIN
member). pysaml2 builds and signs the AuthnRequest (HTTP-Redirect), and checks the response
(HTTP-POST): the signatures against the provider's metadata, the audience (our entity id), the
destination and recipient (our assertion consumer service), NotBefore / NotOnOrAfter with
``VIVA_SAML_CLOCK_SKEW_SECONDS`` of slack. This module adds what a library cannot keep for us:

* every AuthnRequest we send is stored server-side (the cache) until answered or
  ``VIVA_SAML_REQUEST_LIFETIME_SECONDS``; a response is read only as the answer to one of them,
  once, and from the provider it was sent to (no unsolicited, IdP-initiated or repeated answers);
* and only in the browser that started the sign-in: the request records the digest of that
  browser's random key (the :data:`BROWSER_COOKIE`), which the response's POST must carry (an
  answer someone else obtained and has a victim's browser post, login CSRF, signs nobody in);
* every accepted assertion id is stored until its NotOnOrAfter has passed: a replay is refused;
* assertions must be signed (``VIVA_SAML_REQUIRE_SIGNED_ASSERTIONS``; off, a signed response
  is still required); the response must name our assertion consumer service as its Destination.

Accounts and roles follow accounts.sso (OIDC): the account is ``saml-<digest of the provider's
entity id and the subject>``, never a local one; the role comes from the provider's
``role_attributes`` (eduPersonEntitlement, eduPersonAffiliation, groups) through its
``role_map`` at every sign-in; no staff role: refused, and an existing account is deactivated.
Any refusal raises :class:`SamlRefused`, with the reason the view logs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import secrets
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import requests
from defusedxml import ElementTree
from django.apps import AppConfig
from django.conf import settings
from django.core.cache import cache
from django.core.checks import CheckMessage, Error, register
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NAMEID_FORMAT_TRANSIENT
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

from accounts.models import User
from accounts.sso import STAFF_ROLES
from web import outbound

# pysaml2's client, configuration, metadata and signature modules (with xmlschema under them)
# cost ~0.6 s CPU to import, in every Django process that loads the URLconf (the sign-in pages
# name this module), while only a SAML sign-in or the metadata page uses them: they are imported
# in the functions that use them (a third-party library, no dependency of ours hidden; issue
# #36). The constants above come from pysaml2's light modules.
if TYPE_CHECKING:
    from saml2.client import Saml2Client
    from saml2.config import SPConfig
    from saml2.response import AuthnResponse

logger = logging.getLogger(__name__)

DEFAULT_ROLE_ATTRIBUTES: Final = ("eduPersonEntitlement", "eduPersonAffiliation", "groups")
_REQUEST_KEY: Final = "viva:saml:request:{}"
_ASSERTION_KEY: Final = "viva:saml:assertion:{}:{}"
_METADATA_KEY: Final = "viva:saml:metadata:{}"
_MAX_RESPONSE_BYTES: Final = 512 * 1024
_MAX_METADATA_BYTES: Final = 8 * 1024 * 1024
_DSIG: Final = "http://www.w3.org/2000/09/xmldsig#"
BROWSER_COOKIE: Final = "viva_saml_browser"
"""The cookie holding the browser's random key, which ties a response to the browser that
started the sign-in (set by ``accounts.saml_views``; ``SameSite=None`` where browsers allow it,
since the provider's POST comes from its own site)."""


class SamlRefused(Exception):
    """A SAML sign-in that signs nobody in: ``reason`` is logged, the person sees the clear
    refusal page with ``status``."""

    def __init__(self, reason: str, status: int = 403) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class IdentityProvider:
    """One entry of ``VIVA_SAML_IDPS`` (``{slug: {...}}``)."""

    slug: str
    entity_id: str
    name: str
    metadata_url: str
    metadata_file: str
    metadata_cert: str
    role_attributes: tuple[str, ...]
    role_map: Mapping[str, str]
    id_attribute: str


@dataclass(frozen=True)
class SamlSignIn:
    """What a verified response says about the person."""

    provider: IdentityProvider
    subject: str
    role: str | None
    email: str
    display_name: str
    next_path: str


def _text_map(raw: object) -> dict[str, str]:
    """A role map given as a dict or as ``value=role,value=role`` text."""
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    pairs = (item.split("=", 1) for item in str(raw or "").split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs if key.strip()}


def _names(raw: object, default: Sequence[str]) -> tuple[str, ...]:
    if isinstance(raw, str):
        return tuple(name.strip() for name in raw.split(",") if name.strip())
    if isinstance(raw, Sequence):
        return tuple(str(name) for name in raw)
    return tuple(default)


def identity_providers() -> dict[str, IdentityProvider]:
    """The configured identity providers, by slug (empty: SAML sign-in is off)."""
    raw = getattr(settings, "VIVA_SAML_IDPS", None) or {}
    providers = {}
    for slug, entry in dict(raw).items():
        entry = dict(entry)
        providers[str(slug)] = IdentityProvider(
            slug=str(slug),
            entity_id=str(entry.get("entity_id", "")),
            name=str(entry.get("name") or slug),
            metadata_url=str(entry.get("metadata_url", "")),
            metadata_file=str(entry.get("metadata_file", "")),
            metadata_cert=str(entry.get("metadata_cert", "")),
            role_attributes=_names(entry.get("role_attributes"), DEFAULT_ROLE_ATTRIBUTES),
            role_map=_text_map(entry.get("role_map")),
            id_attribute=str(entry.get("id_attribute", "")),
        )
    return providers


def saml_enabled() -> bool:
    return bool(identity_providers())


def role_from_attributes(provider: IdentityProvider, ava: Mapping[str, object]) -> str | None:
    """The staff role the released attributes map to: several matches, the first of admin,
    author, proctor; none (or only unknown values): ``None``, refused."""
    granted: set[str] = set()
    for attribute in provider.role_attributes:
        values = ava.get(attribute)
        listed = [values] if isinstance(values, str) else values
        if isinstance(listed, list | tuple):
            granted |= {provider.role_map[str(v)] for v in listed if str(v) in provider.role_map}
    return next((role.value for role in STAFF_ROLES if role.value in granted), None)


def username_for(entity_id: str, subject: str) -> str:
    """The local account of a provider's subject: stable, and never a local username."""
    digest = hashlib.sha256(f"{entity_id}\n{subject}".encode()).hexdigest()[:24]
    return f"saml-{digest}"


# --- Our service provider -----------------------------------------------------------------------


def base_url(request: HttpRequest) -> str:
    """``VIVA_SAML_BASE_URL`` (what federation metadata names), else this request's origin."""
    configured = str(getattr(settings, "VIVA_SAML_BASE_URL", "") or "")
    return (configured or request.build_absolute_uri("/")).rstrip("/")


def sp_entity_id(base: str) -> str:
    configured = str(getattr(settings, "VIVA_SAML_SP_ENTITY_ID", "") or "")
    return configured or base + reverse("accounts:saml-metadata")


def _skew() -> int:
    return int(getattr(settings, "VIVA_SAML_CLOCK_SKEW_SECONDS", 60))


def _sp_config(base: str, provider: IdentityProvider | None) -> SPConfig:
    """pysaml2's configuration of our service provider (with one provider's metadata)."""
    from saml2.config import SPConfig

    key_file = str(getattr(settings, "VIVA_SAML_KEY_FILE", "") or "") or None
    cert_file = str(getattr(settings, "VIVA_SAML_CERT_FILE", "") or "") or None
    require_signed = bool(getattr(settings, "VIVA_SAML_REQUIRE_SIGNED_ASSERTIONS", True))
    sp: dict[str, Any] = {
        "name": "Viva",
        "endpoints": {
            "assertion_consumer_service": [(base + reverse("accounts:saml-acs"), BINDING_HTTP_POST)]
        },
        "allow_unsolicited": False,
        "authn_requests_signed": key_file is not None,
        "want_assertions_signed": require_signed,
        "want_response_signed": not require_signed,
        "name_id_format": NAMEID_FORMAT_PERSISTENT,
        "name_id_format_allow_create": True,
        "signing_algorithm": SIG_RSA_SHA256,
        "digest_algorithm": DIGEST_SHA256,
    }
    config: dict[str, Any] = {
        "entityid": sp_entity_id(base),
        "xmlsec_binary": shutil.which("xmlsec1"),
        "key_file": key_file,
        "cert_file": cert_file,
        "accepted_time_diff": _skew(),
        "allow_unknown_attributes": True,
        "service": {"sp": sp},
        "metadata": {"inline": [_metadata_xml(provider)]} if provider else {},
    }
    if key_file and cert_file:
        config["encryption_keypairs"] = [{"key_file": key_file, "cert_file": cert_file}]
    sp_config = SPConfig()
    sp_config.load(config)
    return sp_config


def sp_metadata(base: str) -> str:
    """Our service provider's metadata for federations, signed when a key is configured."""
    from saml2.metadata import create_metadata_string

    config = _sp_config(base, None)
    signed = bool(config.key_file and config.cert_file)
    xml: str = create_metadata_string(
        None, config=config, valid=24 * 7, sign=signed, sign_alg=SIG_RSA_SHA256,
        digest_alg=DIGEST_SHA256,
    )  # fmt: skip
    return xml if isinstance(xml, str) else xml.decode()


def _metadata_xml(provider: IdentityProvider) -> str:
    """The provider's metadata: its file, or its URL (kept in the cache for
    ``VIVA_SAML_METADATA_MAX_AGE_SECONDS``); signed by ``metadata_cert`` when one is set."""
    if provider.metadata_file:
        with open(provider.metadata_file, encoding="utf-8") as metadata:
            return _signed_metadata(provider, metadata.read())
    source = f"{provider.metadata_url}\n{provider.metadata_cert}"  # a new cert: fetched again
    key = _METADATA_KEY.format(hashlib.sha256(source.encode()).hexdigest())
    cached = cache.get(key)
    if isinstance(cached, str):
        return cached
    xml = _signed_metadata(provider, _fetch_metadata(provider))
    cache.set(key, xml, int(getattr(settings, "VIVA_SAML_METADATA_MAX_AGE_SECONDS", 3600)))
    return xml


def _fetch_metadata(provider: IdentityProvider) -> str:
    """The metadata at ``metadata_url``, through the outbound address guard (web.outbound:
    public addresses only, each redirect checked again), 10 s, at most 8 MiB."""
    try:
        with (
            outbound.guarded_session() as session,
            session.get(provider.metadata_url, timeout=10, stream=True) as answer,
        ):
            answer.raise_for_status()
            body = answer.raw.read(_MAX_METADATA_BYTES + 1, decode_content=True)
    except requests.RequestException as error:  # AddressRefused included
        raise SamlRefused(f"metadata of {provider.slug} unavailable: {error}", 502) from error
    if len(body) > _MAX_METADATA_BYTES:
        raise SamlRefused(f"metadata of {provider.slug} is too large", 502)
    return bytes(body).decode("utf-8", errors="replace")


def _signed_metadata(provider: IdentityProvider, xml: str) -> str:
    """``xml`` if no ``metadata_cert`` is configured, or if its root element carries a signature
    over itself that the certificate verifies (xmlsec1); else refused."""
    from saml2.sigver import CryptoBackendXmlSec1

    if not provider.metadata_cert:
        return xml
    try:
        root = ElementTree.fromstring(xml.encode())
        node = root.tag.removeprefix("{").replace("}", ":")
        signature = root.find(f"{{{_DSIG}}}Signature")
        reference = signature.find(f".//{{{_DSIG}}}Reference") if signature is not None else None
        root_id = root.get("ID")
        if not root_id or reference is None or reference.get("URI") != f"#{root_id}":
            raise ValueError("the root element carries no signature over itself")
        backend = CryptoBackendXmlSec1(shutil.which("xmlsec1") or "xmlsec1")
        if not backend.validate_signature(xml, provider.metadata_cert, "pem", node, root_id):
            raise ValueError("the signature does not verify")
    except Exception as error:  # unparsable, unsigned, wrong key: never trusted
        raise SamlRefused(f"metadata of {provider.slug} refused: {error!r}", 502) from error
    return xml


def _client(base: str, provider: IdentityProvider) -> Saml2Client:
    """pysaml2's client for one provider; an unusable configuration is a refusal (502)."""
    from saml2.client import Saml2Client

    try:
        return Saml2Client(config=_sp_config(base, provider))
    except SamlRefused:
        raise
    except Exception as error:  # unreadable metadata, a missing key file: refused, never a 500
        raise SamlRefused(f"configuration of {provider.slug}: {error!r}", 502) from error


# --- Sending the request ------------------------------------------------------------------------


def browser_key(request: HttpRequest) -> str:
    """The browser's key from its :data:`BROWSER_COOKIE` (kept, so sign-ins started in two tabs
    both finish), or a new random one."""
    key = request.COOKIES.get(BROWSER_COOKIE, "")
    return key if 40 <= len(key) <= 64 and key.isascii() else secrets.token_urlsafe(32)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def authn_request_url(
    request: HttpRequest, provider: IdentityProvider, next_path: str, browser: str
) -> str:
    """A signed AuthnRequest to ``provider`` (HTTP-Redirect), stored until answered with the
    digest of the starting ``browser``'s key; returns the provider's URL to send the browser
    to."""
    client = _client(base_url(request), provider)
    try:
        request_id, info = client.prepare_for_authenticate(
            entityid=provider.entity_id,
            binding=BINDING_HTTP_REDIRECT,
            sigalg=SIG_RSA_SHA256,
            digest_alg=DIGEST_SHA256,
        )
    except Exception as error:  # the provider is missing from its metadata, no SSO endpoint
        raise SamlRefused(f"cannot ask {provider.slug}: {error!r}", 502) from error
    lifetime = int(getattr(settings, "VIVA_SAML_REQUEST_LIFETIME_SECONDS", 600))
    record = {"idp": provider.slug, "next": next_path, "sent": time.time()}
    record["browser"] = _digest(browser)
    cache.set(_REQUEST_KEY.format(request_id), record, lifetime)
    logger.info("SAML request %s sent to %s", request_id, provider.entity_id)
    return str(dict(info["headers"])["Location"])


# --- Reading the response -----------------------------------------------------------------------


def _in_response_to(saml_response: str, acs_url: str) -> str:
    """The request a response says it answers, read before anything is trusted (a response
    addressed elsewhere is refused here already, and checked again once verified)."""
    if len(saml_response) > _MAX_RESPONSE_BYTES:
        raise SamlRefused("the response is too large", 400)
    try:
        root = ElementTree.fromstring(base64.b64decode(saml_response, validate=False))
    except (binascii.Error, ValueError, ElementTree.ParseError) as error:
        raise SamlRefused(f"the response is not SAML XML: {error}", 400) from error
    except Exception as error:  # defusedxml refuses entities and DTDs
        raise SamlRefused(f"the response is refused as XML: {error!r}", 400) from error
    if root.get("Destination") != acs_url:
        raise SamlRefused(f"destination {root.get('Destination')!r} is not {acs_url!r}")
    answered = root.get("InResponseTo")
    if not answered:
        raise SamlRefused("an unsolicited response (no InResponseTo): we accept only answers")
    return str(answered)


def _claim_request(request_id: str) -> dict[str, Any]:
    """The stored request ``request_id`` names, used up now (a second answer finds nothing)."""
    key = _REQUEST_KEY.format(request_id)
    record = cache.get(key)
    if not isinstance(record, dict) or not cache.delete(key):
        raise SamlRefused(f"a response to a request we never sent or already used: {request_id!r}")
    return record


def _check_browser(request: HttpRequest, record: Mapping[str, Any]) -> None:
    """The response is posted by the browser that started the sign-in (its key's digest is the
    request's), else refused: the request is used up already, so nobody can use it again."""
    key = request.COOKIES.get(BROWSER_COOKIE, "")
    expected = str(record.get("browser", ""))
    if not key or not expected or not hmac.compare_digest(_digest(key), expected):
        raise SamlRefused(
            "the response answers a sign-in started in another browser (no or another "
            f"{BROWSER_COOKIE} cookie): a forwarded answer (login CSRF) signs nobody in"
        )


def _verified(
    client: Saml2Client, saml_response: str, request_id: str, next_path: str
) -> AuthnResponse:
    try:
        response = client.parse_authn_request_response(
            saml_response, BINDING_HTTP_POST, outstanding={request_id: next_path}
        )
    except Exception as error:  # signature, audience, time, recipient, status: pysaml2's refusal
        raise SamlRefused(
            f"the response did not verify: {type(error).__name__}: {error}"
        ) from error
    if response is None or response.assertion is None:
        raise SamlRefused("the response did not verify (destination, status or assertion)")
    return response


def _check_response(response: AuthnResponse, provider: IdentityProvider, acs_url: str) -> None:
    """What pysaml2 allows but we do not: another issuer, no Destination, a replayed assertion."""
    issuers = {
        "response": response.response.issuer.text if response.response.issuer else None,
        "assertion": response.assertion.issuer.text if response.assertion.issuer else None,
    }
    for where, issuer in issuers.items():  # a federation's metadata holds other providers too
        if (issuer or "").strip() != provider.entity_id:
            raise SamlRefused(f"the {where}'s issuer {issuer!r} is not {provider.entity_id!r}")
    if response.response.destination != acs_url:
        raise SamlRefused(f"destination {response.response.destination!r} is not {acs_url!r}")
    assertion_id = str(response.assertion.id or "")
    if not assertion_id:
        raise SamlRefused("an assertion without an id")
    not_on_or_after = int(getattr(response, "not_on_or_after", 0) or 0)
    keep = max(not_on_or_after - int(time.time()), 0) + 2 * _skew() + 600
    if not cache.add(_ASSERTION_KEY.format(provider.slug, assertion_id), 1, keep):
        raise SamlRefused(f"assertion {assertion_id!r} was used before (a replay)")


def _subject(response: AuthnResponse, provider: IdentityProvider) -> str:
    """The stable identifier: ``id_attribute`` if configured, else a non-transient NameID."""
    if provider.id_attribute:
        values = response.ava.get(provider.id_attribute) or []
        if values and str(values[0]):
            return str(values[0])
        raise SamlRefused(f"the attribute {provider.id_attribute!r} was not released")
    name_id = response.name_id
    if name_id is None or not name_id.text or name_id.format == NAMEID_FORMAT_TRANSIENT:
        raise SamlRefused("no stable subject (a transient NameID and no id_attribute)")
    return str(name_id.text)


def _first(ava: Mapping[str, Any], *names: str) -> str:
    for name in names:
        values = ava.get(name) or []
        if values:
            return str(values[0])
    return ""


def read_response(request: HttpRequest) -> SamlSignIn:
    """The person a response posted to our assertion consumer service signs in as; every check
    in the module docstring, or :class:`SamlRefused`."""
    saml_response = request.POST.get("SAMLResponse", "")
    if not saml_response:
        raise SamlRefused("no SAMLResponse in the request", 400)
    base = base_url(request)
    acs_url = base + reverse("accounts:saml-acs")
    request_id = _in_response_to(saml_response, acs_url)
    record = _claim_request(request_id)
    _check_browser(request, record)
    provider = identity_providers().get(str(record.get("idp")))
    if provider is None:
        raise SamlRefused(f"the request was sent to a provider no longer configured: {record}")
    client = _client(base, provider)
    response = _verified(client, saml_response, request_id, str(record.get("next", "")))
    _check_response(response, provider, acs_url)
    ava = response.ava or {}
    return SamlSignIn(
        provider=provider,
        subject=_subject(response, provider),
        role=role_from_attributes(provider, ava),
        email=_first(ava, "mail", "email")[:254],
        display_name=_first(ava, "displayName", "cn", "givenName")[:150],
        next_path=str(record.get("next", "")),
    )


# --- The account --------------------------------------------------------------------------------


def saml_account_sign_in(*, sign_in: SamlSignIn) -> User:
    """The account of a verified sign-in, created or updated (email, name, role); no staff
    role: the existing account is deactivated (committed) and the sign-in refused."""
    username = username_for(sign_in.provider.entity_id, sign_in.subject)
    if sign_in.role is None:
        User.objects.filter(username=username, is_active=True).update(is_active=False)
        raise SamlRefused(
            f"{username} ({sign_in.provider.slug}) has no staff role in "
            f"{', '.join(sign_in.provider.role_attributes)}"
        )
    with transaction.atomic():
        user = User.objects.select_for_update().filter(username=username).first()
        if user is None:
            user = User(username=username)
            user.set_unusable_password()
        user.email = sign_in.email or user.email
        user.display_name = sign_in.display_name or user.display_name
        user.role = sign_in.role
        user.is_active = True
        user.save()
    logger.info("SAML sign-in: %s as %s from %s", username, user.role, sign_in.provider.entity_id)
    return user


# --- Configuration checks -----------------------------------------------------------------------


def _provider_errors(provider: IdentityProvider) -> list[str]:
    allowed = {role.value for role in STAFF_ROLES}
    errors = []
    if not provider.entity_id:
        errors.append(f"VIVA_SAML_IDPS[{provider.slug!r}] has no entity_id")
    if not (provider.metadata_url or provider.metadata_file):
        errors.append(f"VIVA_SAML_IDPS[{provider.slug!r}] has no metadata_url or metadata_file")
    wrong = sorted({role for role in provider.role_map.values() if role not in allowed})
    if wrong:
        errors.append(
            f"VIVA_SAML_IDPS[{provider.slug!r}] role_map grants {', '.join(wrong)}; "
            f"SAML sign-in grants only {', '.join(sorted(allowed))}"
        )
    return errors


@register()
def check_saml(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    """Each provider complete and granting only staff roles; our key and certificate set (the
    AuthnRequest and the metadata are signed); the xmlsec1 binary installed."""
    providers = identity_providers()
    if not providers:
        return []
    errors = [message for p in providers.values() for message in _provider_errors(p)]
    if not (getattr(settings, "VIVA_SAML_KEY_FILE", "") and settings.VIVA_SAML_CERT_FILE):
        errors.append("SAML sign-in needs VIVA_SAML_KEY_FILE and VIVA_SAML_CERT_FILE")
    if shutil.which("xmlsec1") is None:
        errors.append("SAML sign-in needs the xmlsec1 binary (apt-get install xmlsec1)")
    return [Error(message, id="accounts.E002") for message in errors]
