"""Seals of personal fields (``ioa.events.personal.seal``) against an independent HMAC: the
keyed state the seal copies per message must give exactly ``HMAC-SHA256(key, canonical JSON)``
for any key, in any order of keys."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ioa.events.personal import SEAL_PREFIX, seal
from tests.support.json_values import json_values


def expected_seal(key: bytes, event_id: str, field: str, value: Any) -> str:
    message = json.dumps(
        {"eventId": event_id, "field": field, "value": value},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")
    return SEAL_PREFIX + hmac.new(key, message, hashlib.sha256).hexdigest()


@given(
    keys=st.lists(st.binary(min_size=1, max_size=80), min_size=1, max_size=12),
    event_id=st.text(max_size=40),
    field=st.sampled_from(["text", "excerpt", "description", "details", "reason"]),
    value=json_values,
    plain=st.booleans(),
)
def test_a_seal_is_the_hmac_of_the_canonical_message_under_each_key(
    keys: list[bytes], event_id: str, field: str, value: Any, plain: bool
) -> None:
    # More keys than the keyed states kept, interleaved and repeated: each seal uses its own.
    for key in keys + keys[::-1]:
        assert seal(key, event_id=event_id, field=field, value=value, plain=plain) == (
            expected_seal(key, event_id, field, value)
        )


def test_sealing_leaves_the_kept_keyed_state_unchanged() -> None:
    key = b"k" * 32
    first = seal(key, event_id="e1", field="text", value="same words")
    seal(key, event_id="e2", field="text", value="other words")
    assert seal(key, event_id="e1", field="text", value="same words") == first
