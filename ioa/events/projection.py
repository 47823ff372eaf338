"""Per-audience projections: what each consumer may see of an event.

The candidate's projection keeps only the payload keys the registry lists for the type
(``candidate_fields``) and nothing at all for types not sent to the candidate (evidence,
misconceptions, guardrails, transitions, follow-ups, proctor instructions...) or for payloads
the type's ``candidate_condition`` excludes (a proctor's ``flag_irregularity``). Other
audiences get the event whole or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioa.events.registry import spec_for
from ioa.events.types import Audience


def project(wire: Mapping[str, Any], audience: Audience | str) -> dict[str, Any] | None:
    """The event as ``audience`` may see it, or ``None`` if it is not sent to that audience.

    ``wire`` is an envelope's JSON object (canonical type). Never mutates ``wire``.
    """
    spec = spec_for(wire["type"])
    audience = Audience(audience)
    if audience not in spec.audiences:
        return None
    if audience is Audience.CANDIDATE and not spec.sent_to_candidate(wire["payload"]):
        return None
    projected = {key: value for key, value in wire.items() if key not in {"hash", "prevHash"}}
    if audience is Audience.CANDIDATE and spec.candidate_fields is not None:
        keep = spec.candidate_fields
        projected["payload"] = {
            key: value for key, value in wire["payload"].items() if key == "type" or key in keep
        }
    return projected


def visible_to(event_type: str, audience: Audience | str) -> bool:
    """Whether events of ``event_type`` reach ``audience`` at all (some of them may still be
    withheld from the candidate by the type's ``candidate_condition``: use :func:`project`)."""
    return Audience(audience) in spec_for(event_type).audiences
