"""LiveKit without a server: tokens verified offline, the bot transport built from settings, and
runtime events routed per audience on the ``exam-runtime-events`` topic."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from types import SimpleNamespace
from typing import Any

import jwt
import pytest
from livekit import api
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineTask
from pipecat.transports.livekit.transport import LiveKitTransport
from websockets.asyncio.server import serve

from bot.audio import VOICE_IN_SAMPLE_RATE, VOICE_OUT_SAMPLE_RATE, transport_audio_params
from bot.livekit import (
    EXAM_RUNTIME_EVENTS_TOPIC,
    LiveKitConfig,
    LiveKitNotConfiguredError,
    LiveKitVoice,
    ParticipantRole,
    RuntimeEventPublisher,
    bot_token,
    build_livekit_transport,
    candidate_token,
    livekit_bot_options,
    livekit_configured,
    proctor_token,
    publish_data,
    role_of_identity,
    room_name,
    route_event,
)

KEY = "devkey"
SECRET = "secret-for-tests-only-0123456789abcdef"
URL = "ws://127.0.0.1:7880"
SESSION = uuid.UUID("01932f3a-0000-7000-8000-000000000042")


@pytest.fixture
def livekit_settings(settings: Any) -> Any:
    settings.VIVA_LIVEKIT_URL = URL
    settings.LIVEKIT_API_KEY = KEY
    settings.LIVEKIT_API_SECRET = SECRET
    settings.VIVA_LIVEKIT_TOKEN_TTL_SECONDS = 300
    return settings


def decode(token: str) -> dict[str, Any]:
    """The claims, with the signature, issuer and expiry checked."""
    return jwt.decode(
        token, SECRET, algorithms=["HS256"], issuer=KEY, options={"require": ["exp", "sub"]}
    )


def test_candidate_token_publishes_the_microphone_and_subscribes(livekit_settings: Any) -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    issued = candidate_token(SESSION, 17)
    claims = decode(issued.token)
    assert claims["sub"] == issued.identity == "candidate-17"
    assert claims["video"] == {
        "roomJoin": True,
        "room": f"viva-session-{SESSION}",
        "canPublish": True,
        "canPublishSources": ["microphone"],
        "canSubscribe": True,
        "canPublishData": False,
        "canUpdateOwnMetadata": False,
    }
    assert claims["attributes"] == {"role": "candidate", "session": str(SESSION)}
    assert claims["exp"] - claims["nbf"] == 300
    assert before.timestamp() - 2 <= claims["nbf"] <= before.timestamp() + 2
    assert issued.room == room_name(SESSION)
    assert issued.as_json()["url"] == URL
    assert issued.as_json()["expiresAt"].endswith("Z")
    # LiveKit's own verifier agrees.
    verified = api.TokenVerifier(KEY, SECRET).verify(issued.token)
    assert verified.identity == "candidate-17"
    assert verified.video is not None and verified.video.can_publish_data is False


def test_bot_token_publishes_audio_and_data(livekit_settings: Any) -> None:
    issued = bot_token(SESSION)
    claims = decode(issued.token)
    assert claims["sub"] == f"bot-{SESSION}"
    assert claims["kind"] == "agent"
    video = claims["video"]
    assert video["canPublish"] is True
    assert video["canPublishSources"] == ["microphone"]
    assert video["canPublishData"] is True
    assert video["canSubscribe"] is True
    assert video["room"] == f"viva-session-{SESSION}"


def test_proctor_token_is_listen_only(livekit_settings: Any) -> None:
    claims = decode(proctor_token(SESSION, 5).token)
    assert claims["sub"] == "proctor-5"
    assert claims["video"] == {
        "roomJoin": True,
        "room": f"viva-session-{SESSION}",
        "canPublish": False,
        "canSubscribe": True,
        "canPublishData": False,
        "canUpdateOwnMetadata": False,
    }


@pytest.mark.parametrize("role", list(ParticipantRole))
def test_no_token_administers_rooms(livekit_settings: Any, role: ParticipantRole) -> None:
    issued = {
        ParticipantRole.CANDIDATE: lambda: candidate_token(SESSION, 1),
        ParticipantRole.BOT: lambda: bot_token(SESSION),
        ParticipantRole.PROCTOR: lambda: proctor_token(SESSION, 1),
    }[role]()
    video = decode(issued.token)["video"]
    for grant in ("roomCreate", "roomList", "roomAdmin", "roomRecord", "ingressAdmin", "hidden"):
        assert grant not in video
    assert role_of_identity(issued.identity) is role


def test_a_token_signed_with_another_secret_is_rejected(livekit_settings: Any) -> None:
    issued = candidate_token(SESSION, 17, config=LiveKitConfig(URL, KEY, "another-secret" * 3))
    with pytest.raises(jwt.InvalidSignatureError):
        decode(issued.token)


def test_an_expired_token_is_rejected(livekit_settings: Any) -> None:
    config = LiveKitConfig(URL, KEY, SECRET, token_ttl=dt.timedelta(seconds=-60))
    with pytest.raises(jwt.ExpiredSignatureError):
        decode(candidate_token(SESSION, 17, config=config).token)


def test_missing_settings_are_named(settings: Any) -> None:
    settings.VIVA_LIVEKIT_URL = URL
    settings.LIVEKIT_API_KEY = ""
    settings.LIVEKIT_API_SECRET = ""
    assert livekit_configured() is False
    with pytest.raises(LiveKitNotConfiguredError, match="LIVEKIT_API_KEY, LIVEKIT_API_SECRET"):
        LiveKitConfig.from_settings()


def test_the_bot_transport_joins_its_room_with_its_token(livekit_settings: Any) -> None:
    """Dialled against a local LiveKit signalling peer on 127.0.0.1, which records the WebSocket
    handshake and closes: the bot joins its own room under its own identity and token."""

    async def scenario() -> tuple[Any, list[tuple[str, str]]]:
        seen: list[tuple[str, str]] = []

        async def signal(ws: Any) -> None:
            auth = ws.request.headers.get("authorization", "")
            seen.append((ws.request.path.split("?")[0], auth.removeprefix("Bearer ")))
            await ws.close()

        async with serve(signal, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            built = build_livekit_transport(
                SESSION, config=LiveKitConfig(f"ws://127.0.0.1:{port}", KEY, SECRET)
            )
            task = PipelineTask(Pipeline([built.transport.input()]))
            runner = asyncio.create_task(PipelineRunner(handle_sigint=False).run(task))
            for _ in range(200):
                if seen:
                    break
                await asyncio.sleep(0.05)
            await task.cancel()
            await asyncio.wait_for(runner, 10)
        return built, seen

    built, seen = asyncio.run(scenario())
    assert isinstance(built.transport, LiveKitTransport)
    assert built.room == f"viva-session-{SESSION}"
    assert built.identity == f"bot-{SESSION}"
    assert seen, "the transport never dialled the LiveKit server"
    path, token = seen[0]
    assert path.startswith("/rtc")
    assert token == built.token.token
    claims = decode(token)
    assert (claims["sub"], claims["video"]["room"]) == (built.identity, built.room)
    assert claims["video"]["canPublishData"] is True
    assert built.transport.input() is not None and built.transport.output() is not None


def test_voice_transports_carry_the_pipeline_audio_format() -> None:
    params = transport_audio_params()
    assert params["audio_in_enabled"] and params["audio_out_enabled"]
    assert (params["audio_in_sample_rate"], params["audio_out_sample_rate"]) == (
        VOICE_IN_SAMPLE_RATE,
        VOICE_OUT_SAMPLE_RATE,
    )


def test_the_bot_transport_takes_the_env_when_django_has_no_setting(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    for name in ("VIVA_LIVEKIT_URL", "LIVEKIT_API_KEY", "LIVEKIT_API_SECRET"):
        if hasattr(settings, name):
            delattr(settings, name)
    monkeypatch.setenv("VIVA_LIVEKIT_URL", "wss://livekit.example.test")
    monkeypatch.setenv("LIVEKIT_API_KEY", KEY)
    monkeypatch.setenv("LIVEKIT_API_SECRET", SECRET)
    built = build_livekit_transport(SESSION)
    assert built.url == "wss://livekit.example.test"
    assert decode(built.token.token)["sub"] == f"bot-{SESSION}"


def wire(event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventId": "01932f3a-0000-7000-8000-0000000000aa",
        "sessionId": str(SESSION),
        "seq": 7,
        "timestamp": "2026-05-06T02:10:00.000Z",
        "source": "runtime_controller",
        "type": event_type,
        "payload": {"type": event_type, **payload},
        "schemaVersion": "1.0",
    }


TRANSCRIPT = wire(
    "transcript_final",
    {"turnId": "t-1", "speaker": "candidate", "text": "a priority queue", "confidence": 0.82},
)
EVIDENCE = wire("evidence_signal", {"nodeId": "q1", "signalType": "tgt-greedy-choice"})
PEOPLE = ["candidate-17", "proctor-5", "proctor-6", f"bot-{SESSION}", "someone-else", "nohyphen"]


def test_events_are_routed_to_each_audience_projection() -> None:
    routed = route_event(TRANSCRIPT, PEOPLE)
    assert [members for _, members in routed] == [["candidate-17"], ["proctor-5", "proctor-6"]]
    candidate_view, proctor_view = (event for event, _ in routed)
    assert "confidence" not in candidate_view["payload"]
    assert candidate_view["payload"]["text"] == "a priority queue"
    assert proctor_view["payload"]["confidence"] == 0.82
    # Evidence never reaches the candidate.
    assert route_event(EVIDENCE, PEOPLE) == [(EVIDENCE, ["proctor-5", "proctor-6"])]
    assert route_event(EVIDENCE, ["candidate-17"]) == []


class FakeParticipant:
    """Stands in for ``rtc.LocalParticipant``: records ``publish_data`` calls."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    async def publish_data(self, payload: bytes, **kwargs: Any) -> None:
        if self.fail:
            raise RuntimeError("engine closed")
        self.calls.append({"payload": payload, **kwargs})


