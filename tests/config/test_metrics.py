"""``GET /metrics`` (issue #33): off without a token, a 404 for a wrong one, and with it the
cluster's state in Prometheus's text format, scraped from a real daphne process over HTTP and
read with prometheus_client's own parser (an independent reader of the format)."""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from bot import capacity
from bot.models import BotLease
from sessions import outbox
from sessions.models import CandidateInput, OutboxMessage
from tests.sessions.factories import ExamSessionFactory
from tests.sessions.reply_turns import voice_and_text_exams
from tests.support.outbox import held_relay
from tests.support.processes import asgi_server

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "scraper-token-3f9a"


def scrape(address: str, token: str | None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://{address}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (http to our server)
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def cluster_state() -> None:
    """Two bots on one worker, one on another, a start queued 30 s ago, an answer waiting 12 s,
    a grade post pending and a webhook dead."""
    now = timezone.now()
    later = now + timedelta(seconds=30)
    for holder in ("celery:host-a:11:aaa", "celery:host-a:11:bbb", "celery:host-b:7:ccc"):
        BotLease.objects.create(
            session=ExamSessionFactory(), state="running", holder=holder, expires_at=later
        )
    BotLease.objects.create(
        session=ExamSessionFactory(), state="starting", requested_at=now - timedelta(seconds=30)
    )
    CandidateInput.objects.create(
        session=ExamSessionFactory(),
        input_id="in-1",
        kind="candidate_text",
        payload={"text": "Dijkstra settles the closest vertex."},
        received_at=now - timedelta(seconds=12),
    )
    with held_relay(), transaction.atomic():
        outbox.enqueue(topic="lti.post_grade", key="s-1", payload={"sessionId": "s-1"})
        outbox.enqueue(topic="webhooks.emit", key="w-1", payload={})
    OutboxMessage.objects.filter(key="w-1").update(status="dead")
    cache.delete(capacity.INDEX_KEY)
    capacity.report(worker="celery:host-a:11", capacity=50, hosted=2, draining=False)
    capacity.report(worker="celery:host-b:7", capacity=50, hosted=1, draining=True)


def test_metrics_are_off_without_a_token(settings: Any) -> None:
    settings.VIVA_METRICS_TOKEN = ""
    assert Client().get("/metrics").status_code == 404
    settings.VIVA_METRICS_TOKEN = TOKEN
    assert Client().get("/metrics").status_code == 404
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 404
    assert Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405


def test_a_scrape_of_a_real_server_reads_the_cluster_state() -> None:
    cluster_state()
    with asgi_server(VIVA_METRICS_TOKEN=TOKEN) as address:
        assert scrape(address, "wrong")[0] == 404
        status, text = scrape(address, TOKEN)
    assert status == 200
    got = samples(text)
    assert got[("viva_hosted_exams", (("worker", "celery:host-a:11"),))] == 2
    assert got[("viva_hosted_exams", (("worker", "celery:host-b:7"),))] == 1
    assert got[("viva_bot_starts_queued", ())] == 1
    assert 29 <= got[("viva_bot_start_oldest_age_seconds", ())] < 120
    assert got[("viva_inbox_pending", ())] == 1
    assert 11 <= got[("viva_inbox_oldest_age_seconds", ())] < 120
    assert got[("viva_outbox_pending", (("topic", "lti.post_grade"),))] == 1
    assert got[("viva_outbox_dead", (("topic", "webhooks.emit"),))] == 1
    assert got[("viva_bot_restarts_total", ())] == 0
    assert got[("viva_channel_layer_up", ())] == 1
    assert got[("viva_bot_workers", ())] == 2
    assert got[("viva_bot_capacity", ())] == 50  # the draining worker offers no room


def test_a_scrape_reads_the_reply_latencies_of_recent_turns_by_mode() -> None:
    """tests/sessions/reply_turns.py: voice waits 1.2 and 2.5 s, text 0.7 and 4.0 s; an
    unanswered turn, turns before the 15-minute window and a preview are not counted."""
    voice_and_text_exams()
    with asgi_server(VIVA_METRICS_TOKEN=TOKEN) as address:
        assert scrape(address, None) == (404, "")  # still nothing without the token
        status, text = scrape(address, TOKEN)
    assert status == 200
    got = samples(text)

    def buckets(mode: str) -> dict[str, float]:
        return {
            dict(labels)["le"]: value
            for (name, labels), value in got.items()
            if name == "viva_reply_latency_seconds_bucket" and dict(labels)["mode"] == mode
        }

    assert buckets("voice") == {
        "0.5": 0, "1.0": 0, "1.5": 1, "2.0": 1, "3.0": 2,
        "5.0": 2, "8.0": 2, "13.0": 2, "30.0": 2, "+Inf": 2,
    }  # fmt: skip
    assert buckets("text") == {
        "0.5": 0, "1.0": 1, "1.5": 1, "2.0": 1, "3.0": 1,
        "5.0": 2, "8.0": 2, "13.0": 2, "30.0": 2, "+Inf": 2,
    }  # fmt: skip
    for mode, total in (("voice", 3.7), ("text", 4.7)):
        assert got[("viva_reply_latency_seconds_count", (("mode", mode),))] == 2
        assert got[("viva_reply_latency_seconds_sum", (("mode", mode),))] == pytest.approx(total)
    help_text = next(
        f.documentation
        for f in text_string_to_metric_families(text)
        if f.name == "viva_reply_latency_seconds"
    )
    assert "last 15 minutes" in help_text
