"""ioa.canonical: canonical JSON bytes and checksums."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from ioa.canonical import canonical_bytes, canonical_json, checksum, plain_canonical_bytes
from ioa.errors import CanonicalisationError, IoaError
from tests.ioa.builders import example
from tests.support.json_values import json_values


def test_keys_sorted_and_no_whitespace() -> None:
    assert canonical_json({"b": [1, 2.5, None], "a": {"d": True, "c": "x"}}) == (
        '{"a":{"c":"x","d":true},"b":[1,2.5,null]}'
    )


def test_non_ascii_is_written_as_utf8() -> None:
    assert canonical_bytes({"name": "Łódź ✓"}) == '{"name":"Łódź ✓"}'.encode()


def test_checksum_ignores_key_order_and_formatting() -> None:
    document = example()
    reordered = json.loads(json.dumps(document, indent=4, sort_keys=True))
    assert checksum(document) == checksum(reordered)
    assert checksum(document).startswith("sha256:")
    assert len(checksum(document)) == 71


def test_checksum_changes_with_any_value() -> None:
    document = example()
    changed = example()
    changed["nodes"][0]["title"] += "."
    assert checksum(document) != checksum(changed)


def test_int_and_float_are_distinct() -> None:
    assert checksum({"x": 1}) != checksum({"x": 1.0})


@pytest.mark.parametrize(
    "value",
    [
        {"x": float("nan")},
        {"x": float("inf")},
        {1: "non-string key"},
        {"x": (1, 2)},
        {"x": {1, 2}},
        {"x": b"bytes"},
        {"x": "\ud800"},
    ],
)
def test_non_json_values_are_rejected(value: object) -> None:
    with pytest.raises(CanonicalisationError) as raised:
        checksum(value)
    assert isinstance(raised.value, IoaError)


def test_cycles_are_rejected() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    with pytest.raises(CanonicalisationError, match="cycle"):
        canonical_bytes(cyclic)


def test_too_deep_documents_raise_the_typed_error() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalisationError, match="nested too deeply"):
        canonical_bytes(deep)


@given(json_values)
def test_the_plain_path_gives_the_same_bytes_for_any_plain_json(document: object) -> None:
    try:
        expected = canonical_bytes(document)
    except CanonicalisationError:  # a lone surrogate in generated text: both refuse it
        with pytest.raises(CanonicalisationError):
            plain_canonical_bytes(document)
        return
    assert plain_canonical_bytes(document) == expected
    assert plain_canonical_bytes(json.loads(expected)) == expected  # as read back from JSON


@pytest.mark.parametrize(
    "value",
    [{"x": float("nan")}, {"x": float("inf")}, {"x": {1, 2}}, {"x": b"bytes"}, {"x": "\ud800"}],
)
def test_the_plain_path_refuses_what_json_cannot_encode_with_the_typed_error(
    value: object,
) -> None:
    with pytest.raises(CanonicalisationError):
        plain_canonical_bytes(value)


def test_the_plain_path_refuses_cycles_and_depth_with_the_typed_error() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    with pytest.raises(CanonicalisationError, match="cycle"):
        plain_canonical_bytes(cyclic)
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalisationError, match="nested too deeply"):
        plain_canonical_bytes(deep)
