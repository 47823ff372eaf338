"""Typed reading of stored payloads for the read models outside the runtime (issue #36).

The runtime (``ioa.runtime.evolve``) folds :class:`~ioa.events.EventEnvelope` objects whose
payloads are already their models; the marking log (``ioa.marking.log``) and the proctor's read
models (``proctoring.overview``, ``proctoring.session_detail``) fold stored wire envelopes (JSON
objects). :func:`payload_of` reads such an envelope's payload through the same strict models
(:mod:`ioa.events.payloads`), so a field's name and type are checked by mypy wherever the
payload is read, and a payload that does not validate is ``None``: the caller skips the event
(fail closed) rather than guessing at it.

:func:`on` builds a row of a dispatch table (event type → payload model and a handler typed
for that model), the shape the marking log's and the runtime's tables have::

    _HANDLERS = dict((on(p.NodeEntered, _node_entered), on(p.FollowUpUsed, _follow_up)))
    model, handle = _HANDLERS[event["type"]]
    payload = payload_of(model, event)
    if payload is not None:
        handle(view, payload, ...)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Concatenate

from pydantic import ValidationError

from ioa.events.payloads import Payload


def type_name(model: type[Payload]) -> str:
    """The event type a payload model carries (its ``type`` literal's default)."""
    return str(model.model_fields["type"].default)


def payload_of[P: Payload](model: type[P], event: Mapping[str, object]) -> P | None:
    """The payload of the wire envelope ``event`` read as ``model``; ``None`` when it is not
    a JSON object or does not validate (a missing ``type`` is filled in; another type's is
    refused)."""
    raw = event.get("payload")
    if not isinstance(raw, Mapping):
        return None
    try:
        return model.model_validate(dict(raw))
    except ValidationError:
        return None


def on[S, P: Payload, **A, R](
    model: type[P], handle: Callable[Concatenate[S, P, A], R | None]
) -> tuple[str, tuple[type[Payload], Callable[Concatenate[S, Payload, A], R | None]]]:
    """A dispatch-table row: the event type of ``model``, the model and ``handle`` widened to
    any payload (it runs only on an instance of ``model``; anything else is ignored)."""

    def run(subject: S, payload: Payload, /, *args: A.args, **kwargs: A.kwargs) -> R | None:
        if isinstance(payload, model):
            return handle(subject, payload, *args, **kwargs)
        return None

    return type_name(model), (model, run)
