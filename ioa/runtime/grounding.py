"""Grounded nodes at runtime (docs/spec/candidate-materials.md §3-§7, GRD-004).

* :func:`attach_material`: the app's :class:`~ioa.runtime.inputs.AttachMaterial` is cut into
  its qualifying passages (:mod:`ioa.materials`) and recorded as ``material_attached``; the
  full text is never recorded.
* :func:`enter_grounded`: entering a grounded node draws its passage once, with the session's
  seeded RNG (``rng.choose("passage|<nodeId>", option ids)``, as a question pool is drawn),
  and records ``passage_drawn`` (or, failing closed, ``no_material`` / ``no_passage``) before
  the node's question. It returns the task addition that hands the passage to the LLM as
  quoted data (:func:`ioa.compiler.material_block.passage_block`).
* :func:`fallback_question`, :func:`passage_additions` and :func:`drawn_passage_id` read the
  recorded draw: the question asked when there is no passage, the task addition a resumed bot
  rebuilds the node with, the passage id evidence at the node carries.

Nothing here reads what a passage says: its text only travels, quoted, to the LLM.
"""

from __future__ import annotations

import hashlib

from ioa.compiler.material_block import no_passage_block, passage_block
from ioa.errors import InvalidInputError
from ioa.events import payloads as p
from ioa.materials import CUTTER_VERSION, draw_key, draw_options, normalise, qualifying_passages
from ioa.materials.cues import cue_languages
from ioa.runtime.inputs import AttachMaterial
from ioa.runtime.plan import NodePlan
from ioa.runtime.state import Draw, RuntimeState
from ioa.runtime.step import Step
from ioa.schema import AssessmentPackage
from ioa.schema.fields import IDENTIFIER_RE
from ioa.schema.grounding import Grounding, MaterialKind


def attach_material(step: Step, item: AttachMaterial) -> None:
    """Record a material's qualifying passages (a material id seen before is ignored)."""
    if not isinstance(item.material_id, str) or IDENTIFIER_RE.fullmatch(item.material_id) is None:
        raise InvalidInputError("material_id must be 1-128 characters from a-z A-Z 0-9 _ -")
    if item.kind not in tuple(MaterialKind) or not isinstance(item.text, str):
        raise InvalidInputError("kind must be submission or report, and text a string")
    if any(m.material_id == item.material_id for m in step.state.materials):
        step.result.update({"status": "ignored", "reason": "material already attached"})
        return
    language = item.language or step.plan.package.metadata.language
    languages = cue_languages(language)
    normalised = normalise(item.text)
    passages = qualifying_passages(item.material_id, item.text, language)  # offsets: normalised
    step.emit(
        p.MaterialAttached(
            materialId=item.material_id,
            materialKind=item.kind,
            language=languages[-1],
            cutterVersion=CUTTER_VERSION,
            chars=len(normalised),
            textSha256=hashlib.sha256(normalised.encode("utf-8")).hexdigest(),
            passages=[
                p.MaterialPassage(
                    passageId=x.passage_id,
                    index=x.index,
                    start=x.start,
                    end=x.end,
                    cue=x.cue.value,
                )
                for x in passages
            ],
            passageTexts={x.passage_id: x.text for x in passages},
        )
    )
    step.result.update({"status": "attached", "passages": len(passages)})


def has_grounded_nodes(package: AssessmentPackage) -> bool:
    """Whether any node of ``package`` is grounded: its sessions hand the LLM the candidate's
    material, so the bot never summarises their context (candidate-materials.md §6.1)."""
    return any(node.grounding is not None for node in package.nodes)


def grounding_of(plan_node: NodePlan) -> Grounding | None:
    """The node's ``grounding``, if it is a grounded node."""
    return plan_node.node.grounding


def _draw(step: Step, node_id: str, grounding: Grounding) -> p.PassageDrawn:
    """The ``passage_drawn`` payload of a first draw at ``node_id``."""
    state = step.state
    kind = grounding.material.value
    elsewhere = {d.passage_id for n, d in state.draws.items() if n != node_id and d.passage_id}
    options = draw_options(
        state.materials,
        kind=kind,
        pick=grounding.pick.value,
        max_chars=grounding.maxPassageChars,
        drawn_elsewhere=elsewhere,
    )
    key = draw_key(node_id)
    chosen = step.rng.choose(key, [o.passage.passage_id for o in options]) if options else None
    option = next((o for o in options if o.passage.passage_id == chosen), None)
    has_material = any(m.kind == kind for m in state.materials)
    return p.PassageDrawn(
        nodeId=node_id,
        outcome="drawn" if option else "no_passage" if has_material else "no_material",
        pick=grounding.pick.value,
        materialKind=grounding.material.value,
        drawKey=key,
        optionCount=len(options),
        materialId=option.material_id if option else None,
        passageId=option.passage.passage_id if option else None,
        cue=option.passage.cue.value if option else None,
        text=option.passage.text if option else None,
    )


def enter_grounded(step: Step, plan_node: NodePlan, correlation_id: str | None) -> tuple[str, ...]:
    """At the entry of ``plan_node``: its draw (made and recorded now if it has none yet) as
    task additions; nothing for a node that is not grounded."""
    grounding = grounding_of(plan_node)
    if grounding is None:
        return ()
    if plan_node.node_id not in step.state.draws:
        step.emit(_draw(step, plan_node.node_id, grounding), correlation_id=correlation_id)
    return passage_additions(step.state, plan_node)


def _recorded(state: RuntimeState, plan_node: NodePlan) -> Draw | None:
    return state.draws.get(plan_node.node_id) if grounding_of(plan_node) else None


def passage_additions(state: RuntimeState, plan_node: NodePlan) -> tuple[str, ...]:
    """The task addition of a grounded node's recorded draw: the quoted passage, or the line
    that says there is none (also what a resumed bot adds when it rebuilds the node)."""
    draw = _recorded(state, plan_node)
    if draw is None:
        return ()
    if draw.passage_id is None or draw.text is None or draw.cue is None:
        return (no_passage_block(),)
    return (passage_block(draw.passage_id, draw.text, draw.material_kind, draw.cue),)


def fallback_question(state: RuntimeState, plan_node: NodePlan) -> str | None:
    """The fallback question of a grounded node whose draw found no passage, else None."""
    grounding = grounding_of(plan_node)
    draw = _recorded(state, plan_node)
    if grounding is None or draw is None or draw.passage_id is not None:
        return None
    return grounding.fallbackQuestion


def drawn_passage_id(state: RuntimeState, node_id: str) -> str | None:
    """The passage drawn at ``node_id`` (None: not grounded, or no passage qualified)."""
    draw = state.draws.get(node_id)
    return draw.passage_id if draw is not None else None
