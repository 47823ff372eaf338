"""The API's JSON 413 body for a request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``.

The refusal itself, before any view runs and for every page as well as the API, is
``web.body_limit`` (its middleware and the site's ``handler400``); ``web.api.errors`` answers the
same body when a view of the API reads multipart fields over the limit.
"""

from __future__ import annotations

TOO_LARGE = "The request body is larger than the server accepts."


def too_large_body() -> dict[str, object]:
    return {"error": {"code": "too_large", "message": TOO_LARGE, "details": {}}}
