"""What the marking app announces: to the apps above it and to its own receivers, which the
services never import. Every signal here is sent **inside** the transaction that made the fact,
so a receiver writes its consequence as an outbox message in that transaction
(``sessions.outbox``, issue #33): a rolled-back fact has none, a committed one never loses it.
Receivers do no slow work (no HTTP, no task enqueue): that is the outbox relay's.

* :data:`marks_locked` — a session's marks were locked (signed off). Keyword arguments:
  ``mark_id`` (int), ``session_id`` (``uuid.UUID``), ``cycle`` (the moderation cycle: 1, then one
  more per appeal) and ``locked_at`` (datetime).
* :data:`result_released` — the locked marks of a cycle were released to the candidate. Keyword
  arguments: ``mark_id``, ``session_id``, ``cycle``.
* :data:`panel_requested` — a fresh mark wants the LLM marking panel. Keyword argument:
  ``mark_id`` (int); ``marking.receivers`` enqueues ``marking.panel``.
"""

from __future__ import annotations

from django.dispatch import Signal

marks_locked = Signal()
result_released = Signal()
panel_requested = Signal()
