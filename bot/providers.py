"""LLM providers: build the Pipecat LLM service the settings ask for.

``VIVA_LLM_PROVIDER`` chooses; a provider's Pipecat module is imported only when it is chosen:

==================  ============================================  =================================
provider            service                                       key / address
==================  ============================================  =================================
``openai``          ``pipecat.services.openai.llm``               ``OPENAI_API_KEY``
``anthropic``       ``pipecat.services.anthropic.llm``            ``ANTHROPIC_API_KEY``
``google``          ``pipecat.services.google.llm`` (Gemini)      ``GOOGLE_API_KEY``
``openai_compatible``  ``OpenAILLMService`` + ``VIVA_LLM_BASE_URL``  ``VIVA_LLM_API_KEY`` (optional)
``vllm``            same, default ``http://127.0.0.1:8000/v1``
``ollama``          same, default ``http://127.0.0.1:11434/v1``
``offline``         same, pointed at the in-process offline      none (rehearsal only, never for
                    examiner (``bot.offline_examiner``)           grading)
==================  ============================================  =================================

``VIVA_LLM_MODEL`` overrides the model (defaults below); ``VIVA_LLM_API_KEY`` overrides the
provider's key variable; ``VIVA_LLM_TEMPERATURE`` sets the temperature where supported. The
OpenAI-family services report tool calls whose arguments are not JSON (``bot.tool_call_check``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from bot.conf import BotSettings

if TYPE_CHECKING:
    from pipecat.services.llm_service import LLMService
    from pipecat.services.openai.llm import OpenAILLMService

DEFAULT_MODELS: Final = {
    "openai": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "google": "gemini-2.5-flash",
    "openai_compatible": "default",
    "vllm": "default",
    "ollama": "llama3.1",
}
DEFAULT_BASE_URLS: Final = {
    "vllm": "http://127.0.0.1:8000/v1",
    "ollama": "http://127.0.0.1:11434/v1",
}
KEY_VARIABLES: Final = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GOOGLE_API_KEY",
}


class ProviderError(Exception):
    """The provider cannot be used as configured (missing key, refused offline examiner...)."""


@dataclass(frozen=True, slots=True)
class LlmChoice:
    """The resolved provider, model and endpoint (no secrets)."""

    provider: str
    model: str
    base_url: str | None

    @property
    def label(self) -> str:
        """``provider:model``, as usage events and the lease record it."""
        return f"{self.provider}:{self.model}"

    @property
    def rehearsal(self) -> bool:
        """True for the offline examiner (never for grading)."""
        return self.provider == "offline"


def resolve(config: BotSettings) -> LlmChoice:
    """Which provider, model and endpoint the settings select (raises :class:`ProviderError`)."""
    provider = config.llm_provider
    if provider == "offline":
        from bot.offline_examiner import MODEL

        if not config.offline_allowed:
            raise ProviderError(
                "VIVA_LLM_PROVIDER=offline is a rehearsal examiner, never for grading; it is "
                "refused unless DEBUG or VIVA_OFFLINE_EXAMINER_ALLOWED=true"
            )
        return LlmChoice("offline", MODEL, None)
    base_url = config.llm_base_url or DEFAULT_BASE_URLS.get(provider)
    if provider == "openai_compatible" and not base_url:
        raise ProviderError("VIVA_LLM_PROVIDER=openai_compatible needs VIVA_LLM_BASE_URL")
    model = config.llm_model or DEFAULT_MODELS[provider]
    return LlmChoice(provider, model, base_url)


def _key(config: BotSettings, provider: str, *, required: bool) -> str | None:
    if config.llm_api_key:
        return config.llm_api_key
    variable = KEY_VARIABLES.get(provider)
    key = os.environ.get(variable) if variable else None
    if required and not key:
        raise ProviderError(f"VIVA_LLM_PROVIDER={provider} needs {variable} (or VIVA_LLM_API_KEY)")
    return key


@cache
def _plain_http_service() -> type[OpenAILLMService]:
    """``OpenAILLMService`` for a plain-HTTP endpoint (the offline examiner, a local vLLM or
    Ollama): its HTTP client skips loading the CA bundle, which TLS-less traffic never uses and
    which costs a bot ~150 ms of CPU at start."""
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.utils.http import connection_limits

    class PlainHttpOpenAILLMService(OpenAILLMService):
        def create_client(  # type: ignore[no-untyped-def]
            self,
            api_key=None,
            base_url=None,
            organization=None,
            project=None,
            default_headers=None,
            **kwargs,
        ):
            return AsyncOpenAI(
                api_key=api_key,
                base_url=base_url,
                organization=organization,
                project=project,
                http_client=DefaultAsyncHttpxClient(
                    verify=False,
                    limits=connection_limits(
                        max_keepalive_connections=100, max_connections=1000, keepalive_expiry=None
                    ),
                ),
                default_headers=default_headers,
            )

    return PlainHttpOpenAILLMService


# Any: Pipecat's LLMService is invariant in its adapter type, so any provider's service is
# LLMService[Any].
def build_llm(config: BotSettings, choice: LlmChoice | None = None) -> LLMService[Any]:
    """The LLM service for ``config`` (imports only the selected provider's module)."""
    choice = choice or resolve(config)
    provider = choice.provider
    if provider in ("openai", "openai_compatible", "vllm", "ollama", "offline"):
        from pipecat.services.openai.llm import OpenAILLMService

        base_url = choice.base_url
        if provider == "offline":
            from bot.offline_examiner import shared_server

            base_url = shared_server().base_url
            api_key: str | None = "offline-rehearsal"
        else:
            api_key = _key(config, provider, required=provider == "openai") or "not-needed"
        settings = OpenAILLMService.Settings(model=choice.model)
        if config.llm_temperature is not None:
            settings.temperature = config.llm_temperature
        from bot.tool_call_check import checked_service

        plain = (base_url or "").startswith("http://")
        service = checked_service(_plain_http_service() if plain else OpenAILLMService)
        return service(api_key=api_key, base_url=base_url, settings=settings)
    if provider == "anthropic":
        from pipecat.services.anthropic.llm import AnthropicLLMService

        anthropic_settings = AnthropicLLMService.Settings(model=choice.model)
        if config.llm_temperature is not None:
            anthropic_settings.temperature = config.llm_temperature
        return AnthropicLLMService(
            api_key=_key(config, provider, required=True) or "", settings=anthropic_settings
        )
    if provider == "google":
        from pipecat.services.google.llm import GoogleLLMService

        google_settings = GoogleLLMService.Settings(model=choice.model)
        if config.llm_temperature is not None:
            google_settings.temperature = config.llm_temperature
        return GoogleLLMService(
            api_key=_key(config, provider, required=True) or "", settings=google_settings
        )
    raise ProviderError(f"unknown LLM provider {provider!r}")  # pragma: no cover
