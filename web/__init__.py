"""The web boundary every app shares, below the apps (docs/architecture.md, "Dependency
direction"): the API's error body, parsers, pagination and schema (``web.api``), input limits for
HTTP and WebSocket (``json_input``, ``ws_input``), CSV export, and the 503 page when a service is
down (``unavailable``). It imports Django, DRF and the standard library only, never an app;
``config`` (settings, urls, asgi) wires it in."""
