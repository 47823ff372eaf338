"""The bot's smaller parts: providers, usage and cost (and the admin that shows it), the
extra-time accommodation, STT confidence, and the exam-room socket forwarding to the bot."""

from __future__ import annotations

import asyncio
import uuid
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from pipecat.frames.frames import TranscriptionFrame

from bot.conf import bot_settings as read_settings
from bot.journal import Journal, load_session, scale_time
from bot.models import BotUsage
from bot.pipeline import transcript_confidence
from bot.providers import ProviderError, build_llm, resolve
from bot.text_transport import typed_answer_frame
from bot.usage import Counter, UsageLedger, cost_of, flush_usage
from ioa.runtime import BotReady, CandidateReady
from sessions.bot_channel import bot_group, bot_message, parse
from sessions.models import CandidateInput
from sessions.routing import websocket_urlpatterns
from tests.factories import AdminFactory, ProctorFactory, example_document

# --- providers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "env", "service", "base_url"),
    [
        ("openai", {"OPENAI_API_KEY": "sk-test"}, "OpenAILLMService", None),
        ("anthropic", {"ANTHROPIC_API_KEY": "key"}, "AnthropicLLMService", None),
        ("google", {"GOOGLE_API_KEY": "key"}, "GoogleLLMService", None),
        ("vllm", {}, "OpenAILLMService", "http://127.0.0.1:8000/v1"),
        ("ollama", {}, "OpenAILLMService", "http://127.0.0.1:11434/v1"),
    ],
)
def test_each_provider_builds_its_pipecat_service(
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    env: dict[str, str],
    service: str,
    base_url: str | None,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings.VIVA_LLM_PROVIDER = provider
    settings.VIVA_LLM_TEMPERATURE = "0.2"
    config = read_settings()
    choice = resolve(config)
    assert choice.provider == provider and choice.base_url == base_url and choice.model
    llm = build_llm(config, choice)
    assert service in {cls.__name__ for cls in type(llm).__mro__}


def test_missing_keys_and_addresses_are_configuration_errors(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings.VIVA_LLM_PROVIDER = "openai"
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        build_llm(read_settings())
    settings.VIVA_LLM_PROVIDER = "openai_compatible"
    settings.VIVA_LLM_BASE_URL = ""
    with pytest.raises(ProviderError, match="VIVA_LLM_BASE_URL"):
        resolve(read_settings())
    settings.VIVA_LLM_PROVIDER = "gpt"
    with pytest.raises(ValueError, match="VIVA_LLM_PROVIDER"):
        read_settings()


# --- usage and cost -------------------------------------------------------------------------------

PRICING = {
    "currency": "EUR",
    "llm": {"openai:gpt-4.1-mini": {"input_per_million": 0.4, "output_per_million": 1.6}},
    "stt": {"deepgram:*": {"per_minute": 0.0043}},
    "tts": {"*": {"per_million_characters": 30}},
}


def test_prices_come_from_the_pricing_table() -> None:
    llm = cost_of(PRICING, ("llm", "openai", "gpt-4.1-mini"), Counter(1_000_000, 500_000))
    assert llm == Decimal("1.2")
    stt = cost_of(PRICING, ("stt", "deepgram", "nova-3"), Counter(audio_ms=120_000))
    assert stt == Decimal("0.0086")
    tts = cost_of(PRICING, ("tts", "espeak", "en"), Counter(characters=10_000))
    assert tts == Decimal("0.3")
    assert cost_of(PRICING, ("llm", "anthropic", "claude"), Counter(1, 1)) is None


def test_the_ledger_reports_per_node_events_and_flushes_totals() -> None:
    ledger = UsageLedger(providers={"llm": ("openai", "gpt-4.1-mini")})
    ledger.add("llm", "q1", Counter(input_tokens=10, output_tokens=5))
    ledger.add("llm", "q1", Counter(input_tokens=1, output_tokens=1), model="gpt-4.1-mini")
    ledger.add("llm", "q2", Counter(input_tokens=3))
    events = ledger.take_events()
    assert [(e.nodeId, e.inputTokens, e.outputTokens) for e in events] == [
        ("q1", 11, 6),
        ("q2", 3, 0),
    ]
    assert ledger.take_events() == []
    totals = ledger.take_unflushed()
    assert totals[("llm", "openai", "gpt-4.1-mini")].input_tokens == 14


@pytest.mark.django_db
def test_usage_is_priced_on_the_session_and_shown_in_the_admin(
    exam_session: Any, client: Any
) -> None:
    flush_usage(
        exam_session.pk,
        {
            ("llm", "openai", "gpt-4.1-mini"): Counter(1_000_000, 500_000),
            ("stt", "deepgram", "nova-3"): Counter(audio_ms=60_000),
            ("tts", "cartesia", "sonic"): Counter(characters=1000),
        },
        PRICING,
    )
    flush_usage(exam_session.pk, {("llm", "offline", "x"): Counter(10, 10)}, PRICING)
    usage = BotUsage.objects.get(session=exam_session)
    assert usage.cost == Decimal("1.234300") and usage.currency == "EUR"
    counts = (usage.llm_input_tokens, usage.stt_seconds, usage.tts_characters)
    assert counts == (1_000_010, 60, 1000)
    assert usage.unpriced == ["llm:offline:x"]
    client.force_login(AdminFactory(is_staff=True, is_superuser=True))
    page = client.get("/admin/bot/botusage/")
    assert page.status_code == 200
    assert "1.234300 EUR (incomplete: unpriced usage)" in page.content.decode()
    detail = client.get(f"/admin/bot/botusage/{exam_session.pk}/change/")
    assert detail.status_code == 200 and "llm:openai:gpt-4.1-mini" in detail.content.decode()


# --- the extra-time accommodation -----------------------------------------------------------------


def test_scaling_multiplies_every_time_budget() -> None:
    scaled = scale_time(example_document(), Decimal("1.5"))
    assert scaled["metadata"]["totalTimeBudgetSec"] == 1800
    nodes = {n["nodeId"]: n for n in scaled["nodes"]}
    assert nodes["warmup"]["timeBudget"]["maxDurationSec"] == 135
    assert nodes["q-dijkstra"]["followUpPolicy"]["maxFollowUpDurationSec"] == 135


@pytest.mark.django_db
def test_a_session_with_extra_time_runs_with_scaled_budgets(exam_session: Any) -> None:
    exam_session.extra_time_multiplier = Decimal("1.50")
    exam_session.save()
    journal = Journal(load_session(exam_session.pk))
    ready = journal.controller.handle(BotReady())
    assert ready.events[0].payload.estimatedDurationSec == 1800
    started = journal.controller.handle(CandidateReady())
    entered = [e.payload for e in started.events if e.type.value == "node_entered"]
    assert entered[0].timeBudgetSec == 135
    budget = next(n for n in journal.artifacts.flow["nodes"] if n["name"] == "warmup")
    assert "135 seconds" in budget["task_messages"][0]["content"]


# --- transcripts ----------------------------------------------------------------------------------


def test_stt_confidence_is_read_from_the_frame_or_the_raw_result() -> None:
    assert transcript_confidence(typed_answer_frame("typed")) == 1.0

    def frame(result: Any) -> TranscriptionFrame:
        return TranscriptionFrame(text="x", user_id="c", timestamp="t", result=result)

    assert transcript_confidence(frame({"confidence": 0.42})) == 0.42
    deepgram = SimpleNamespace(
        channel=SimpleNamespace(alternatives=[SimpleNamespace(confidence=0.81)])
    )
    assert transcript_confidence(frame(deepgram)) == 0.81
    assert transcript_confidence(frame(None)) == 1.0


# --- the exam room's socket -----------------------------------------------------------------------


def test_bot_messages_are_checked() -> None:
    message = bot_message("candidate_text", text="  An answer.  ")
    assert parse(message) == ("candidate_text", {"text": "An answer."})
    with pytest.raises(ValueError, match="non-empty"):
        bot_message("candidate_text", text=" ")
    with pytest.raises(ValueError, match="unknown"):
        bot_message("grade_me")
    assert parse({"type": "session.events"}) is None


@pytest.mark.django_db(transaction=True)
def test_the_candidates_socket_forwards_to_the_bot_and_a_proctors_does_not(
    exam_session: Any,
) -> None:
    proctor = ProctorFactory()
    exam_session.sitting.proctors.add(proctor)

    async def socket(user: Any) -> WebsocketCommunicator:
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/sessions/{exam_session.pk}/events/"
        )
        communicator.scope["user"] = user
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        kinds = [(await communicator.receive_json_from(timeout=5))["kind"]]
        while kinds[-1] != "caught_up":
            kinds.append((await communicator.receive_json_from(timeout=5))["kind"])
        # Staff get the candidate's connection as part of the join, before caught_up.
        assert kinds == (["caught_up"] if user.role == "candidate" else ["presence", "caught_up"])
        return communicator

    command = {"commandId": str(uuid.uuid4()), "type": "repeat_question", "payload": {}}

    async def scenario() -> tuple[list[Any], list[Any], Any]:
        layer = get_channel_layer()
        bot = await layer.new_channel()
        await layer.group_add(bot_group(exam_session.pk), bot)
        candidate = await socket(exam_session.candidate)
        await candidate.send_json_to({"kind": "candidate_ready"})
        await candidate.send_json_to({"kind": "answer", "text": "Dijkstra is greedy."})
        await candidate.send_json_to({"kind": "command", "command": command})
        received = [await asyncio.wait_for(layer.receive(bot), 5) for _ in range(3)]
        acks = [await candidate.receive_json_from(timeout=5) for _ in range(3)]
        await candidate.send_json_to({"kind": "answer", "text": "  "})
        invalid = await candidate.receive_json_from(timeout=5)
        watcher = await socket(proctor)
        await watcher.send_json_to({"kind": "answer", "text": "I am the candidate."})
        refused = await watcher.receive_json_from(timeout=5)
        await candidate.disconnect()
        await watcher.disconnect()
        return received, acks, (invalid, refused)

    received, acks, (invalid, refused) = asyncio.run(scenario())
    assert [parse(m)[0] for m in received] == ["candidate_ready", "candidate_text", "command"]  # type: ignore[index]
    # Stored in the inbox first, acknowledged, then forwarded with the input's id.
    ids = [m["inputId"] for m in received]
    assert [a["kind"] for a in acks] == ["ack"] * 3 and [a["id"] for a in acks] == ids
    assert ids[2] == command["commandId"]
    kind, fields = parse(received[1])  # type: ignore[misc]
    # ... and with the instant it was stored (the bot's timers wait for it: issue #33).
    stored_at = CandidateInput.objects.get(input_id=ids[1]).received_at.timestamp()
    assert fields.pop("receivedAt") == stored_at
    assert (kind, fields) == ("candidate_text", {"text": "Dijkstra is greedy.", "inputId": ids[1]})
    assert received[2]["command"]["source"] == "candidate"
    assert invalid["kind"] == "error" and invalid["code"] == "invalid"
    assert refused["kind"] == "error" and refused["code"] == "unsupported"


# --- how a session's bot runs ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_livekit_voice_session_gets_the_livekit_io_and_others_text(
    exam_session: Any, settings: Any
) -> None:
    from bot.pipeline import text_io
    from bot.runners import default_options
    from bot.session_runner import BotOptions

    assert default_options(exam_session.pk).io_factory is text_io
    exam_session.exam_mode = "voice"
    exam_session.slower_speech = True
    exam_session.save()
    settings.VIVA_VOICE_TRANSPORT = "smallwebrtc"  # the browser's offer starts that bot
    assert default_options(exam_session.pk).io_factory is text_io
    settings.VIVA_VOICE_TRANSPORT = "livekit"
    options = default_options(exam_session.pk)
    assert isinstance(options, BotOptions) and options.io_factory is not text_io
    voice = options.io_factory.__self__  # type: ignore[attr-defined]
    assert voice.slower is True and str(voice.session_id) == str(exam_session.pk)
