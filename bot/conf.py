"""The bot's settings, read in one place (no Pipecat import).

Every value is taken from ``django.conf.settings`` when the project defines it there, else from
the environment variable of the same name, else the default below. Reading is cheap and never
cached, so tests can override with pytest-django's ``settings`` fixture. docs/configuration.md
("Bot providers and runners") lists every variable.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, SupportsFloat

from django.conf import settings

from ioa.runtime.timing import Timing

PROVIDERS: Final = frozenset(
    {"openai", "anthropic", "google", "openai_compatible", "vllm", "ollama", "offline"}
)
"""``VIVA_LLM_PROVIDER`` values. ``vllm`` and ``ollama`` are ``openai_compatible`` with a
default base URL; ``offline`` is the deterministic rehearsal examiner (never for grading)."""

RUNNERS: Final = frozenset({"inline", "celery"})


def _raw(name: str) -> object:
    if hasattr(settings, name):
        return getattr(settings, name)
    return os.environ.get(name)


def _str(name: str, default: str | None = None) -> str | None:
    value = _raw(name)
    if value is None:
        return default
    text = str(value).strip()
    return text or default


def _float(name: str, default: float) -> float:
    value = _raw(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    return _number(name, value)


def _number(name: str, value: object) -> float:
    """``float(value)``; ``TypeError`` naming the setting when it is no number or text."""
    if not isinstance(value, str | SupportsFloat):
        raise TypeError(f"{name}={value!r} is not a number")
    return float(value)


def _int(name: str, default: int) -> int:
    return int(_float(name, default))


def _bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name}={value!r} is not a boolean; use true or false")


def _pricing() -> Mapping[str, object]:
    value = _raw("VIVA_PRICING")
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return value
    parsed = json.loads(str(value))
    if not isinstance(parsed, dict):
        raise ValueError("VIVA_PRICING must be a JSON object")
    return parsed


def default_provider() -> str:
    """``openai`` when an OpenAI key is configured, else the offline rehearsal examiner."""
    return "openai" if os.environ.get("OPENAI_API_KEY") else "offline"


@dataclass(frozen=True, slots=True)
class BotSettings:
    """A snapshot of the bot's settings."""

    runner: str
    llm_provider: str
    llm_model: str | None
    llm_base_url: str | None
    llm_api_key: str | None
    llm_temperature: float | None
    offline_allowed: bool
    lease_seconds: float
    heartbeat_seconds: float
    start_grace_seconds: float
    max_restarts: int
    supervisor_seconds: float
    fault_retry_seconds: float
    speech_fallback_seconds: float
    """How long a hosted STT/TTS outage lasts before the offline service takes over
    (``VIVA_SPEECH_FALLBACK_SECONDS``; 0: never; ``bot.speech_fallback``)."""
    max_llm_reruns: int
    context_max_tokens: int
    context_max_messages: int
    context_target_tokens: int
    context_keep_messages: int
    db_threads: int
    pipecat_log_level: str
    pricing: Mapping[str, object] = field(default_factory=dict)
    turn_deadline_seconds: float = 10.0
    max_llm_requests_per_turn: int = 4
    provider_failures_to_pause: int = 3
    capacity: int = 100
    """``VIVA_BOT_CAPACITY``: bots one worker process hosts (``bot.hosting``)."""


