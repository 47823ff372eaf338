"""Grounded nodes at runtime (docs/spec/candidate-materials.md §3-§7): attaching material, the
seeded draw recorded as ``passage_drawn`` and rebuilt from the log alone, the passage handed to
the LLM as quoted data, the fail-closed fallback question, and evidence tied to the passage."""

from __future__ import annotations

from typing import Any

import pytest

from ioa.compiler.material_block import no_passage_block, passage_block
from ioa.errors import InvalidInputError
from ioa.events import EventEnvelope
from ioa.materials import draw_key
from ioa.runtime import AttachMaterial, EnterNode, PromptLlm, RuntimeController
from ioa.runtime.grounding import fallback_question, passage_additions
from ioa.runtime.ids import SeededRng
from ioa.runtime.texts import OPEN_NODE_INSTRUCTION
from tests.ioa.builders import example, grounded_node, put
from tests.ioa.runtime.harness import Harness, signal

FALLBACK = "Tell me about one design decision you made and why."
REPORT = """Design report

We chose Dijkstra's algorithm instead of Bellman-Ford because every weight is positive.
The results show a 40% speed-up on the delivery graphs we measured.
However, the approach does not handle negative edge weights at all.
We decided to keep the graph as an adjacency list for the sparse inputs.
"""


def grounded_document(pick: str = "any", material: str = "submission") -> dict[str, Any]:
    """The example with a grounded node ``q-own`` between the warm-up and q-dijkstra."""
    document = example()
    document["nodes"].append(grounded_node("q-own", "q-dijkstra", pick=pick, material=material))
    put(document, "nodes[warmup].transitions[0].targetNodeId", "q-own")
    return document


def at_own(h: Harness, *materials: AttachMaterial) -> Harness:
    """Attach ``materials``, start, and finish the warm-up: the session is at ``q-own``."""
    for material in materials:
        h.send(material)
    h.start()
    h.say("Hello, I liked recursion most.", at=5)
    h.observe(at=6, spoken="Thank you, let us begin.", done=True)
    assert h.node == "q-own"
    return h


def _entry_effects(h: Harness) -> list[Any]:
    entry = next(
        i for i, e in enumerate(h.effects) if isinstance(e, EnterNode) and e.node_id == "q-own"
    )
    return h.effects[entry:]


def test_attaching_material_records_its_passages_but_not_its_text() -> None:
    h = Harness(grounded_document())
    decision = h.send(AttachMaterial("sub-1", "submission", REPORT, "en"))
    h.send(AttachMaterial("sub-1", "submission", "something else entirely, attached again"))
    (attached,) = h.of("material_attached")
    assert [e.type.value for e in decision.events] == ["material_attached"]
    assert [(x.passageId, x.cue) for x in attached.passages] == [
        ("sub-1:1", "choice"),
        ("sub-1:2", "result"),
        ("sub-1:3", "limitation"),
        ("sub-1:4", "choice"),
    ]
    assert attached.passageTexts["sub-1:3"] == (
        "However, the approach does not handle negative edge weights at all."
    )
    assert attached.chars == len(" ".join(REPORT.split())) + 1  # a blank line after the title
    assert "Design report" not in str(attached.model_dump())
    assert h.replayed_equal()


def test_a_material_id_must_be_an_id() -> None:
    h = Harness(grounded_document())
    with pytest.raises(InvalidInputError):
        h.send(AttachMaterial("not an id!", "submission", REPORT))
    assert h.of("material_attached") == []


def test_the_draw_is_recorded_before_the_question_and_the_llm_gets_it_as_quoted_data() -> None:
    h = at_own(Harness(grounded_document()), AttachMaterial("sub-1", "submission", REPORT))
    types = h.types()
    assert (
        types.index("passage_drawn")
        == types.index("node_entered", types.index("passage_drawn") - 1) + 1
    )
    (drawn,) = h.of("passage_drawn")
    assert (drawn.nodeId, drawn.outcome, drawn.pick, drawn.optionCount) == (
        "q-own",
        "drawn",
        "any",
        4,
    )
    assert drawn.drawKey == draw_key("q-own")
    enter, *rest = _entry_effects(h)
    assert enter.task_additions == (
        passage_block(drawn.passageId, drawn.text, "submission", drawn.cue),
    )
    assert isinstance(rest[0], PromptLlm) and rest[0].instruction == OPEN_NODE_INSTRUCTION
    assert FALLBACK not in h.texts()
    assert h.replayed_equal()


