"""Order statistics the benchmarks print."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The sample at rank ``round(q * (n - 1))`` of the sorted values (no interpolation)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]
