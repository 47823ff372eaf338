"""ioa.materials.draw: the options of a grounded node's seeded draw."""

from __future__ import annotations

from ioa.materials.draw import AttachedMaterial, draw_key, draw_options
from ioa.materials.passages import qualifying_passages
from ioa.runtime.ids import SeededRng

REPORT = (
    "We chose Dijkstra's algorithm instead of Bellman-Ford because weights are positive. "
    "The results show a 40% speed-up on the test graphs we built. "
    "However, the approach does not handle negative edge weights at all. "
    "We decided to store the graph as an adjacency list for sparse inputs."
)
CODE_NOTES = "We opted for a binary heap rather than a Fibonacci heap in the queue."


def _materials() -> list[AttachedMaterial]:
    return [
        AttachedMaterial("rep", "report", qualifying_passages("rep", REPORT)),
        AttachedMaterial("sub", "submission", qualifying_passages("sub", CODE_NOTES)),
    ]


def _ids(**kwargs: object) -> list[str]:
    options = draw_options(_materials(), **kwargs)  # type: ignore[arg-type]
    return [option.passage.passage_id for option in options]


def test_options_follow_kind_pick_and_length() -> None:
    assert _ids(kind="report", pick="choice", max_chars=400) == ["rep:0", "rep:3"]
    assert _ids(kind="report", pick="any", max_chars=400) == ["rep:0", "rep:1", "rep:2", "rep:3"]
    assert _ids(kind="report", pick="limitation", max_chars=400) == ["rep:2"]
    assert _ids(kind="submission", pick="choice", max_chars=400) == ["sub:0"]
    short = len("We decided to store the graph as an adjacency list for sparse inputs.")
    assert _ids(kind="report", pick="choice", max_chars=short) == ["rep:3"]
    assert _ids(kind="report", pick="choice", max_chars=short - 1) == []


def test_passages_drawn_elsewhere_are_left_out_while_others_remain() -> None:
    assert _ids(kind="report", pick="choice", max_chars=400, drawn_elsewhere={"rep:0"}) == ["rep:3"]
    assert _ids(
        kind="report", pick="choice", max_chars=400, drawn_elsewhere={"rep:0", "rep:3"}
    ) == ["rep:0", "rep:3"]


def test_the_draw_is_the_sessions_seeded_choice() -> None:
    ids = _ids(kind="report", pick="any", max_chars=400)
    draws = {SeededRng(f"session-{n}").choose(draw_key("q-own"), ids) for n in range(40)}
    assert draws == set(ids)  # every option can be drawn
    assert SeededRng("s").choose(draw_key("q-own"), ids) == SeededRng("s").choose(
        "passage|q-own", ids
    )
