"""Every rule the built-in modules evaluate has a trigger case and a near-miss case."""

from __future__ import annotations

from ioa.validation import REGISTRY
from ioa.validation.pipeline import load_rules
from ioa.validation.rules import BUILT_IN_MODULES
from tests.ioa.validation.rules import (
    test_compatibility,
    test_end,
    test_evidence,
    test_fairness,
    test_follow_up,
    test_grounding,
    test_integrity,
    test_node,
    test_package,
    test_policy,
    test_pool,
    test_question,
    test_reachability,
    test_recovery,
    test_schema,
    test_transition,
)

CASE_MODULES = (
    test_schema,
    test_package,
    test_pool,
    test_node,
    test_question,
    test_grounding,
    test_end,
    test_transition,
    test_reachability,
    test_evidence,
    test_policy,
    test_follow_up,
    test_recovery,
    test_fairness,
    test_compatibility,
    test_integrity,
)

TESTED_OUTSIDE_CASES = {
    "CMP-010": "test_compatibility.test_cmp_010_* (needs a stand-in compiler)",
}


def test_every_built_in_rule_has_cases() -> None:
    load_rules()
    built_in = {module.__name__ for module in BUILT_IN_MODULES}
    evaluated = {
        spec.rule_id for spec in REGISTRY if spec.check is not None and spec.module in built_in
    }
    covered = {case.rule_id for module in CASE_MODULES for case in module.CASES}
    missing = evaluated - covered - set(TESTED_OUTSIDE_CASES)
    assert not missing, f"rules without trigger/near-miss cases: {sorted(missing)}"
    assert not covered - evaluated, "cases for rules that are not registered"
