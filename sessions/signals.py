"""What the sessions app tells the apps above it, sent once the write has committed.

``sessions`` sits below ``bot``, ``marking`` and ``proctoring`` (docs/architecture.md,
"Dependency direction"): it never imports them. Where they must react to a session's facts they
subscribe here, in their ``AppConfig.ready()``; the event store sends after the transaction that
stored the events commits (at once under autocommit), never for a batch that rolls back, and
never for a re-delivered duplicate (Zulip's ``send_event_on_commit``: write, then tell).

* :data:`events_appended` — newly stored events of one append, in seq order. Keyword
  arguments: ``session_id`` (``uuid.UUID``) and ``events`` (a tuple of
  ``sessions.event_store.StoredEvent``, each with its ``seq``; live-only events are not sent).
* :data:`session_completed` — ``exam_completed`` was stored for the session. Keyword
  argument: ``session_id`` (``uuid.UUID``).

* :data:`personal_data_erased` — a session's personal data was pseudonymised
  (``sessions.erasure``). Unlike the others it is sent **inside** the erasure's transaction,
  after the session's events were swapped, so a receiver erases its own copies atomically with
  them (an exception rolls the whole erasure back). Keyword arguments: ``session_id``
  (``uuid.UUID``) and ``erasure`` (the ``PersonalDataErasure``).

Receivers of the first two run in the committing thread; an exception in one propagates to the
writer after the commit (the events stay stored), so a receiver hands slow work to a task.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.dispatch import Signal


class SessionsApp:
    """The sender of every signal here: the sessions app (``label``). An object rather than the
    label string because Django caches a signal's receivers per sender in a weak-keyed map,
    which a ``str`` cannot enter; uncached, every send took the signal's lock and re-listed its
    receivers (one send per append)."""

    label = "exam_sessions"

    def __repr__(self) -> str:
        return f"<sender {self.label}>"


SENDER = SessionsApp()
"""The sender of every signal here."""

events_appended = Signal(use_caching=True)
session_completed = Signal(use_caching=True)
personal_data_erased = Signal(use_caching=True)


def send_now(signal: Signal, **kwargs: object) -> None:
    """Send ``signal`` (sender: :data:`SENDER`) now: the write it tells of has
    committed."""
    signal.send(sender=SENDER, **kwargs)


def send_on_commit(signal: Signal, **kwargs: object) -> None:
    """Send ``signal`` once the current transaction commits; at once outside a transaction,
    where the write has committed already."""
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        transaction.on_commit(lambda: send_now(signal, **kwargs))
    else:
        send_now(signal, **kwargs)