def bot_settings() -> BotSettings:
    """The current settings (read now)."""
    provider = (_str("VIVA_LLM_PROVIDER") or default_provider()).lower()
    if provider not in PROVIDERS:
        raise ValueError(
            f"VIVA_LLM_PROVIDER={provider!r} is not one of {', '.join(sorted(PROVIDERS))}"
        )
    runner = (_str("VIVA_BOT_RUNNER") or "inline").lower()
    if runner not in RUNNERS:
        raise ValueError(f"VIVA_BOT_RUNNER={runner!r} is not one of {', '.join(sorted(RUNNERS))}")
    temperature = _raw("VIVA_LLM_TEMPERATURE")
    return BotSettings(
        runner=runner,
        llm_provider=provider,
        llm_model=_str("VIVA_LLM_MODEL"),
        llm_base_url=_str("VIVA_LLM_BASE_URL"),
        llm_api_key=_str("VIVA_LLM_API_KEY"),
        llm_temperature=(
            None if temperature in (None, "") else _number("VIVA_LLM_TEMPERATURE", temperature)
        ),
        offline_allowed=_bool("VIVA_OFFLINE_EXAMINER_ALLOWED", bool(settings.DEBUG)),
        lease_seconds=_float("VIVA_BOT_LEASE_SECONDS", 20.0),
        heartbeat_seconds=_float("VIVA_BOT_HEARTBEAT_SECONDS", 5.0),
        start_grace_seconds=_float("VIVA_BOT_START_GRACE_SECONDS", 120.0),
        max_restarts=_int("VIVA_BOT_MAX_RESTARTS", 3),
        supervisor_seconds=_float("VIVA_BOT_SUPERVISOR_SECONDS", 10.0),
        fault_retry_seconds=_float("VIVA_BOT_FAULT_RETRY_SECONDS", 5.0),
        speech_fallback_seconds=max(0.0, _float("VIVA_SPEECH_FALLBACK_SECONDS", 30.0)),
        max_llm_reruns=_int("VIVA_BOT_MAX_LLM_RERUNS", 2),
        context_max_tokens=_int("VIVA_BOT_CONTEXT_MAX_TOKENS", 4000),
        context_max_messages=_int("VIVA_BOT_CONTEXT_MAX_MESSAGES", 10),
        context_target_tokens=_int("VIVA_BOT_CONTEXT_TARGET_TOKENS", 2000),
        context_keep_messages=_int("VIVA_BOT_CONTEXT_KEEP_MESSAGES", 2),
        db_threads=max(1, _int("VIVA_BOT_DB_THREADS", 8)),
        pipecat_log_level=(_str("VIVA_PIPECAT_LOG_LEVEL") or "WARNING").upper(),
        pricing=_pricing(),
        turn_deadline_seconds=max(0.5, _float("VIVA_BOT_TURN_DEADLINE_SECONDS", 10.0)),
        max_llm_requests_per_turn=max(1, _int("VIVA_BOT_MAX_LLM_REQUESTS_PER_TURN", 4)),
        provider_failures_to_pause=max(1, _int("VIVA_BOT_PROVIDER_FAILURES_TO_PAUSE", 3)),
        capacity=max(1, _int("VIVA_BOT_CAPACITY", 100)),
    )


def runtime_timing() -> Timing:
    """The controller's host settings (issue 15; docs/configuration.md): how long a lost
    connection is waited for before the exam pauses itself and before it ends ``aborted``, how
    long a provider outage may pause an exam before it ends it (``VIVA_OUTAGE_LIMIT_SECONDS``), the
    recogniser's latency after speech, the grace for a typed draft to be sent."""
    defaults = Timing()
    return Timing(
        connection_grace_ms=round(
            1000 * _float("VIVA_CONNECTION_GRACE_SECONDS", defaults.connection_grace_ms / 1000)
        ),
        absence_limit_ms=round(
            1000 * _float("VIVA_ABSENCE_LIMIT_SECONDS", defaults.absence_limit_ms / 1000)
        ),
        outage_limit_ms=round(
            1000 * _float("VIVA_OUTAGE_LIMIT_SECONDS", defaults.outage_limit_ms / 1000)
        ),
        recogniser_latency_ms=round(
            1000 * _float("VIVA_RECOGNISER_LATENCY_SECONDS", defaults.recogniser_latency_ms / 1000)
        ),
        draft_grace_ms=round(
            1000 * _float("VIVA_DRAFT_GRACE_SECONDS", defaults.draft_grace_ms / 1000)
        ),
    )
