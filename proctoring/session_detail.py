"""Reads for the proctor's view of one session (docs/proctoring.md): what the session page and
``/api/v1/sessions/<id>/...`` show. Staff only: callers get the session through
``proctoring.actions.session_for_proctor`` (other people's sessions answer 404), and
everything here is the proctor audience's view of the log (``ioa.events.project``).

* :func:`package_outline` — the nodes of the session's version in order, with their evidence
  targets (id, label, weight): the frame the ledger fills in. Proctor-only (never sent to a
  candidate).
* :func:`transcript` — both speakers' final turns, in order.
* :func:`ledger` — per node and evidence target, the accepted signals (latest revision of
  each ``signalId``) and whether the target is covered (a positive or self-correction signal).
* :func:`interceptions` — guardrail interceptions (with the original and replacement text when
  a text was intercepted) and recoveries (started, attempts, resolution).
* :func:`timeline` — ``sessions.selectors.session_timeline`` for the proctor audience.

This module reads the events and the package; the folds of the events are typed projections in
the domain core (``ioa.projections.session_detail``: ``transcript_of``, ``ledger_of``,
``interceptions_of``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Final

from ioa.events import Audience
from ioa.projections.session_detail import (
    ENTERED,
    INTERCEPTING,
    SIGNAL,
    TURN,
    UTTERANCE,
    Interceptions,
    OutlineNode,
    interceptions_of,
    ledger_of,
    transcript_of,
)
from ioa.schema import NodeKind
from ioa.schema.loader import load_package
from sessions.exam_room import _reachable_order
from sessions.models import ExamSession
from sessions.selectors import events_after, session_timeline

P: Final = Audience.PROCTOR


@functools.lru_cache(maxsize=64)
def _outline(checksum: str, canonical_json: str) -> tuple[OutlineNode, ...]:
    package = load_package(json.loads(canonical_json))
    nodes = {node.nodeId: node for node in package.nodes}
    outline: list[OutlineNode] = []
    for node_id in _reachable_order(package):
        node = nodes[node_id]
        if node.kind is NodeKind.END:
            continue
        outline.append(
            {
                "nodeId": node_id,
                "kind": node.kind.value,
                "title": node.title or node_id,
                "targets": [
                    {"id": t.id, "label": t.label, "weight": t.weight} for t in node.evidenceTargets
                ],
            }
        )
    return tuple(outline)


def package_outline(session: ExamSession) -> list[OutlineNode]:
    """The version's non-end nodes in visiting order with their evidence targets."""
    version = session.sitting.version
    return [n.copy() for n in _outline(version.checksum, version.canonical_json)]


def _events(session: ExamSession, types: set[str]) -> list[Mapping[str, object]]:
    return [e for e in events_after(session_id=session.pk, audience=P) if e["type"] in types]


def transcript(session: ExamSession) -> list[dict[str, object]]:
    """Both speakers' final words in order: the candidate's ``transcript_final`` turns and the
    examiner's ``examiner_utterance_final`` texts."""
    return transcript_of(_events(session, {TURN, UTTERANCE}))


def ledger(session: ExamSession) -> list[dict[str, object]]:
    """The evidence ledger per node and target (module docstring)."""
    events = _events(session, {SIGNAL, ENTERED})
    return ledger_of(events, package_outline(session))


def interceptions(session: ExamSession) -> Interceptions:
    """Guardrail interceptions and recoveries (module docstring)."""
    return interceptions_of(_events(session, set(INTERCEPTING)))


def timeline(session: ExamSession) -> list[dict[str, object]]:
    """The stored events grouped by ``correlationId`` (proctor view), JSON-ready."""
    return [
        {"correlationId": entry.correlation_id, "firstSeq": entry.first_seq, "events": entry.events}
        for entry in session_timeline(session_id=session.pk, audience=P)
    ]
