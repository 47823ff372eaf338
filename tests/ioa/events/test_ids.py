"""UUIDv7 generation: layout, monotonicity, injected clock and randomness."""

from __future__ import annotations

import itertools
import uuid

from hypothesis import given
from hypothesis import strategies as st

from ioa.events import Uuid7Generator, is_uuid7, uuid7, uuid7_from_parts, uuid7_time_ms


def test_layout_version_variant_and_time() -> None:
    value = uuid7_from_parts(0x01924A6F3C82, (0x7A01 & 0xFFF) << 62 | 0x35E044F1C2D3E4F5)
    assert value.version == 7
    assert value.variant == uuid.RFC_4122
    assert uuid7_time_ms(value) == 0x01924A6F3C82


def test_the_chapter_example_id_is_a_uuid7() -> None:
    assert is_uuid7("01924a6f-3c82-7a01-b5e0-44f1c2d3e4f5")
    assert not is_uuid7("01924A6F-3C82-7A01-B5E0-44F1C2D3E4F5")  # not canonical (upper case)
    assert not is_uuid7(str(uuid.uuid4()))
    assert not is_uuid7("cmd-001")
    assert not is_uuid7(None)


def test_injected_clock_and_randomness_give_reproducible_ids() -> None:
    def make() -> list[uuid.UUID]:
        generator = Uuid7Generator(clock_ms=lambda: 1_700_000_000_000, random_bytes=bytes)
        return [generator() for _ in range(3)]

    assert make() == make()
    assert all(uuid7_time_ms(u) == 1_700_000_000_000 for u in make())


def test_ids_increase_when_the_clock_stalls_or_steps_back() -> None:
    times = iter([1000, 1000, 1000, 999, 998, 1001])
    generator = Uuid7Generator(clock_ms=lambda: next(times))
    ids = [generator() for _ in range(6)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 6


@given(st.lists(st.integers(min_value=0, max_value=2**40), min_size=2, max_size=50))
def test_monotonic_for_any_clock(clock: list[int]) -> None:
    ticks = iter(clock)
    generator = Uuid7Generator(clock_ms=lambda: next(ticks))
    ids = [generator() for _ in clock]
    assert all(a < b for a, b in itertools.pairwise(ids))
    assert all(is_uuid7(str(i)) for i in ids)


def test_process_wide_generator() -> None:
    first, second = uuid7(), uuid7()
    assert first < second and first.version == 7
