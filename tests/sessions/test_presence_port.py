"""``sessions.presence_port``: the proctoring app registers the presence tracking that the
session socket drives (sessions imports no proctoring module). The sockets through it, over real
daphne servers, are tested in tests/proctoring/test_presence_tracking.py."""

from __future__ import annotations

import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from proctoring.presence import Presence
from proctoring.presence_tracking import CandidatePresence, presence_message
from sessions import presence_port
from tests.sessions.factories import ExamSessionFactory


def test_the_proctoring_app_registers_its_presence_tracker() -> None:
    assert isinstance(presence_port.presence_tracker(), CandidatePresence)


@pytest.mark.django_db(transaction=True)
def test_a_socket_counted_through_the_port_shows_in_the_proctors_frame() -> None:
    tracker = presence_port.presence_tracker()
    assert tracker is not None
    session = ExamSessionFactory()
    socket = tracker.socket(session.pk, f"test-{uuid.uuid4().hex}", get_channel_layer())
    async_to_sync(socket.opened)()
    view = tracker.view(session.pk)
    assert (view["status"], view["sockets"]) == ("connected", 1)
    async_to_sync(socket.closed)(1001)
    after = tracker.view(session.pk)
    assert (after["status"], after["sockets"]) == ("reconnecting", 0)


def test_a_presence_message_reads_as_the_frame_a_proctor_gets() -> None:
    tracker = presence_port.presence_tracker()
    assert tracker is not None
    never = Presence()
    frame = tracker.view_of(presence_message(uuid.uuid4(), never))
    assert frame["status"] == "not_connected" and frame["sockets"] == 0
