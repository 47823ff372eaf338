"""A refused request leaves no session behind (LTI and single sign-on refusals, issue #32).

:func:`forget_session` ends the request's session unless it is one the browser brought and
still holds: a session this request would create (the browser sent no session cookie, or one
naming no stored session), one a sign-in during this request replaced (``login`` cycles the
key), and one left empty (an LTI launch clears the session before it is checked) are flushed:
no ``sessionid`` cookie is set (an existing one is expired) and no ``django_session`` row
remains. A signed-in person's own session (an instructor at the exam picker, an administrator at
dynamic registration) is kept.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def forget_session(request: HttpRequest) -> None:
    session = getattr(request, "session", None)
    if session is None:
        return
    held = list(session.keys())  # loads it: a key naming no stored session becomes None
    brought = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not held or not brought or brought != session.session_key:
        session.flush()
