"""The built-in rules, one module per category, registered on import.

Importing this package registers every built-in rule, the declared-only rules (runtime and
adapter ids enforced elsewhere), and then the adapter rules module
(``ioa.validation.rules.adapter``) if it exists. A missing or broken adapter module never
breaks this import: the pipeline reports it when it reaches step 9.
"""

from __future__ import annotations

import importlib
import importlib.util

from ioa.validation.rules import (
    compatibility,
    declared,
    end,
    evidence,
    fairness,
    follow_up,
    grounding,
    integrity,
    node,
    package,
    policy,
    pool,
    question,
    reachability,
    recovery,
    schema,
    transition,
)

BUILT_IN_MODULES = (
    schema,
    package,
    pool,
    node,
    question,
    grounding,
    end,
    transition,
    evidence,
    policy,
    follow_up,
    recovery,
    fairness,
    reachability,
    compatibility,
    integrity,
    declared,
)
"""Every built-in rule module, in pipeline order."""


def _import_adapter_rules() -> None:
    try:
        if importlib.util.find_spec("ioa.validation.rules.adapter") is not None:
            importlib.import_module("ioa.validation.rules.adapter")
    except Exception:  # noqa: S110 - reported by the pipeline at step 9 (VAL-001/003)
        pass


_import_adapter_rules()
