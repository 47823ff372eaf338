"""Bounded JSON frames for every WebSocket consumer.

:class:`BoundedJsonConsumerMixin` goes before ``AsyncJsonWebsocketConsumer`` in a consumer's
bases. Every incoming frame is decoded by ``web.json_input.parse_json`` (the HTTP API's
limits). A binary frame, or a text frame that is not acceptable JSON, is answered with one error
frame ``{"kind": "error", "code", "message"}`` (``binary_frame``, ``too_deep``,
``invalid_json``...), and the connection stays open: never a 1011 close with a traceback.
"""

from __future__ import annotations

from web.json_input import JsonInputError, parse_json

MAX_FRAME_BYTES = 64 * 1024
"""Client frames are small commands; daphne's own limit (1 MiB) is far above."""


class BoundedJsonConsumerMixin:
    """Bounded decoding of client frames (see the module docstring)."""

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: object
    ) -> None:
        if text_data is None:
            await self.send_json(  # type: ignore[attr-defined]
                {
                    "kind": "error",
                    "code": "binary_frame",
                    "message": "Binary frames are not accepted; send JSON text frames.",
                }
            )
            return
        try:
            content = parse_json(text_data, limit_bytes=MAX_FRAME_BYTES)
        except JsonInputError as exc:
            await self.send_json(  # type: ignore[attr-defined]
                {"kind": "error", "code": exc.code, "message": exc.message}
            )
            return
        await self.receive_json(content, **kwargs)  # type: ignore[attr-defined]
