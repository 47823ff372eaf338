"""Krippendorff's alpha against published values (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability", the 4 coders x 12 units example with missing values) and the reference
implementation's results on a small ordinal example."""

from __future__ import annotations

import pytest

from ioa.marking import krippendorff_alpha

N = None
CODERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]
UNITS = [list(unit) for unit in zip(*CODERS, strict=True)]


@pytest.mark.parametrize(
    ("metric", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_the_published_example(metric: str, expected: float) -> None:
    assert krippendorff_alpha(UNITS, metric) == pytest.approx(expected, abs=5e-4)  # type: ignore[arg-type]


def test_a_small_ordinal_example_matches_the_reference_implementation() -> None:
    coders = [[0, 1, 2, 3, 3, 1], [0, 1, 2, 2, 3, 0], [1, 1, 2, 3, 3, 1]]
    units = [list(u) for u in zip(*coders, strict=True)]
    assert krippendorff_alpha(units) == pytest.approx(0.8725, abs=1e-6)


def test_perfect_agreement_is_one_and_no_variation_is_undefined() -> None:
    assert krippendorff_alpha([[0, 0], [1, 1], [3, 3]]) == 1.0
    assert krippendorff_alpha([[2, 2], [2, 2]]) is None
    assert krippendorff_alpha([[1], [2]]) is None  # nothing pairable
    assert krippendorff_alpha([]) is None


def test_systematic_disagreement_is_negative() -> None:
    assert krippendorff_alpha([[0, 3], [3, 0], [0, 3], [3, 0]], "nominal") < 0  # type: ignore[operator]


def test_mapping_input_and_unknown_metric() -> None:
    assert krippendorff_alpha({"a": [0, 0], "b": [1, 1]}) == 1.0
    with pytest.raises(ValueError, match="unknown metric"):
        krippendorff_alpha([[0, 1]], "ratio")  # type: ignore[arg-type]
