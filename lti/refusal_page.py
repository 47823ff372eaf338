"""The one page every refused LTI request gets (a launch, a login, a deep link, a registration, a
placement): a clear message and its code, the status given (4xx, or 502 for a platform that
failed), the launch's session forgotten, and the reason logged (never shown when the page says
less than the log). Its own module so that lti.views and lti.placement_views both import it.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from web.no_session import forget_session

logger = logging.getLogger(__name__)


def refused(
    request: HttpRequest, code: str, message: str, status: int = 403, *, reason: str = ""
) -> HttpResponse:
    """The refusal page; ``reason`` (logged, never shown) when the page says less than the log."""
    logger.warning("LTI launch refused: %s: %s", code, reason or message)
    forget_session(request)
    return render(request, "lti/refused.html", {"message": message, "code": code}, status=status)
