"""Writes of the sessions app, in one place: import them from here (``from sessions import
services``), as the HackSoft layout has it (``selectors.py`` reads, ``services.py`` writes).

Every write is keyword-only and runs in one transaction (``transaction.atomic``; the event
store appends under the session row's lock, in the lock order of ``sessions.event_store``).
Each lives beside the code of its concern and is exported here:

- scheduling (``sessions.scheduling``): :func:`sitting_create`, :func:`candidate_add`,
  :func:`candidates_import`, :func:`invitations_send`;
- the candidate's journey (``sessions.exam_room``): :func:`identity_confirm`,
  :func:`briefing_acknowledge`, :func:`mode_choose`, :func:`accommodations_set`;
- start windows (``sessions.windows``): :func:`window_override`;
- previews (``sessions.previews``): :func:`preview_start`;
- practice sittings (``sessions.practice``): :func:`practice_again`;
- candidate commands (``sessions.commands``): :func:`command_handle`;
- the event log (``sessions.event_store``): :func:`append_events`;
- candidate materials (``sessions.materials``): :func:`material_upload`,
  :func:`materials_bulk_upload`.
"""

from __future__ import annotations

from sessions.commands import command_handle
from sessions.event_store import append_events
from sessions.exam_room import (
    accommodations_set,
    briefing_acknowledge,
    identity_confirm,
    mode_choose,
)
from sessions.materials import material_upload, materials_bulk_upload
from sessions.practice import practice_again
from sessions.previews import preview_start
from sessions.scheduling import candidate_add, candidates_import, invitations_send, sitting_create
from sessions.windows import window_override

__all__ = [
    "accommodations_set",
    "append_events",
    "briefing_acknowledge",
    "candidate_add",
    "candidates_import",
    "command_handle",
    "identity_confirm",
    "invitations_send",
    "material_upload",
    "materials_bulk_upload",
    "mode_choose",
    "practice_again",
    "preview_start",
    "sitting_create",
    "window_override",
]
