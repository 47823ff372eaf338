"""Usage and cost of a session's providers (no Pipecat).

The pipeline's usage meter feeds :class:`UsageLedger` with Pipecat's usage metrics (LLM
prompt/completion tokens, STT audio seconds, TTS characters), attributed to the node the
session was at. The bot turns the ledger into:

* ``usage_reported`` events (one per component, provider, model and node), stored in the session
  log when the session leaves a node and when the bot stops (:meth:`UsageLedger.take_events`);
* the :class:`~bot.models.BotUsage` row (cumulative over every bot run of the session, priced
  with ``VIVA_PRICING``), flushed with the heartbeat (:func:`flush_usage`).

``VIVA_PRICING`` is a JSON object::

    {"currency": "USD",
     "llm": {"openai:gpt-4.1-mini": {"input_per_million": 0.4, "output_per_million": 1.6},
             "offline:*": {"input_per_million": 0, "output_per_million": 0}},
     "stt": {"deepgram:*": {"per_minute": 0.0043}},
     "tts": {"cartesia:*": {"per_million_characters": 30}}}

Keys are ``provider:model``; ``provider:*`` and ``*`` are fallbacks. Usage without a price is
counted, costed at zero and listed in ``BotUsage.unpriced``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal, NotRequired, TypedDict

from ioa.events import payloads as p

Component = Literal["llm", "stt", "tts"]


class UsageEntry(TypedDict):
    """One ``provider:model`` entry of ``BotUsage.breakdown``."""

    inputTokens: int
    outputTokens: int
    audioMs: int
    characters: int
    cost: NotRequired[str]


@dataclass
class Counter:
    """Usage of one component/provider/model (at one node, or in total)."""

    input_tokens: int = 0
    output_tokens: int = 0
    audio_ms: int = 0
    characters: int = 0

    def add(self, other: Counter) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.audio_ms += other.audio_ms
        self.characters += other.characters

    def empty(self) -> bool:
        return not (self.input_tokens or self.output_tokens or self.audio_ms or self.characters)

    def as_dict(self) -> UsageEntry:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "audioMs": self.audio_ms,
            "characters": self.characters,
        }


Key = tuple[str, str, str]  # component, provider, model


@dataclass
class UsageLedger:
    """Usage not yet reported as events, and usage not yet flushed to ``BotUsage``."""

    providers: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """``component → (provider, model)`` of the services in the pipeline."""
    _unreported: dict[tuple[Key, str | None], Counter] = field(default_factory=dict)
    _unflushed: dict[Key, Counter] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _key(self, component: Component, model: str | None) -> Key:
        provider, default_model = self.providers.get(component, ("unknown", "unknown"))
        return (component, provider, (model or default_model or "unknown")[:200])

    def add(
        self, component: Component, node_id: str | None, usage: Counter, model: str | None = None
    ) -> None:
        """Count usage of ``component`` at ``node_id``."""
        if usage.empty():
            return
        key = self._key(component, model)
        with self._lock:
            self._unreported.setdefault((key, node_id), Counter()).add(usage)
            self._unflushed.setdefault(key, Counter()).add(usage)

    def take_events(self) -> list[p.UsageReported]:
        """``usage_reported`` payloads of everything not reported yet (and forget it)."""
        with self._lock:
            taken, self._unreported = self._unreported, {}
        payloads = []
        for ((component, provider, model), node_id), counter in sorted(
            taken.items(), key=lambda item: (item[0][0], item[0][1] or "")
        ):
            payloads.append(
                p.UsageReported(
                    component=component,  # type: ignore[arg-type]
                    provider=provider[:200],
                    model=model,
                    nodeId=node_id,
                    inputTokens=counter.input_tokens if component == "llm" else None,
                    outputTokens=counter.output_tokens if component == "llm" else None,
                    audioMs=counter.audio_ms if component == "stt" else None,
                    characters=counter.characters if component == "tts" else None,
                )
            )
        return payloads

    def take_unflushed(self) -> dict[Key, Counter]:
        """Usage not yet added to ``BotUsage`` (and forget it)."""
        with self._lock:
            taken, self._unflushed = self._unflushed, {}
        return taken

    def give_back(self, unflushed: Mapping[Key, Counter]) -> None:
        """Return usage whose flush failed, to be flushed next time."""
        with self._lock:
            for key, counter in unflushed.items():
                self._unflushed.setdefault(key, Counter()).add(counter)


def _price(
    pricing: Mapping[str, object], component: str, provider: str, model: str
) -> Mapping[str, object] | None:
    """The price entry for ``provider:model`` (``None``: none; ``ValueError`` when the entry
    is not an object)."""
    table = pricing.get(component) or {}
    if not isinstance(table, Mapping):
        return None
    for key in (f"{provider}:{model}", f"{provider}:*", "*"):
        if key in table:
            price = table[key]
            if price is not None and not isinstance(price, Mapping):
                raise ValueError(f"VIVA_PRICING[{component!r}][{key!r}] is not an object")
            return price
    return None


def cost_of(pricing: Mapping[str, object], key: Key, counter: Counter) -> Decimal | None:
    """The price of ``counter`` for ``key`` under ``pricing`` (``None``: no price known)."""
    component, provider, model = key
    price = _price(pricing, component, provider, model)
    if price is None:
        return None

    def d(name: str) -> Decimal:
        return Decimal(str(price.get(name, 0) or 0))

    if component == "llm":
        return (
            d("input_per_million") * counter.input_tokens
            + d("output_per_million") * counter.output_tokens
        ) / Decimal(1_000_000)
    if component == "stt":
        return d("per_minute") * Decimal(counter.audio_ms) / Decimal(60_000)
    return d("per_million_characters") * counter.characters / Decimal(1_000_000)


def flush_usage(
    session_id: uuid.UUID, unflushed: Mapping[Key, Counter], pricing: Mapping[str, object]
) -> None:
    """Add ``unflushed`` to the session's ``BotUsage`` row and reprice it (synchronous)."""
    if not unflushed:
        return
    from django.db import transaction
    from django.utils import timezone

    from bot.models import BotUsage

    with transaction.atomic():
        # One locking read once the row exists (every flush after the first).
        row, _ = BotUsage.objects.select_for_update().get_or_create(session_id=session_id)
        breakdown: dict[str, UsageEntry] = dict(row.breakdown or {})
        for key, counter in unflushed.items():
            name = ":".join(key)
            entry = breakdown.get(name) or {
                "inputTokens": 0,
                "outputTokens": 0,
                "audioMs": 0,
                "characters": 0,
            }
            merged = Counter(
                entry["inputTokens"], entry["outputTokens"], entry["audioMs"], entry["characters"]
            )
            merged.add(counter)
            breakdown[name] = merged.as_dict()
        total = Decimal("0")
        unpriced: list[str] = []
        llm_in = llm_out = audio_ms = characters = 0
        for name, entry in sorted(breakdown.items()):
            component, provider, model = [*name.split(":", 2), "", ""][:3]
            counter = Counter(
                entry["inputTokens"], entry["outputTokens"], entry["audioMs"], entry["characters"]
            )
            cost = cost_of(pricing, (component, provider, model), counter)
            if cost is None:
                unpriced.append(name)
                cost = Decimal("0")
            entry["cost"] = str(cost.quantize(Decimal("0.000001")))
            total += cost
            llm_in += counter.input_tokens
            llm_out += counter.output_tokens
            audio_ms += counter.audio_ms
            characters += counter.characters
        row.breakdown = breakdown
        row.llm_input_tokens = llm_in
        row.llm_output_tokens = llm_out
        row.stt_seconds = audio_ms / 1000
        row.tts_characters = characters
        row.cost = total.quantize(Decimal("0.000001"))
        row.currency = str(pricing.get("currency", "USD"))[:8]
        row.unpriced = unpriced
        row.updated_at = timezone.now()
        row.save()
