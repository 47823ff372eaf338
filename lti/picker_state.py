"""The exam picker's state without cookies (docs/lms.md, "Inside the LMS's frame").

In the LMS's ``<iframe>`` the site's session cookie (``SameSite=Lax``) is a third-party cookie:
the browser does not send it, and many browsers block third-party cookies altogether. So the
Deep Linking launch hands the picker a signed, short-lived token instead: the launch's id
(pylti1p3 keeps the validated launch data in the cache under it), the instructor's account and
pylti1p3's cache session id (over HTTPS its keys are prefixed with it). The picker carries the
token in its URL and form; the token is spent when the exam is placed, so a copied picker URL
places nothing twice."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core import signing
from django.core.cache import cache
from django.http import HttpRequest
from lti_tool.models import LtiLaunch
from lti_tool.utils import DjangoToolConfig
from pylti1p3.contrib.django.launch_data_storage.cache import DjangoCacheDataStorage
from pylti1p3.contrib.django.message_launch import DjangoMessageLaunch

from accounts.models import User
from lti.services import LaunchRefused

SALT = "lti.picker_state"
MAX_AGE_SECONDS = 30 * 60
"""How long the picker stays usable after the launch (an instructor choosing an exam)."""
SESSION_COOKIE = "lti1p3-session-id"
AGAIN = "Open the exam picker again from your course."


@dataclass(frozen=True)
class PickerState:
    launch_id: str
    user_id: int
    cache_session: str
    token: str


class _NamedSessionStorage(DjangoCacheDataStorage):
    """pylti1p3's cache storage with the session id the token names, not a cookie's."""

    def get_session_cookie_name(self) -> str | None:
        return None


def issue(request: HttpRequest, lti_launch: LtiLaunch, user: User) -> str:
    """The token of a Deep Linking launch just validated for ``user``."""
    cache_session = request.COOKIES.get(SESSION_COOKIE, "") if request.is_secure() else ""
    payload = {"l": lti_launch.get_launch_id(), "u": user.pk, "s": cache_session}
    return signing.dumps(payload, salt=SALT, compress=True)


def read(token: str) -> PickerState:
    """The state ``token`` names, signed by the tool and unexpired; else
    :class:`LaunchRefused`."""
    try:
        payload = signing.loads(token, salt=SALT, max_age=MAX_AGE_SECONDS)
    except signing.BadSignature:  # SignatureExpired included
        raise LaunchRefused("no_deep_link", AGAIN) from None
    return PickerState(str(payload["l"]), int(payload["u"]), str(payload["s"]), token)


def launch(request: HttpRequest, state: PickerState) -> LtiLaunch:
    """The validated launch ``state`` names (pylti1p3's cache; ``LtiException`` when gone)."""
    storage = _NamedSessionStorage()  # type: ignore[no-untyped-call]
    if state.cache_session:
        storage.set_session_id(state.cache_session)
    message_launch = DjangoMessageLaunch.from_cache(
        state.launch_id, request, DjangoToolConfig(), launch_data_storage=storage
    )
    return LtiLaunch(message_launch)


def user(state: PickerState) -> User:
    """The instructor ``state`` names, when the token is unspent and they are still active."""
    found = get_user_model().objects.filter(pk=state.user_id, is_active=True).first()
    if found is None or cache.get(_spent_key(state.token)):
        raise LaunchRefused("no_deep_link", "This exam picker was used. " + AGAIN)
    return found


def spend(state: PickerState) -> None:
    """Mark the token used (the exam was placed)."""
    cache.set(_spent_key(state.token), True, MAX_AGE_SECONDS + 60)


def _spent_key(token: str) -> str:
    return "lti-picker-spent:" + hashlib.sha256(token.encode()).hexdigest()