def connected(participant: FakeParticipant, people: list[str]) -> Any:
    """A transport-shaped object whose client is connected to a room with ``people``."""
    room = SimpleNamespace(
        local_participant=participant, remote_participants={p: object() for p in people}
    )
    return SimpleNamespace(_client=SimpleNamespace(_room=room, _connected=True))


def test_the_publisher_sends_on_the_runtime_topic_per_audience() -> None:
    participant = FakeParticipant()
    publisher = RuntimeEventPublisher(connected(participant, PEOPLE))
    assert asyncio.run(publisher.publish(TRANSCRIPT)) == 2
    assert asyncio.run(publisher.publish(EVIDENCE)) == 1
    assert [c["topic"] for c in participant.calls] == [EXAM_RUNTIME_EVENTS_TOPIC] * 3
    assert [c["destination_identities"] for c in participant.calls] == [
        ["candidate-17"],
        ["proctor-5", "proctor-6"],
        ["proctor-5", "proctor-6"],
    ]
    assert all(c["reliable"] is True for c in participant.calls)
    assert b'"confidence"' not in participant.calls[0]["payload"]
    assert b'"confidence":0.82' in participant.calls[1]["payload"]


def test_publishing_is_best_effort(livekit_settings: Any) -> None:
    unconnected = build_livekit_transport(SESSION).transport
    assert asyncio.run(publish_data(unconnected, {"type": "x"})) is False
    assert asyncio.run(RuntimeEventPublisher(unconnected).publish(TRANSCRIPT)) == 0
    failing = connected(FakeParticipant(fail=True), PEOPLE)
    assert asyncio.run(publish_data(failing, b"raw")) is False
    assert asyncio.run(RuntimeEventPublisher(failing).publish(TRANSCRIPT)) == 0
    unknown_type = connected(FakeParticipant(), PEOPLE)
    assert asyncio.run(RuntimeEventPublisher(unknown_type).publish(wire("no_such_type", {}))) == 0


def test_livekit_bot_options_build_a_voice_io_and_publish_stored_events(
    livekit_settings: Any,
) -> None:
    async def scenario() -> tuple[Any, FakeParticipant]:
        voice = LiveKitVoice(SESSION)
        options = voice.options()
        assert options.on_stored == voice.on_stored
        io = options.io_factory()
        assert isinstance(io.transport, LiveKitTransport)
        assert io.text_turns is False
        assert io.stt is not None and io.tts is not None
        assert voice.publisher is not None
        participant = FakeParticipant()
        voice.publisher.transport = connected(participant, PEOPLE)
        # The journal calls on_stored from a database thread.
        await asyncio.to_thread(options.on_stored, [TRANSCRIPT, EVIDENCE])
        for _ in range(100):
            if len(participant.calls) >= 3:
                break
            await asyncio.sleep(0.01)
        voice.close()
        return options, participant

    options, participant = asyncio.run(scenario())
    assert [c["destination_identities"] for c in participant.calls] == [
        ["candidate-17"],
        ["proctor-5", "proctor-6"],
        ["proctor-5", "proctor-6"],
    ]
    assert isinstance(livekit_bot_options(SESSION), type(options))
