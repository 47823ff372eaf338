from __future__ import annotations

import pytest

from ioa.compiler import compile_package
from ioa.output_filters import FilterContext, OutputPipeline, RubricText
from tests.ioa.builders import example


@pytest.fixture(scope="module")
def flow() -> dict[str, object]:
    return dict(compile_package(example()))


@pytest.fixture(scope="module")
def pipeline(flow: dict[str, object]) -> OutputPipeline:
    return OutputPipeline.from_config(flow["outputValidationFilters"])  # type: ignore[arg-type]


def context_for(flow: dict[str, object], node_id: str, candidate: str = "") -> FilterContext:
    nodes = {n["name"]: n for n in flow["nodes"]}  # type: ignore[attr-defined]
    metadata = nodes[node_id]["metadata"]
    filter_context = metadata["outputFilterContext"]
    return FilterContext(
        node_id=node_id,
        rubric_texts=tuple(RubricText("t", text) for text in filter_context["rubricLeakTexts"]),
        scenario_domain=filter_context["scenarioDomain"],
        candidate_turns=(candidate,) if candidate else (),
        current_question=metadata.get("prompt", {}).get("opening", ""),
    )


@pytest.fixture(scope="module")
def q1(flow: dict[str, object]) -> FilterContext:
    return context_for(flow, "q-dijkstra")
