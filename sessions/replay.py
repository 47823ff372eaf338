"""Replay a session from its stored log (chapter 05 §6.3): a fold over the stored envelopes in
seq order, with any reducer. The default rebuilds an ``ioa.events.SessionSummary``; the runtime
controller passes its own reducer to rebuild its state."""

from __future__ import annotations

import uuid
from typing import cast

from ioa.events import SessionSummary, fold, summarise
from ioa.events.replay import Reducer
from sessions.selectors import iter_rows, wire_from_row


def replay_session[S](
    *,
    session_id: uuid.UUID | str,
    reducer: Reducer[S] | None = None,
    initial: S | None = None,
    until_seq: int | None = None,
) -> S:
    """Fold the session's stored events (up to ``until_seq``) with ``reducer`` from
    ``initial``; without a reducer, return a :class:`SessionSummary`."""
    events = (wire_from_row(row) for row in iter_rows(session_id=session_id, until_seq=until_seq))
    if reducer is None:
        return cast(S, fold(events, summarise, SessionSummary()))
    if initial is None:
        raise ValueError("a reducer needs an initial state")
    return fold(events, reducer, initial)


def session_summary(*, session_id: uuid.UUID | str) -> SessionSummary:
    """The :class:`SessionSummary` rebuilt from the log."""
    return replay_session(session_id=session_id, reducer=summarise, initial=SessionSummary())
