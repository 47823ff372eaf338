"""The options of a grounded node's seeded draw (candidate-materials.md §5).

The runtime draws with the session's RNG, ``rng.choose(draw_key(node_id), ids)``, exactly as
it draws a question pool; this module says which passages are the options, in a fixed order,
so the draw can be rebuilt from the log alone (the ``material_attached`` events in order).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ioa.materials.passages import Passage


@dataclass(frozen=True, slots=True)
class AttachedMaterial:
    """A material as the runtime holds it: its id, kind and qualifying passages."""

    material_id: str
    kind: str
    passages: tuple[Passage, ...]


@dataclass(frozen=True, slots=True)
class DrawOption:
    """One passage a node may draw, with the material it comes from."""

    material_id: str
    passage: Passage


def draw_key(node_id: str) -> str:
    """The key of a node's passage draw (a pool's draw is keyed by the pool id)."""
    return f"passage|{node_id}"


def draw_options(
    materials: Sequence[AttachedMaterial],
    *,
    kind: str,
    pick: str,
    max_chars: int,
    drawn_elsewhere: Collection[str] = (),
) -> tuple[DrawOption, ...]:
    """The passages of ``kind`` materials (attachment order, then document order) whose cue is
    ``pick`` (any cue for ``any``) and whose text has at most ``max_chars`` characters; those
    already drawn at another node are left out while another option remains."""
    options = tuple(
        DrawOption(material.material_id, passage)
        for material in materials
        if material.kind == kind
        for passage in material.passages
        if (pick == "any" or passage.cue == pick) and len(passage.text) <= max_chars
    )
    fresh = tuple(o for o in options if o.passage.passage_id not in drawn_elsewhere)
    return fresh or options
