"""Signing a delivery the Standard Webhooks way (https://www.standardwebhooks.com/).

Headers: ``webhook-id`` (the delivery's id, the same on every attempt: the receiver's
idempotency key), ``webhook-timestamp`` (Unix seconds of this attempt) and ``webhook-signature``
(``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" under the secret's bytes>``). The
``standardwebhooks`` library signs, so every receiver with a Standard Webhooks library (Python,
JavaScript, Go, Java, PHP, Ruby, Rust, C#, Elixir, Kotlin) verifies with the same secret, and the
HMAC is not hand-written here.
"""

from __future__ import annotations

from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

USER_AGENT = "Viva-Webhooks/1"


def signed_headers(*, secret: str, message_id: str, body: str, at: datetime) -> dict[str, str]:
    """The headers of one attempt to deliver ``body``, signed at ``at``."""
    moment = at.astimezone(UTC)
    signature = Webhook(secret).sign(msg_id=message_id, timestamp=moment, data=body)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signature,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }
