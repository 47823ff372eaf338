"""SmallWebRTC signalling through the real Django views (ASGI, async), answered by Pipecat's
``SmallWebRTCConnection``; the browser is played by an aiortc peer in the same event loop.

The last test is end to end over a real (loopback) WebRTC connection: the candidate's peer
sends a spoken answer as an Opus audio track; the bot core's pipeline on ``smallwebrtc_io``
(``SmallWebRTCTransport`` → VAD → PocketSphinx → transcript hook … eSpeak → transport)
transcribes it and speaks the examiner's reply, which the candidate's peer receives. It runs in
real time (~6 s).
"""

from __future__ import annotations

import asyncio
import fractions
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from django.test import AsyncClient
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.workers.runner import WorkerRunner

from bot.audio import VOICE_IN_SAMPLE_RATE, read_wav
from bot.pipeline import ExaminerPipeline, ExaminerSpeakFrame, build_pipeline
from bot.voice.webrtc import (
    DEFAULT_BOT_STARTER,
    VoiceUnavailableError,
    peers,
    smallwebrtc_io,
    start_inline_voice_bot,
)
from ioa.events import ExamState
from tests.bot.voice.support import (
    ANSWER,
    REPLY,
    RecordingCore,
    spoken_wav,
    unused_llm,
    words_heard,
)
from tests.factories import CandidateFactory, ProctorFactory
from tests.sessions.factories import ExamSessionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.bot.voice.urls")]

STARTER = "tests.bot.voice.test_webrtc.record_starter"
started: list[tuple[uuid.UUID, SmallWebRTCConnection]] = []
slower_requests: list[bool] = []


async def record_starter(
    session_id: uuid.UUID,
    connection: SmallWebRTCConnection,
    *,
    slower: bool = False,
    language: str = "en",
) -> None:
    """A bot starter that only records what it was given."""
    started.append((session_id, connection))
    slower_requests.append(slower)


@pytest.fixture(autouse=True)
def _starter(settings: Any) -> None:
    settings.VIVA_WEBRTC_BOT_STARTER = STARTER
    started.clear()
    slower_requests.clear()


def offer_url(session: Any) -> str:
    return f"/voice/sessions/{session.pk}/webrtc/offer"


async def browser_offer(track: MediaStreamTrack | None = None) -> RTCPeerConnection:
    """An aiortc peer with one audio transceiver, its offer set (ICE gathered)."""
    pc = RTCPeerConnection()
    if track is None:
        pc.addTransceiver("audio", direction="sendrecv")
    else:
        pc.addTransceiver(track, direction="sendrecv")
    await pc.setLocalDescription(await pc.createOffer())
    return pc


async def signed_in(user: Any, **kwargs: Any) -> AsyncClient:
    client = AsyncClient(**kwargs)
    await client.aforce_login(user)
    return client


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        try:
            await scenario()
        finally:
            await peers.close_all()

    asyncio.run(main())


def test_the_candidate_gets_an_answer_and_the_bot_its_connection() -> None:
    session = ExamSessionFactory()

    async def scenario() -> None:
        client = await signed_in(session.candidate)
        pc = await browser_offer()
        try:
            response = await client.post(
                offer_url(session),
                {"sdp": pc.localDescription.sdp, "type": "offer"},
                content_type="application/json",
            )
            assert response.status_code == 200, response.content
            assert response.headers["Cache-Control"].startswith("max-age=0")
            answer = response.json()
            assert answer["type"] == "answer"
            assert "m=audio" in answer["sdp"]
            assert [(sid, c.pc_id) for sid, c in started] == [(session.pk, answer["pc_id"])]
            assert slower_requests == [False]
            assert peers.get(session.pk) is started[0][1]
            await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))

            # Trickled candidates for that connection are accepted; others are 404.
            candidate = {
                "candidate": "candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host",
                "sdp_mid": "0",
                "sdp_mline_index": 0,
            }
            patch = {"pc_id": answer["pc_id"], "candidates": [candidate, {"candidate": ""}]}
            response = await client.patch(offer_url(session), patch, "application/json")
            assert response.status_code == 204
            patch["pc_id"] = "someone-else"
            response = await client.patch(offer_url(session), patch, "application/json")
            assert response.status_code == 404
            bad = {"pc_id": answer["pc_id"], "candidates": [{"candidate": "nonsense"}]}
            response = await client.patch(offer_url(session), bad, "application/json")
            assert response.status_code == 400

            # Reloading the exam room: a new offer replaces (and closes) the first connection.
            first = started[0][1]
            pc2 = await browser_offer()
            response = await client.post(
                offer_url(session),
                {"sdp": pc2.localDescription.sdp, "type": "offer"},
                content_type="application/json",
            )
            assert response.status_code == 200
            assert len(started) == 2
            assert peers.get(session.pk) is started[1][1] is not first
            assert first.pc.connectionState == "closed"
            await pc2.close()
        finally:
            await pc.close()

    run(scenario)


def test_only_the_sessions_candidate_may_signal() -> None:
    session = ExamSessionFactory()
    other_candidate = CandidateFactory()
    proctor = ProctorFactory()
    session.sitting.proctors.add(proctor)

    async def scenario() -> None:
        pc = await browser_offer()
        body = {"sdp": pc.localDescription.sdp, "type": "offer"}
        try:
            anonymous = await AsyncClient().post(offer_url(session), body, "application/json")
            assert anonymous.status_code == 401
            assert anonymous.json()["error"]["code"] == "not_authenticated"
            for user in (other_candidate, proctor):
                client = await signed_in(user)
                response = await client.post(offer_url(session), body, "application/json")
                assert response.status_code == 404
            client = await signed_in(session.candidate)
            missing = f"/voice/sessions/{uuid.uuid4()}/webrtc/offer"
            assert (await client.post(missing, body, "application/json")).status_code == 404
            assert (await client.get(offer_url(session))).status_code == 405
        finally:
            await pc.close()
        assert started == []

    run(scenario)


def test_csrf_is_enforced() -> None:
    session = ExamSessionFactory()

    async def scenario() -> None:
        client = await signed_in(session.candidate, enforce_csrf_checks=True)
        response = await client.post(
            offer_url(session), {"sdp": "v=0", "type": "offer"}, "application/json"
        )
        assert response.status_code == 403

    run(scenario)


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"type": "offer"}, 400),
        ({"sdp": "v=0", "type": "answer"}, 400),
        ({"sdp": "v=0", "type": "offer", "pc_id": 5}, 400),
        ({"sdp": "not an sdp", "type": "offer"}, 400),
        ({"sdp": "x" * 70_000, "type": "offer"}, 413),
    ],
)
def test_bad_offers_are_refused(body: dict[str, Any], status: int) -> None:
    session = ExamSessionFactory()

    async def scenario() -> None:
        client = await signed_in(session.candidate)
        response = await client.post(offer_url(session), body, "application/json")
        assert response.status_code == status, response.content
        assert "error" in response.json()
        raw = await client.post(offer_url(session), "[1, 2", "application/json")
        assert raw.status_code == 400

    run(scenario)
    assert started == []


def test_a_finished_session_or_a_missing_bot_starter_gives_no_connection(settings: Any) -> None:
    over = ExamSessionFactory(state=ExamState.COMPLETED.value)
    live = ExamSessionFactory(state=ExamState.IN_PROGRESS.value)
    settings.VIVA_WEBRTC_BOT_STARTER = "tests.bot.voice.no_such_module.start"

    async def scenario() -> None:
        pc = await browser_offer()
        body = {"sdp": pc.localDescription.sdp, "type": "offer"}
        try:
            client = await signed_in(over.candidate)
            response = await client.post(offer_url(over), body, "application/json")
            assert response.status_code == 409
            assert response.json()["error"]["details"] == {"state": "completed"}
            client = await signed_in(live.candidate)
            response = await client.post(offer_url(live), body, "application/json")
            assert response.status_code == 503
            assert response.json()["error"]["code"] == "voice_unavailable"
            assert peers.get(live.pk) is None
        finally:
            await pc.close()

    run(scenario)


def test_livekit_tokens_for_the_candidate_and_proctors(settings: Any) -> None:
    settings.VIVA_LIVEKIT_URL = "ws://127.0.0.1:7880"
    settings.LIVEKIT_API_KEY = "devkey"
    settings.LIVEKIT_API_SECRET = "secret-for-tests-only-0123456789abcdef"
    session = ExamSessionFactory()
    proctor = ProctorFactory()
    session.sitting.proctors.add(proctor)
    outsider = ProctorFactory()
    url = f"/voice/sessions/{session.pk}/livekit/token"

    async def scenario() -> None:
        client = await signed_in(session.candidate)
        mine = (await client.post(url)).json()
        assert mine["role"] == "candidate"
        assert mine["identity"] == f"candidate-{session.candidate.pk}"
        assert mine["room"] == f"viva-session-{session.pk}"
        client = await signed_in(proctor)
        theirs = (await client.post(url)).json()
        assert theirs["role"] == "proctor"
        assert theirs["identity"] == f"proctor-{proctor.pk}"
        client = await signed_in(outsider)
        assert (await client.post(url)).status_code == 404
        assert (await AsyncClient().post(url)).status_code == 401
        settings.LIVEKIT_API_SECRET = ""
        client = await signed_in(session.candidate)
        assert (await client.post(url)).status_code == 503

    run(scenario)


