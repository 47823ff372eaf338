"""``sessions.reply_latency`` (issue #33): the wait from the end of each candidate turn to the
examiner's reply, over the last 15 minutes of stored events, by exam mode."""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sessions.reply_latency import histogram, recent_reply_latencies, reply_latency_histograms
from tests.sessions.factories import ExamSessionFactory
from tests.sessions.reply_turns import candidate, reply, store, voice_and_text_exams

pytestmark = pytest.mark.django_db


def test_each_answered_turn_is_paired_with_the_reply_that_followed_it() -> None:
    now = timezone.now()
    voice_and_text_exams(now)
    with CaptureQueriesContext(connection) as queries:
        got = recent_reply_latencies(now=now)
    assert len(queries) == 1  # one query whatever the number of sessions
    # voice: 10.0 -> 11.2 s, and from the second segment of a two-segment turn, 24.0 -> 26.5 s;
    # the opening, the examiner's words, the unanswered last turn, the old exam and the
    # preview are not waits.
    assert got["voice"] == pytest.approx([1.2, 2.5])
    # text: 5.0 -> 5.7 s; a reply without atMs: 4 s between the events' timestamps.
    assert sorted(got["text"]) == pytest.approx([0.7, 4.0])


def test_a_turn_not_answered_yet_and_turns_before_the_window_are_not_counted() -> None:
    now = timezone.now()
    session = ExamSessionFactory(exam_mode="voice")
    store(
        session,
        [(960, candidate(1, 1_000)), (30, reply(1, 931_500)), (5, candidate(2, 956_000))],
        now=now,
    )
    assert recent_reply_latencies(now=now) == {"voice": [], "text": []}


def test_a_reply_that_started_before_the_turn_ended_is_no_wait() -> None:
    now = timezone.now()
    session = ExamSessionFactory(exam_mode="text")
    store(session, [(20, candidate(1, 9_000)), (19, reply(1, 8_500))], now=now)
    assert recent_reply_latencies(now=now)["text"] == []


def test_the_histogram_counts_each_wait_in_every_bucket_at_or_above_it() -> None:
    waits = histogram([0.7, 4.0, 0.5, 31.0])
    assert waits.buckets == [
        (0.5, 1),
        (1.0, 2),
        (1.5, 2),
        (2.0, 2),
        (3.0, 2),
        (5.0, 3),
        (8.0, 3),
        (13.0, 3),
        (30.0, 3),
        (math.inf, 4),
    ]
    assert waits.count == 4
    assert waits.total_seconds == pytest.approx(36.2)


def test_histograms_per_mode_from_the_stored_events() -> None:
    now = timezone.now()
    voice_and_text_exams(now)
    got = reply_latency_histograms(now=now)
    assert dict(got["voice"].buckets) == {
        0.5: 0,
        1.0: 0,
        1.5: 1,
        2.0: 1,
        3.0: 2,
        5.0: 2,
        8.0: 2,
        13.0: 2,
        30.0: 2,
        math.inf: 2,
    }
    assert got["voice"].total_seconds == pytest.approx(3.7)
    assert dict(got["text"].buckets) == {
        0.5: 0,
        1.0: 1,
        1.5: 1,
        2.0: 1,
        3.0: 1,
        5.0: 2,
        8.0: 2,
        13.0: 2,
        30.0: 2,
        math.inf: 2,
    }
    assert got["text"].total_seconds == pytest.approx(4.7)
