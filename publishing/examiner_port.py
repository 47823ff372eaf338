"""The port through which the studio learns the examiner's price table and providers, for the
dry run's cost estimate (``publishing.cost_estimate``), without importing the bot.

``bot`` sits above ``publishing`` (docs/architecture.md, "Dependency direction"): the bot's
``AppConfig.ready()`` registers an :class:`ExaminerPricing` here. When none is registered (a web
tier without the bot app) :func:`examiner_pricing` returns ``None`` and the studio shows no
estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class ExaminerPricing(Protocol):
    """What the studio asks of the examiner bot."""

    def pricing(self) -> Mapping[str, object]:
        """The price table (``VIVA_PRICING``; ``{}`` when none is configured)."""

    def providers(self) -> dict[str, tuple[str, str]]:
        """``component → (provider, model)`` the settings select for ``llm``, ``stt`` and
        ``tts``, named as usage records name them; a component that cannot be resolved (a
        misconfigured provider) is left out."""


_registered: list[ExaminerPricing] = []


def register(pricing: ExaminerPricing) -> None:
    """Register the bot's answer (the last registration wins)."""
    _registered[:] = [pricing]


def examiner_pricing() -> ExaminerPricing | None:
    """The registered examiner pricing, or None."""
    return _registered[0] if _registered else None
