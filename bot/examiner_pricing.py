"""The bot's answer to the studio's cost estimate (``publishing.examiner_port``): the price
table and the providers the settings select, named as :class:`~bot.usage.UsageLedger` names
them in usage records."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from bot.conf import bot_settings

logger = logging.getLogger(__name__)


class SettingsPricing:
    """``VIVA_PRICING`` and the configured LLM, STT and TTS providers (read now)."""

    def pricing(self) -> Mapping[str, object]:
        return bot_settings().pricing

    def providers(self) -> dict[str, tuple[str, str]]:
        from bot.providers import ProviderError, resolve
        from bot.speech_providers import Kind, resolve_speech

        found: dict[str, tuple[str, str]] = {}
        try:
            choice = resolve(bot_settings())
            found["llm"] = (choice.provider, choice.model)
        except (ProviderError, ValueError) as error:
            logger.info("cost estimate: no LLM provider (%s)", error)
        kinds: tuple[Kind, ...] = ("stt", "tts")
        for kind in kinds:
            try:
                found[kind] = resolve_speech(kind).usage_label
            except (ProviderError, ValueError) as error:
                logger.info("cost estimate: no %s provider (%s)", kind, error)
        return found
