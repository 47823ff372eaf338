"""Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

``alpha = 1 - D_o / D_e`` computed from the coincidence matrix: for every unit with ``m_u >= 2``
pairable values, each ordered pair of values from different coders adds ``1 / (m_u - 1)`` to
``o[c][k]``. With ``n_c`` the marginals and ``n`` their sum::

    alpha = 1 - (n - 1) * sum(o[c][k] * d2(c, k)) / sum(n_c * n_k * d2(c, k))

Difference functions:

* ``nominal``: 0 when equal, else 1;
* ``ordinal``: ``(sum of n_g for g from c to k  -  (n_c + n_k) / 2) ** 2`` over the ranks of the
  values that occur (the metric marking uses: rubric levels are ordered, not evenly spaced);
* ``interval``: ``(c - k) ** 2``.

Missing values are simply absent from a unit; units with fewer than two values are not
pairable and are ignored. When the data show no variation at all (``D_e == 0``) alpha is
undefined and :func:`krippendorff_alpha` returns ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

Metric = Literal["nominal", "ordinal", "interval"]
METRICS: Final = ("nominal", "ordinal", "interval")


def coincidences(units: Sequence[Sequence[float]]) -> dict[tuple[float, float], float]:
    """The coincidence matrix ``o[(c, k)]`` of pairable units."""
    matrix: dict[tuple[float, float], float] = {}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    matrix[(c, k)] = matrix.get((c, k), 0.0) + 1.0 / (m - 1)
    return matrix


def krippendorff_alpha(
    units: Sequence[Sequence[float | None]] | Mapping[object, Sequence[float | None]],
    metric: Metric = "ordinal",
) -> float | None:
    """Alpha of reliability data given unit by unit (each a list of the coders' values;
    ``None`` for a missing value). ``None`` when undefined (no pairable unit, no variation)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    rows = units.values() if isinstance(units, Mapping) else units
    data = [[float(v) for v in row if v is not None] for row in rows]
    matrix = coincidences(data)
    if not matrix:
        return None
    values = sorted({c for c, _ in matrix})
    marginal = {c: sum(w for (a, _), w in matrix.items() if a == c) for c in values}
    n = sum(marginal.values())
    if n <= 1:
        return None

    rank = {c: i for i, c in enumerate(values)}
    prefix = [0.0]
    for c in values:
        prefix.append(prefix[-1] + marginal[c])

    def d2(c: float, k: float) -> float:
        if metric == "nominal":
            return 0.0 if c == k else 1.0
        if metric == "interval":
            return (c - k) ** 2
        lo, hi = sorted((rank[c], rank[k]))
        between = prefix[hi + 1] - prefix[lo]
        return (between - (marginal[c] + marginal[k]) / 2) ** 2

    observed = sum(w * d2(c, k) for (c, k), w in matrix.items())
    expected = sum(marginal[c] * marginal[k] * d2(c, k) for c in values for k in values)
    if expected == 0:
        return None
    return round(1.0 - (n - 1) * observed / expected, 6)
