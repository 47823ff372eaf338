"""Personal fields of stored events, and the sealed form the chain hashes (chain version 2).

A session's chain commits to every event's content (``ioa.events.hashchain``). To let a
candidate's words be erased later without breaking it, chain version 2 does not hash the clear
text of a *personal field*: it hashes the envelope with each personal field's value replaced
by its **seal**::

    seal = "hmac-sha256:" + HMAC-SHA256(key, canonical_json({"eventId", "field", "value"}))

``key`` is kept out of the database (the deployment derives it from ``VIVA_CHAIN_KEY``), so a
seal can be neither inverted nor confirmed ("did the candidate say X?") by anyone holding only
the database, and the event id in the message keeps equal texts of two events unlinkable.

Erasure (``sessions.erasure``) replaces the value by its :func:`marker` and keeps the seal beside
the row; verification then takes the kept seal instead of sealing the value, but only while the
value is exactly that marker (:func:`is_marker`): a kept seal vouches for the marker, never for
new text written over it (:func:`rewritten_fields` names such fields for the verifier).
Everything else of the event (type, times, ids, node, confidence, levels) is still hashed in
clear, so the chain verifies as before and any later edit of the row is still caught.

Version 1 (every chain stored before this module) hashes the whole envelope in clear; its
erased events keep the digest the chain linked, checked against a keyed record outside the
database (docs/spec/audit-chain.md).
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ioa.canonical import canonical_bytes, plain_canonical_bytes
from ioa.events.hashchain import body_digest

CHAIN_V1: Final = 1
"""Every field hashed in clear."""
CHAIN_V2: Final = 2
"""Personal fields hashed as their seals."""

PERSONAL_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "transcript_final": frozenset({"text"}),
    "examiner_utterance_final": frozenset({"text"}),
    "evidence_signal": frozenset({"description", "excerpt"}),
    "misconception_detected": frozenset({"description"}),
    "candidate_command_received": frozenset({"details"}),
    "proctor_instruction": frozenset({"text", "reason"}),
    "proctor_action": frozenset({"reason"}),
    "material_attached": frozenset({"passageTexts"}),
    "passage_drawn": frozenset({"text"}),
}
"""Payload fields, by event type, that hold what the candidate said or what was said about
them: transcripts (both speakers: the examiner quotes and names the candidate), quoted excerpts
and descriptions of their answers, what their commands said, a proctor's words, and the
passages quoted from their material (docs/spec/candidate-materials.md §9)."""

CLEAR_PERSONAL_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "examiner_utterance_final": frozenset({"spokenText"}),
    "self_correction_detected": frozenset({"originalClaim", "correctedClaim"}),
    "transcript_corrected": frozenset({"originalText"}),
    "guardrail_triggered": frozenset({"originalText", "replacementText"}),
    "system_error": frozenset({"message", "userMessage", "details"}),
}
"""Payload fields that also hold the person's words but that chain versions 1 and 2 hash in
clear (issue #32): the part of an utterance the candidate heard, the claims of a
self-correction, a transcript's text before its correction, the examiner's text a guardrail
rewrote, and an error's texts (an exception's message can quote its input). Erasing one changes
the body the chain linked, so the erasure keeps the digest the chain linked and the digest of
the body as erased, both also recorded under a MAC outside the database (as for a version 1
chain, docs/spec/audit-chain.md); the recorded digest stands in only while the body is exactly
the erased one."""

SEAL_PREFIX: Final = "hmac-sha256:"
ERASED_TEXT: Final = "[erased]"

OBJECT_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "candidate_command_received": frozenset({"details"}),
    "system_error": frozenset({"details"}),
    "material_attached": frozenset({"passageTexts"}),
}
"""The personal fields that hold a JSON object (the payload schema's ``JsonObject``); every
other personal field holds text."""


def marker(event_type: str, field: str) -> Any:
    """The exact value an erased personal field holds: an empty object for a field holding a
    JSON object, else :data:`ERASED_TEXT`. Nothing else is an erased value (issue #32): the
    seal an erasure keeps vouches for this marker only."""
    return {} if field in OBJECT_FIELDS.get(event_type, frozenset()) else ERASED_TEXT


def is_marker(event_type: str, field: str, value: Any) -> bool:
    """``value`` is exactly the erasure marker of ``field`` (same JSON type, same value)."""
    expected = marker(event_type, field)
    return type(value) is type(expected) and value == expected


def rewritten_fields(wire: Mapping[str, Any], erased: Iterable[str]) -> list[str]:
    """Of the fields an erasure claims to have erased (the keys of its kept seals), those that
    are no personal field of the event's type, or whose value is not exactly the marker: an
    erased value rewritten in the database, or a forged erasure mark. Sorted."""
    payload = wire.get("payload")
    payload = payload if isinstance(payload, Mapping) else {}
    kind = str(wire.get("type"))
    names = PERSONAL_FIELDS.get(kind, frozenset()) | CLEAR_PERSONAL_FIELDS.get(kind, frozenset())
    return sorted(
        name
        for name in erased
        if name not in names or name not in payload or not is_marker(kind, name, payload[name])
    )


def personal_fields(
    wire: Mapping[str, Any], fields: Mapping[str, frozenset[str]] = PERSONAL_FIELDS
) -> list[str]:
    """The personal fields (sealed ones unless ``fields`` says otherwise) present (not null) in
    a wire envelope's payload, sorted."""
    payload = wire.get("payload")
    names = fields.get(str(wire.get("type")), frozenset())
    if not isinstance(payload, Mapping):
        return []
    return sorted(name for name in names if payload.get(name) is not None)


def clear_fields(wire: Mapping[str, Any]) -> list[str]:
    """The personal fields hashed in clear (:data:`CLEAR_PERSONAL_FIELDS`) present, sorted."""
    return personal_fields(wire, CLEAR_PERSONAL_FIELDS)


ERASABLE_TYPES: Final = frozenset(PERSONAL_FIELDS) | frozenset(CLEAR_PERSONAL_FIELDS)
"""The event types with a personal field of either kind."""


def seal(key: bytes, *, event_id: str, field: str, value: Any, plain: bool = False) -> str:
    """The keyed digest that stands for one personal field's value in the chain (``plain``:
    the value is plain JSON by construction; see ``hashchain.body_digest``)."""
    encode = plain_canonical_bytes if plain else canonical_bytes
    message = encode({"eventId": event_id, "field": field, "value": value})
    mac = _keyed(key).copy()
    mac.update(message)
    return SEAL_PREFIX + mac.hexdigest()


@functools.lru_cache(maxsize=8)
def _keyed(key: bytes) -> hmac.HMAC:
    """HMAC-SHA256 with ``key`` absorbed, to be copied per message: a copy costs about a third
    less than keying anew (every stored transcript is sealed). Never updated itself."""
    return hmac.new(key, digestmod="sha256")


def pseudonym(value: Any) -> Any:
    """A marker of ``value``'s own JSON type (what :func:`marker` gives for the schema's type of
    a personal field)."""
    if isinstance(value, str):
        return ERASED_TEXT
    if isinstance(value, Mapping):
        return {}
    if isinstance(value, list):
        return []
    return None


def sealed_wire(
    wire: Mapping[str, Any],
    *,
    key: bytes,
    kept: Mapping[str, str] | None = None,
    plain: bool = False,
) -> dict[str, Any]:
    """The envelope chain version 2 hashes: each personal field replaced by its seal (the
    ``kept`` seal of an erased field while its value is exactly the erasure marker, else the
    seal of its value: a rewritten erased value no longer hashes as the original)."""
    fields = personal_fields(wire)
    if not fields:
        return dict(wire)
    kept = kept or {}
    payload = dict(wire["payload"])
    event_id = str(wire["eventId"])
    kind = str(wire.get("type"))
    for name in fields:
        value, vouched = payload[name], kept.get(name)
        payload[name] = (
            vouched
            if vouched and is_marker(kind, name, value)
            else seal(key, event_id=event_id, field=name, value=value, plain=plain)
        )
    return {**wire, "payload": payload}


def chain_digest(
    wire: Mapping[str, Any],
    *,
    version: int,
    key: bytes,
    kept: Mapping[str, str] | None = None,
    plain: bool = False,
) -> str:
    """The digest the chain links for an envelope under a chain version (``plain``: the
    envelope is plain JSON by construction, see ``hashchain.body_digest``).

    Version 1 hashes the body in clear; for an event erased under version 1, ``kept`` holds the
    body digest recorded at erasure (``digest``) and the digest of the body as erased
    (``redacted``): the recorded digest stands in only while the body is still exactly the
    erased one (the record itself is checked against its MAC'd copy outside the database).
    Version 2 does the same for an event whose fields hashed in clear were erased
    (:data:`CLEAR_PERSONAL_FIELDS`), over its sealed form; ``kept`` then also holds the seals."""
    if version < CHAIN_V2:
        actual = body_digest(wire, plain=plain)
    else:
        actual = body_digest(sealed_wire(wire, key=key, kept=kept, plain=plain), plain=plain)
    if kept and kept.get("digest") and kept.get("redacted") == actual:
        return kept["digest"]
    return actual


def erase(wire: Mapping[str, Any], *, key: bytes) -> tuple[dict[str, Any], dict[str, str]]:
    """The payload with every personal field (sealed or hashed in clear) replaced by its marker,
    and the seals to keep for the sealed ones (empty when the event has none). The chain version
    2 digest is unchanged by the swap unless a field hashed in clear was erased
    (:func:`clear_fields`: the erasure then keeps the linked digest, see
    :data:`CLEAR_PERSONAL_FIELDS`)."""
    payload = dict(wire.get("payload") or {})
    seals: dict[str, str] = {}
    kind = str(wire.get("type"))
    for name in personal_fields(wire):
        seals[name] = seal(key, event_id=str(wire["eventId"]), field=name, value=payload[name])
        payload[name] = marker(kind, name)
    for name in clear_fields(wire):
        payload[name] = marker(kind, name)
    return payload, seals
