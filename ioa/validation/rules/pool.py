"""Step 2 (project extension): question pool structure (POOL-001..002).

Pools (spec-notes §1) have no rule ids in chapter 08; FAIR-003/004 cover their fairness. These
rules make sure a pool can be resolved at runtime.
"""

from __future__ import annotations

from collections.abc import Iterator

from ioa.schema.fields import IDENTIFIER_RE
from ioa.validation.document import as_str, describe
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import PUBLISH_AND_RUNTIME, RuleInput, rule


@rule(
    "POOL-001",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=(
        "questionPools[].poolId MUST be a valid id, unique among pool ids and node ids (one "
        "namespace)."
    ),
)
def pool_ids_unique(inp: RuleInput) -> Iterator[Issue]:
    """Pool ids are well-formed and clash with neither another pool nor a node."""
    doc = inp.doc
    seen: dict[str, int] = {}
    for pool in doc.pools:
        if not pool.is_object:
            continue
        value = pool.raw.get("poolId")
        pool_id = as_str(value)
        if pool_id is None or IDENTIFIER_RE.fullmatch(pool_id) is None:
            yield Issue(
                pool.path("poolId"),
                f"poolId must be 1-128 characters from a-z, A-Z, 0-9, '_' and '-', got "
                f"{describe(value)}",
            )
            continue
        if pool_id in seen:
            yield Issue(
                pool.path("poolId"),
                f"poolId '{pool_id}' is already used by questionPools[{seen[pool_id]}]; give each "
                "pool a unique id",
            )
        elif pool_id in doc.node_by_id:
            yield Issue(
                pool.path("poolId"),
                f"poolId '{pool_id}' is also a nodeId; pool ids and node ids share one namespace "
                "(a transition target must be unambiguous), so rename the pool",
            )
        seen.setdefault(pool_id, pool.index)


@rule(
    "POOL-002",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=("questionPools[].nodeIds MUST list at least one existing, non-end node, each once."),
    stages=PUBLISH_AND_RUNTIME,
)
def pool_members_exist(inp: RuleInput) -> Iterator[Issue]:
    """Every pool member is an existing non-end node, listed once."""
    doc = inp.doc
    for pool in doc.pools:
        if not pool.is_object:
            continue
        label = f"pool '{pool.pool_id}'" if pool.pool_id else f"questionPools[{pool.index}]"
        members = pool.raw.get("nodeIds")
        if not isinstance(members, list) or not members:
            yield Issue(
                pool.path("nodeIds"),
                f"{label} must list the ids of its alternative nodes in nodeIds, got "
                f"{describe(members)}",
            )
            continue
        listed: set[str] = set()
        for position, member in enumerate(members):
            if not isinstance(member, str):
                continue
            node = doc.node_by_id.get(member)
            if member in listed:
                yield Issue(
                    pool.path("nodeIds", position),
                    f"{label} lists '{member}' twice; list each alternative once",
                )
            elif node is None:
                yield Issue(
                    pool.path("nodeIds", position),
                    f"{label} lists '{member}', which is not a nodeId; add that node or remove "
                    "it from the pool",
                )
            elif node.is_end:
                yield Issue(
                    pool.path("nodeIds", position),
                    f"{label} lists the end node '{member}'; a pool holds alternative questions, "
                    "so remove it",
                )
            listed.add(member)
