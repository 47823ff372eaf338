"""The per-session hash chain: intact logs verify; any edit, gap or swap is found."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ioa.canonical import canonical_bytes
from ioa.events import (
    GENESIS_HASH,
    ChainRecord,
    body_digest,
    event_hash,
    link_hash,
    validate_event,
    verify_chain,
)
from tests.ioa.events.conftest import VALID_PAYLOADS, wire

PERSISTED = [t for t in sorted(VALID_PAYLOADS) if t not in {"transcript_delta", "heartbeat"}]


def build_log(count: int) -> list[ChainRecord]:
    records, prev = [], GENESIS_HASH
    for seq in range(1, count + 1):
        kind = PERSISTED[seq % len(PERSISTED)]
        event = {**validate_event(wire(kind, VALID_PAYLOADS[kind])).to_wire(), "seq": seq}
        hash_ = event_hash(event, prev_hash=prev)
        records.append(ChainRecord(seq, event, hash_, prev))
        prev = hash_
    return records


def test_the_link_formula_is_the_documented_one() -> None:
    event = {**validate_event(wire("bot_ready", VALID_PAYLOADS["bot_ready"])).to_wire(), "seq": 1}
    body = {k: v for k, v in event.items() if k != "seq"}
    digest = hashlib.sha256(canonical_bytes(body)).hexdigest()
    assert body_digest(event) == digest
    expected = hashlib.sha256(f"{GENESIS_HASH}|1|{digest}".encode()).hexdigest()
    assert event_hash(event, prev_hash=GENESIS_HASH) == link_hash(GENESIS_HASH, 1, digest)
    assert event_hash(event, prev_hash=GENESIS_HASH) == f"sha256:{expected}"


def test_key_order_does_not_matter_but_values_do() -> None:
    event: dict[str, Any] = {"b": 1, "a": {"y": 2, "x": 1}}
    assert body_digest(event) == body_digest({"a": {"x": 1, "y": 2}, "b": 1})
    assert body_digest(event) != body_digest({"a": {"x": 1, "y": 3}, "b": 1})


def test_an_intact_log_verifies_with_its_head() -> None:
    log = build_log(30)
    assert verify_chain(log, last_seq=30, head_hash=log[-1].hash) == []
    assert verify_chain([], last_seq=0, head_hash=GENESIS_HASH) == []


def test_an_edited_payload_is_found() -> None:
    log = build_log(10)
    edited = copy.deepcopy(dict(log[4].wire))
    edited["timestamp"] = "2026-05-06T03:00:00.000Z"
    log[4] = ChainRecord(5, edited, log[4].hash, log[4].prev_hash)
    assert [(p.kind, p.seq) for p in verify_chain(log)] == [("altered", 5)]


def test_a_missing_event_is_found_in_the_middle_and_at_the_end() -> None:
    log = build_log(10)
    problems = verify_chain(log[:3] + log[4:])
    assert [(p.kind, p.seq) for p in problems] == [("missing", 4), ("broken_link", 5)]
    tail = verify_chain(log[:8], last_seq=10, head_hash=log[-1].hash)
    assert [p.kind for p in tail] == ["missing", "head_mismatch"]


def test_reordered_events_are_found() -> None:
    log = build_log(6)
    swapped = [log[0], log[2], log[1], *log[3:]]
    kinds = {p.kind for p in verify_chain(swapped)}
    assert {"missing", "reordered", "broken_link"} <= kinds


def test_a_rewritten_chain_does_not_match_the_recorded_head() -> None:
    log = build_log(5)
    forged, prev = [], GENESIS_HASH
    for record in log:
        wire_ = dict(record.wire)
        if record.seq == 3:
            wire_["source"] = "frontend"
        hash_ = event_hash(wire_, prev_hash=prev)
        forged.append(ChainRecord(record.seq, wire_, hash_, prev))
        prev = hash_
    assert verify_chain(forged) == []  # self-consistent...
    problems = verify_chain(forged, last_seq=5, head_hash=log[-1].hash)
    assert [p.kind for p in problems] == ["head_mismatch"]  # ...but not the session's head


@given(st.integers(min_value=1, max_value=12), st.data())
def test_any_single_field_change_is_detected(count: int, data: st.DataObject) -> None:
    log = build_log(count)
    index = data.draw(st.integers(min_value=0, max_value=count - 1))
    record = log[index]
    event = copy.deepcopy(dict(record.wire))
    key = data.draw(st.sampled_from(sorted(k for k in event if k != "seq")))
    event[key] = {"changed": data.draw(st.text(max_size=5))}
    log[index] = ChainRecord(record.seq, event, record.hash, record.prev_hash)
    assert [p.kind for p in verify_chain(log)] == ["altered"]
