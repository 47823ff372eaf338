"""nodes[].grounding (docs/spec/candidate-materials.md §1): shape, defaults, strictness."""

from __future__ import annotations

import pytest

from ioa.errors import PackageLoadError
from ioa.schema import Grounding, MaterialKind, PassagePick, load_package
from tests.ioa.builders import add_nodes, example, grounded_node, put


def _with_grounded(**grounding: object) -> dict[str, object]:
    document = example()
    add_nodes(document, grounded_node("q-own", "wrapup", **grounding))
    return document


def test_a_grounded_node_loads_with_its_defaults() -> None:
    package = load_package(_with_grounded())
    node = package.node("q-own")
    assert node is not None
    assert node.grounding == Grounding(
        material=MaterialKind.SUBMISSION,
        pick=PassagePick.CHOICE,
        maxPassageChars=400,
        fallbackQuestion="Tell me about one design decision you made and why.",
    )


def test_nodes_without_grounding_have_none() -> None:
    node = load_package(example()).node("q-dijkstra")
    assert node is not None
    assert node.grounding is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pick", "opinion"),
        ("material", "diary"),
        ("maxPassageChars", 79),
        ("maxPassageChars", 601),
        ("maxPassageChars", 200.5),
        ("fallbackQuestion", "   "),
        ("surprise", True),
    ],
)
def test_bad_grounding_is_a_schema_error(field: str, value: object) -> None:
    document = _with_grounded()
    put(document, f"nodes[q-own].grounding.{field}", value)
    with pytest.raises(PackageLoadError):
        load_package(document)


@pytest.mark.parametrize("field", ["pick", "fallbackQuestion"])
def test_pick_and_fallback_question_are_required(field: str) -> None:
    document = _with_grounded()
    del document["nodes"][-1]["grounding"][field]
    with pytest.raises(PackageLoadError):
        load_package(document)


def test_every_pick_and_material_loads() -> None:
    for pick in ("choice", "result", "limitation", "any"):
        for material in ("submission", "report"):
            node = load_package(_with_grounded(pick=pick, material=material)).node("q-own")
            assert node is not None and node.grounding is not None
            assert (node.grounding.pick, node.grounding.material) == (pick, material)