class SpokenAnswerTrack(MediaStreamTrack):
    """The candidate's microphone: a WAV's PCM in 20 ms frames, paced in real time, then
    silence."""

    kind = "audio"

    def __init__(self, pcm: bytes, sample_rate: int) -> None:
        super().__init__()
        self._pcm = pcm
        self._rate = sample_rate
        self._samples = sample_rate // 50
        self._pts = 0
        self._start: float | None = None

    async def recv(self) -> av.AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        else:
            wait = self._start + self._pts / self._rate - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        chunk = self._pcm[self._pts * 2 : (self._pts + self._samples) * 2]
        chunk = chunk.ljust(self._samples * 2, b"\x00")
        frame = av.AudioFrame(format="s16", layout="mono", samples=self._samples)
        frame.planes[0].update(chunk)
        frame.sample_rate = self._rate
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, self._rate)
        self._pts += self._samples
        return frame


def test_a_spoken_answer_over_webrtc_is_transcribed_and_answered(tmp_path: Path) -> None:
    """The production composition: ``smallwebrtc_io(connection)`` into the bot core's
    ``build_pipeline``, with a recording core in place of ``ExaminerCore``."""
    session = ExamSessionFactory(state=ExamState.IN_PROGRESS.value)
    core = RecordingCore()
    bots: list[tuple[WorkerRunner, asyncio.Task[None], ExaminerPipeline]] = []

    async def start_bot(
        session_id: uuid.UUID,
        connection: SmallWebRTCConnection,
        *,
        slower: bool = False,
        language: str = "en",
    ) -> None:
        built = build_pipeline(core=core, llm=unused_llm(), io=smallwebrtc_io(connection))
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(built.worker)
        bots.append((runner, asyncio.create_task(runner.run()), built))

    async def scenario() -> None:
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER)
        pcm, rate = read_wav(wav)
        assert rate == VOICE_IN_SAMPLE_RATE
        pc = await browser_offer(SpokenAnswerTrack(pcm, rate))
        heard: list[float] = []
        listeners: list[asyncio.Task[None]] = []

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            async def listen() -> None:
                while True:
                    try:
                        frame = await track.recv()
                    except MediaStreamError:
                        return
                    if not isinstance(frame, av.AudioFrame):
                        continue
                    samples = frame.to_ndarray()
                    if np.abs(samples).max() > 500:  # the bot's voice, not comfort silence
                        heard.append(frame.samples / frame.sample_rate)

            listeners.append(asyncio.ensure_future(listen()))

        try:
            answer = await peers.answer(
                session.pk, sdp=pc.localDescription.sdp, sdp_type="offer", starter=start_bot
            )
            await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
            await asyncio.wait_for(core.heard.wait(), timeout=30)
            _, _, built = bots[0]
            built.reporter.expect("utt-1")
            await built.worker.queue_frame(ExaminerSpeakFrame(REPLY, utterance_id="utt-1"))
            deadline = time.monotonic() + 20
            while sum(heard) < 1.0 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        finally:
            await pc.close()
            for listener in listeners:
                listener.cancel()
            for runner, task, _ in bots:
                await runner.cancel("test finished")
                await asyncio.wait_for(task, timeout=10)
        assert sum(heard) >= 1.0, f"the candidate heard {sum(heard):.2f} s of the reply"

    run(scenario)

    assert len(core.transcripts) == 1, core.transcripts
    text, confidence = core.transcripts[0]
    assert len(words_heard(text)) >= 2, text  # after an Opus round trip
    assert 0.0 <= confidence <= 1.0
    assert core.started == ["utt-1"]


def test_json_errors_share_the_api_shape() -> None:
    session = ExamSessionFactory()

    async def scenario() -> None:
        client = await signed_in(session.candidate)
        response = await client.post(offer_url(session), json.dumps({}), "application/json")
        assert set(response.json()["error"]) == {"code", "message", "details"}

    run(scenario)


def test_the_default_starter_needs_inline_bots(settings: Any) -> None:
    """SmallWebRTC connections live in the web process: with Celery bots there is no voice."""
    settings.VIVA_WEBRTC_BOT_STARTER = DEFAULT_BOT_STARTER
    settings.VIVA_BOT_RUNNER = "celery"
    session = ExamSessionFactory(state=ExamState.IN_PROGRESS.value)

    async def scenario() -> None:
        pc = await browser_offer()
        try:
            client = await signed_in(session.candidate)
            response = await client.post(
                offer_url(session),
                {"sdp": pc.localDescription.sdp, "type": "offer"},
                "application/json",
            )
            assert response.status_code == 503
            assert peers.get(session.pk) is None
            connection = SmallWebRTCConnection()
            with pytest.raises(VoiceUnavailableError, match="VIVA_BOT_RUNNER=inline"):
                await start_inline_voice_bot(session.pk, connection)
            await connection.disconnect()
        finally:
            await pc.close()

    run(scenario)


def test_the_slower_speech_accommodation_reaches_the_bot_starter() -> None:
    session = ExamSessionFactory(slower_speech=True)

    async def scenario() -> None:
        pc = await browser_offer()
        try:
            client = await signed_in(session.candidate)
            response = await client.post(
                offer_url(session),
                {"sdp": pc.localDescription.sdp, "type": "offer"},
                "application/json",
            )
            assert response.status_code == 200
        finally:
            await pc.close()

    run(scenario)
    assert slower_requests == [True]
