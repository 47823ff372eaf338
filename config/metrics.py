"""``GET /metrics``: the operator's view in Prometheus's text format (issue #33;
docs/operations.md "Metrics").

Off unless ``VIVA_METRICS_TOKEN`` is set; then a scraper sends ``Authorization: Bearer
<token>`` (anything else is a 404, as if there were no endpoint: the figures tell an outsider how
busy the exams are). Each scrape reads the cluster's state from the database, so any web process
answers for all of them (a handful of aggregate queries, no per-session work):

* ``viva_hosted_exams{worker}`` — running bots per worker process (``<runner>:<host>:<pid>``);
* ``viva_bot_starts_queued`` and ``viva_bot_start_oldest_age_seconds`` — starts no worker took
  yet (a full or stopped cluster shows here first);
* ``viva_bot_restarts_total`` — bots restarted after their worker died (lease expiries);
* ``viva_bot_workers`` and ``viva_bot_capacity`` — the bot workers that reported in the last
  30 s and the exams they may host in all (``bot.capacity``: admission control);
* ``viva_inbox_pending`` and ``viva_inbox_oldest_age_seconds`` — candidate inputs no bot has
  processed (an answer waiting while its bot moves);
* ``viva_outbox_pending{topic}``, ``viva_outbox_dead{topic}`` and
  ``viva_outbox_oldest_age_seconds`` — side effects waiting (marking, grades, webhooks);
* ``viva_channel_layer_up`` and ``viva_channel_layer_outages_total`` — this web process's view
  of the Redis channel layer;
* ``viva_reply_latency_seconds{mode}`` — how long candidates waited for the examiner's reply,
  over the turns of the last 15 minutes (``sessions.reply_latency``): a snapshot of the window,
  not a running total (read its buckets directly, without ``rate()``).
"""

from __future__ import annotations

import hmac
import math
from collections.abc import Iterator
from datetime import datetime

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from bot import capacity
from bot.selectors import hosting_summary
from sessions import layer_outage, outbox
from sessions.inbox import inbox_backlog
from sessions.reply_latency import WINDOW, reply_latency_histograms


class ClusterCollector(Collector):
    """The figures of the module docstring, read at each scrape."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        hosting = hosting_summary(now=now)
        hosted = GaugeMetricFamily(
            "viva_hosted_exams", "Running exam bots per worker process.", labels=["worker"]
        )
        for worker, count in sorted(hosting.hosted_by_worker.items()):
            hosted.add_metric([worker], count)
        yield hosted
        yield GaugeMetricFamily(
            "viva_bot_starts_queued", "Bot starts no worker took yet.", value=hosting.queued_starts
        )
        yield GaugeMetricFamily(
            "viva_bot_start_oldest_age_seconds",
            "How long the oldest queued bot start has waited.",
            value=hosting.oldest_queued_seconds,
        )
        yield CounterMetricFamily(
            "viva_bot_restarts", "Bots restarted after their worker died.", value=hosting.restarts
        )
        cluster = capacity.cluster()
        yield GaugeMetricFamily(
            "viva_bot_workers", "Bot workers that reported in the last 30 s.", value=cluster.workers
        )
        yield GaugeMetricFamily(
            "viva_bot_capacity",
            "Exams the reporting, non-draining bot workers may host in all.",
            value=cluster.capacity,
        )
        yield from _inbox(now)
        yield from _outbox(now)
        yield GaugeMetricFamily(
            "viva_channel_layer_up",
            "1 while this process reaches the channel layer.",
            value=0 if layer_outage.is_down() else 1,
        )
        yield CounterMetricFamily(
            "viva_channel_layer_outages",
            "Channel-layer outages this process noticed.",
            value=layer_outage.outages(),
        )
        yield _reply_latency(now)


def _inbox(now: datetime) -> Iterator[GaugeMetricFamily]:
    pending, age = inbox_backlog(now=now)
    yield GaugeMetricFamily(
        "viva_inbox_pending", "Candidate inputs no bot has processed yet.", value=pending
    )
    yield GaugeMetricFamily(
        "viva_inbox_oldest_age_seconds", "How long the oldest waiting input has waited.", value=age
    )


def _outbox(now: datetime) -> Iterator[GaugeMetricFamily]:
    waiting = outbox.backlog(now=now)
    for name, text, counts in (
        (
            "viva_outbox_pending",
            "Side effects waiting to be carried out.",
            waiting.pending_by_topic,
        ),
        ("viva_outbox_dead", "Side effects whose attempts are used up.", waiting.dead_by_topic),
    ):
        family = GaugeMetricFamily(name, text, labels=["topic"])
        for topic, count in sorted(counts.items()):
            family.add_metric([topic], count)
        yield family
    yield GaugeMetricFamily(
        "viva_outbox_oldest_age_seconds",
        "How long the oldest pending side effect has waited.",
        value=waiting.oldest_pending_seconds,
    )


def _reply_latency(now: datetime) -> HistogramMetricFamily:
    minutes = WINDOW.total_seconds() / 60
    family = HistogramMetricFamily(
        "viva_reply_latency_seconds",
        f"Seconds from the end of a candidate's turn to the start of the examiner's reply, "
        f"over the turns of the last {minutes:g} minutes (a snapshot of the window, not a total).",
        labels=["mode"],
    )
    for mode, waits in reply_latency_histograms(now=now).items():
        family.add_metric(
            [mode],
            buckets=[(_le(bound), count) for bound, count in waits.buckets],
            sum_value=waits.total_seconds,
        )
    return family


def _le(bound: float) -> str:
    """A bucket's ``le`` label as Prometheus writes it (``0.5``, ``1.0``, ``+Inf``)."""
    return "+Inf" if math.isinf(bound) else repr(float(bound))


REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(ClusterCollector())


def _authorised(request: HttpRequest) -> bool:
    token = getattr(settings, "VIVA_METRICS_TOKEN", "")
    if not token:
        return False
    sent = request.headers.get("Authorization", "")
    return hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """The figures, for a scraper holding the token (module docstring); a 404 for anyone else."""
    if not _authorised(request):
        raise Http404("no such page")
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
