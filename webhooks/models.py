"""Webhook endpoints (managed by admins), one delivery per (endpoint, event), and every attempt.

* :class:`WebhookEndpoint` — an integrator's URL, its signing secret and the events it hears of.
* :class:`WebhookDelivery` — one event for one endpoint: its ``id`` is the ``webhook-id`` header,
  the same on every attempt (the receiver's idempotency key); ``event_key`` names the fact
  (``exam.completed:<session>``), unique per endpoint, so a fact is delivered once however often it
  is reported.
* :class:`WebhookAttempt` — the delivery log: one row per HTTP request, with its status code,
  latency, the start of the response and when the next attempt is due.
"""

from __future__ import annotations

import base64
import secrets
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from webhooks.events import WebhookEvent


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class WebhookEndpoint(models.Model):
    name = models.CharField(max_length=100)
    url = models.URLField(max_length=500, help_text="http(s) only; see docs/webhooks.md")
    secret = models.CharField(
        max_length=100,
        default=new_secret,
        help_text="Signing secret (whsec_…): give it to the integrator; change it to rotate.",
    )
    events = models.JSONField(
        default=list, help_text='Event types this endpoint hears of, e.g. ["exam.completed"].'
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.url})"

    def hears(self, event: str) -> bool:
        return self.active and event in (self.events or [])


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    id = models.CharField(primary_key=True, max_length=40, default=new_message_id, editable=False)
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.CharField(max_length=40, choices=WebhookEvent.choices)
    event_key = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event_key"], name="webhook_delivery_once_per_fact"
            )
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint.name} ({self.status})"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField()
    response_excerpt = models.CharField(max_length=500, blank=True)
    error = models.CharField(max_length=300, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_once")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}: {self.status_code or self.error}"
