"""The dry run of a package with a grounded node (docs/spec/candidate-materials.md): simulated
candidates have no material, so every run takes the fail-closed path (the fallback question)
and none is stuck there."""

from __future__ import annotations

from ioa.dry_run import run_all
from ioa.schema import load_package
from tests.ioa.runtime.test_grounding import FALLBACK, grounded_document


def test_every_simulated_candidate_gets_the_fallback_question_and_goes_on() -> None:
    runs = run_all(load_package(grounded_document()))
    assert runs and all(run.stuck_at is None for run in runs)
    for run in runs:
        (drawn,) = [e.payload for e in run.events if e.type.value == "passage_drawn"]
        assert drawn.outcome == "no_material"
        spoken = [
            e.payload.text
            for e in run.events
            if e.type.value == "examiner_utterance_final" and e.payload.nodeId == "q-own"
        ]
        assert spoken[0] == FALLBACK