@pytest.mark.parametrize("session", [f"session-{n}" for n in range(6)])
def test_the_log_alone_rebuilds_the_draw(session: str) -> None:
    h = at_own(
        Harness(grounded_document(), session_id=session),
        AttachMaterial("sub-1", "submission", REPORT),
    )
    (attached,) = h.of("material_attached")
    (drawn,) = h.of("passage_drawn")
    options = [x.passageId for x in attached.passages]  # pick "any", all under 400 characters
    assert SeededRng(session).choose(drawn.drawKey, options) == drawn.passageId
    assert drawn.text == attached.passageTexts[drawn.passageId]


def test_the_pick_limits_the_options() -> None:
    h = at_own(
        Harness(grounded_document(pick="limitation")),
        AttachMaterial("sub-1", "submission", REPORT),
    )
    (drawn,) = h.of("passage_drawn")
    assert (drawn.passageId, drawn.cue, drawn.optionCount) == ("sub-1:3", "limitation", 1)


@pytest.mark.parametrize(
    ("materials", "outcome"),
    [
        ((), "no_material"),
        ((AttachMaterial("rep-1", "report", REPORT),), "no_material"),  # another kind
        (
            (AttachMaterial("sub-1", "submission", "Too short. No cue here at all today."),),
            "no_passage",
        ),
    ],
)
def test_without_a_passage_the_node_asks_its_fallback_question(
    materials: tuple[AttachMaterial, ...], outcome: str
) -> None:
    h = at_own(Harness(grounded_document()), *materials)
    (drawn,) = h.of("passage_drawn")
    assert (drawn.outcome, drawn.passageId, drawn.text) == (outcome, None, None)
    enter, *_ = _entry_effects(h)
    assert enter.task_additions == (no_passage_block(),)
    assert h.texts()[-1] == FALLBACK
    h.say("I chose a heap because it was simple.", at=10)
    h.observe(at=11, signals=[signal("tgt-q-own")])
    (evidence,) = [s for s in h.of("evidence_signal") if s.nodeId == "q-own"]
    assert evidence.passageId is None
    assert h.replayed_equal()


def test_evidence_at_a_grounded_node_carries_the_passage_id() -> None:
    h = at_own(Harness(grounded_document()), AttachMaterial("sub-1", "submission", REPORT))
    (drawn,) = h.of("passage_drawn")
    h.say("All weights are positive, so Dijkstra is correct and faster.", at=10)
    h.observe(at=11, signals=[signal("tgt-q-own", excerpt="all weights are positive")])
    (evidence,) = [s for s in h.of("evidence_signal") if s.nodeId == "q-own"]
    assert evidence.passageId == drawn.passageId
    h.say("And it is simpler to build.", at=12)
    h.observe(at=13, done=True, spoken="Thank you.")
    assert h.node == "q-dijkstra"
    h.say("It settles the nearest unvisited vertex.", at=20)
    h.observe(at=21, signals=[signal("tgt-greedy-choice")])
    assert [s.passageId for s in h.of("evidence_signal") if s.nodeId == "q-dijkstra"] == [None]
    assert h.replayed_equal()


def test_a_passage_drawn_at_one_node_is_not_drawn_at_the_next() -> None:
    document = grounded_document(pick="choice")
    document["nodes"].append(grounded_node("q-own-2", "q-dijkstra", pick="choice"))
    put(document, "nodes[q-own].transitions[0].targetNodeId", "q-own-2")
    h = at_own(Harness(document), AttachMaterial("sub-1", "submission", REPORT))
    h.say("Positive weights.", at=10)
    h.observe(at=11, signals=[signal("tgt-q-own")])
    h.say("More of the same.", at=12)
    h.observe(at=13, signals=[signal("tgt-q-own")], done=True)
    assert h.node == "q-own-2"
    first, second = h.of("passage_drawn")
    assert {first.passageId, second.passageId} == {"sub-1:1", "sub-1:4"}
    assert h.replayed_equal()


def test_a_restored_controller_rebuilds_the_passage_and_ignores_a_second_hand_over() -> None:
    h = at_own(Harness(grounded_document()), AttachMaterial("sub-1", "submission", REPORT))
    stored = [EventEnvelope.model_validate(e.model_dump(mode="json")) for e in h.events]
    restored = RuntimeController.restore(
        h.controller.plan, session_id=h.session_id, events=stored, clock=h.clock
    )
    enter, *_ = _entry_effects(h)
    own = restored.plan.node("q-own")
    assert passage_additions(restored.state, own) == enter.task_additions
    assert fallback_question(restored.state, own) is None
    again = restored.handle(AttachMaterial("sub-1", "submission", REPORT))
    assert again.events == () and again.result["status"] == "ignored"
