"""Daphne hands every request body to Django untouched: Twisted's own form parsing is off.

Twisted's HTTP request parses a POST's multipart or URL-encoded body into ``request.args``
before daphne sees it (daphne never reads them: it passes the raw body to the ASGI app), and it
answers a multipart body it cannot parse by itself: an empty 400 with no content type, which
neither Django nor the API's error body ever sees (schemathesis found it on every POST).
With ``parsePOSTFormSubmission=False`` the body reaches Django, whose parsers refuse a
malformed one with the shared error body (``web.api.errors``), and no body is parsed twice.

:func:`install` swaps daphne's request class for :class:`BodyPassingRequest`;
``config.asgi`` calls it, so every daphne launch (``make run``/``services-run``, deployments,
the test servers) gets it. tests/config/test_daphne_http.py checks it over a real daphne.
"""

from __future__ import annotations

from daphne import http_protocol


class BodyPassingRequest(http_protocol.WebRequest):
    """Daphne's request without Twisted's POST form parsing (module docstring)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)


def install() -> None:
    """Make daphne's HTTP factory build :class:`BodyPassingRequest` requests (idempotent)."""
    http_protocol.WebRequest = BodyPassingRequest
