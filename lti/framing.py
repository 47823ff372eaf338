"""The LTI pages inside the LMS's frame (docs/lms.md, "Inside the LMS's frame").

Every page of the site answers ``frame-ancestors 'none'`` (``SECURE_CSP``). The exam picker of a
Deep Linking launch is shown by Moodle and Canvas in an ``<iframe>`` of their own page, so its
answers name the platform's origins instead: those of the registration's issuer and
authorization endpoint, and of the launch's ``deep_link_return_url`` (the LMS's own web address,
signed in the launch; Canvas's issuer is ``canvas.instructure.com`` while its pages are the
institution's host). The deep-linking response posts to that return URL, so ``form-action``
names it too.

pylti1p3's ``state`` cookie (set at login initiation, read at the launch the platform posts into
the frame) is a third-party cookie there: it is sent ``SameSite=None; Secure; Partitioned`` over
HTTPS and on ``http://localhost`` (a secure context for browsers: a development or test tool can
be framed). ``Partitioned`` (CHIPS) keeps it for the LMS's page only, where browsers that block
third-party cookies still keep it: login initiation and launch both happen in that frame."""

from __future__ import annotations

from collections.abc import Container, Iterable
from http.cookies import Morsel
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.csp import CSP
from lti_tool.models import LtiLaunch

PYLTI_COOKIE_PREFIX = "lti1p3-"
DEEP_LINKING_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL, else None."""
    parts = urlsplit(url or "")
    if parts.scheme not in {"http", "https"} or not parts.netloc or "@" in parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc.lower()}"


def deep_link_return_url(lti_launch: LtiLaunch) -> str:
    settings_claim = lti_launch.get_claim(DEEP_LINKING_SETTINGS) or {}
    return str(settings_claim.get("deep_link_return_url") or "")


def platform_origins(lti_launch: LtiLaunch) -> list[str]:
    """The origins that may frame this launch's pages (sorted, no duplicates)."""
    registration = lti_launch.registration
    urls = [registration.issuer, registration.auth_url, deep_link_return_url(lti_launch)]
    return sorted({origin for url in urls if (origin := origin_of(url))})


def framed_policy(origins: Iterable[str], form_targets: Iterable[str] = ()) -> dict[str, Any]:
    """The site's CSP with ``frame-ancestors`` = ``origins`` ('none' when there is none) and
    ``form-action`` = 'self' + ``form_targets``."""
    policy: dict[str, Any] = {key: list(value) for key, value in settings.SECURE_CSP.items()}
    policy["frame-ancestors"] = list(origins) or [CSP.NONE]
    policy["form-action"] = [CSP.SELF, *form_targets]
    return policy


def allow_platform_frame(
    response: HttpResponseBase, lti_launch: LtiLaunch, *, form_targets: Iterable[str] = ()
) -> HttpResponseBase:
    """Let the launch's platform frame ``response`` (and, with ``form_targets``, receive its
    form)."""
    response._csp_config = framed_policy(  # type: ignore[attr-defined]
        platform_origins(lti_launch), form_targets
    )
    return response


def framed_cookies(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """pylti1p3's cookies (the login's ``state``) as ``SameSite=None; Secure`` where a browser
    keeps such cookies: over HTTPS, and on ``localhost``."""
    if not (request.is_secure() or request.get_host().split(":")[0] == "localhost"):
        return response
    for name, morsel in list(response.cookies.items()):
        if name.startswith(PYLTI_COOKIE_PREFIX):
            partitioned = _PartitionedMorsel()
            partitioned.set(morsel.key, morsel.value, morsel.coded_value)
            partitioned.update({**morsel, "samesite": "None", "secure": True})
            response.cookies[name] = partitioned
    return response


class _PartitionedMorsel(Morsel[str]):
    """A cookie with the ``Partitioned`` attribute (CHIPS; Python's ``http.cookies`` has none
    before 3.14): kept per top-level site, so a browser that blocks third-party cookies still
    keeps it for the frame of the LMS's page that set it."""

    def OutputString(self, attrs: Container[str] | None = None) -> str:
        return super().OutputString(attrs) + "; Partitioned"
