"""What the marking app announces: to the apps above it once the write has committed, and to its
own tasks, which the services never import.

* :data:`marks_locked` — a session's marks were locked (signed off). Keyword arguments:
  ``mark_id`` (int), ``session_id`` (``uuid.UUID``), ``cycle`` (the moderation cycle: 1, then one
  more per appeal) and ``locked_at`` (datetime). As with ``sessions.signals``, receivers run in
  the committing thread after the commit (never for a rolled-back lock) and hand slow work to a
  task.
* :data:`panel_requested` — a fresh mark wants the LLM marking panel. Keyword argument:
  ``mark_id`` (int). Sent at once, inside the marking transaction; ``marking.receivers``
  enqueues ``marking.tasks.run_marking_panel`` on commit (``marking.tasks`` imports
  ``marking.services``, never the reverse).
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

marks_locked = Signal()
panel_requested = Signal()


def send_on_commit(signal: Signal, **kwargs: object) -> None:
    """Send ``signal`` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: signal.send(sender="marking", **kwargs))
