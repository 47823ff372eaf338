"""The bot's bookkeeping: who runs a session's bot (the lease) and what the session cost.

* :class:`BotLease` — one row per session. A bot runs a session only while it holds the lease:
  taken under ``SELECT ... FOR UPDATE`` (``bot.lease``), renewed by the bot's heartbeat, and
  expiring when the heartbeat stops (the bot died). A session is therefore never run by two
  bots; an expired lease is how a dead bot is noticed and restarted.
* :class:`BotUsage` — provider usage of a session (LLM tokens, STT seconds, TTS characters)
  and its price from ``VIVA_PRICING``, kept up to date by the bot's heartbeat. The same figures
  are stored as ``usage_reported`` events in the session log.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.utils import timezone


class BotLease(models.Model):
    """The right to run one session's bot (see the module docstring)."""

    class State(models.TextChoices):
        STARTING = "starting", "starting"
        """A start was requested (queued for a worker); no bot holds it yet."""
        RUNNING = "running", "running"
        """``holder`` runs the bot while ``expires_at`` is in the future."""
        RELEASED = "released", "released"
        """The bot stopped without ending the exam (it may be started again)."""
        FINISHED = "finished", "finished"
        """The exam is over; the session never needs a bot again."""
        FAILED = "failed", "failed"
        """The bot could not run the session (see ``last_error``)."""

    session = models.OneToOneField(
        "exam_sessions.ExamSession",
        on_delete=models.PROTECT,
        primary_key=True,
        related_name="bot_lease",
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.STARTING)
    holder = models.CharField(max_length=200, blank=True)
    """Who holds it: ``<runner>:<host>:<pid>:<token>``."""
    runner = models.CharField(max_length=16, blank=True)
    generation = models.PositiveIntegerField(default=0)
    """Incremented on every acquisition: a bot's writes are fenced by its generation."""
    restarts = models.PositiveIntegerField(default=0)
    """How many times a bot took over from one that died (expired lease)."""
    requested_at = models.DateTimeField(default=timezone.now)
    acquired_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(default=timezone.now)
    beats = models.PositiveBigIntegerField(default=0)
    bot_ready_ms = models.PositiveIntegerField(null=True, blank=True)
    """Milliseconds from the latest start request to the bot being ready (first acquisition)."""
    provider = models.CharField(max_length=64, blank=True)
    """The LLM provider and model of the latest run (``offline:...`` marks rehearsals)."""
    ended_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-requested_at"]
        indexes = [models.Index(fields=["state", "expires_at"], name="bot_lease_state_expiry")]

    def __str__(self) -> str:
        return f"bot lease {self.session_id} ({self.state}, gen {self.generation})"

    def is_live(self) -> bool:
        """Held by a bot whose heartbeat has not expired."""
        return self.state == self.State.RUNNING and self.expires_at > timezone.now()


class BotUsage(models.Model):
    """Provider usage and cost of one session (see the module docstring)."""

    session = models.OneToOneField(
        "exam_sessions.ExamSession",
        on_delete=models.PROTECT,
        primary_key=True,
        related_name="bot_usage",
    )
    llm_input_tokens = models.PositiveBigIntegerField(default=0)
    llm_output_tokens = models.PositiveBigIntegerField(default=0)
    stt_seconds = models.FloatField(default=0.0)
    tts_characters = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    currency = models.CharField(max_length=8, default="USD")
    breakdown = models.JSONField(default=dict)
    """Per ``component:provider:model``: the counters and the cost of each."""
    unpriced = models.JSONField(default=list)
    """``component:provider:model`` keys that ``VIVA_PRICING`` has no price for."""
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-updated_at"]
        verbose_name_plural = "bot usage"

    def __str__(self) -> str:
        return f"usage {self.session_id}: {self.cost} {self.currency}"
