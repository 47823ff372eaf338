"""Local speech peers for tests: the wire protocols of hosted STT and TTS on ``127.0.0.1``.

One aiohttp server in a background thread (its own event loop, a free port) speaks:

* **OpenAI's audio API** (HTTP): ``POST /v1/audio/transcriptions`` (multipart ``file`` = a WAV,
  ``model``, ``language``, ``response_format``) answers ``{"text": ...}`` (plus ``logprobs`` when
  ``include[]=logprobs`` is asked); ``POST /v1/audio/speech`` (JSON ``input``, ``voice``,
  ``model``, ``response_format: "pcm"``) streams 24 kHz 16-bit mono PCM spoken by eSpeak NG.
* **Deepgram's live protocol** (WebSocket ``GET /v1/listen?model=…&interim_results=true…``):
  binary frames carry 16-bit PCM; the server answers with ``Results`` messages: interim ones
  (``is_final: false``, a growing prefix of the utterance's words) as speech arrives (silence,
  which a live client streams all the time, gets none: :data:`SPEECH_RMS`), and a final
  one (``is_final: true``, ``speech_final``, ``from_finalize`` after a ``Finalize`` message). It
  honours ``KeepAlive`` and ``CloseStream`` (answers ``Metadata`` and closes).

What an utterance *says* comes from :attr:`SpeechServer.transcribe`, a callable
``(pcm16k: bytes) -> str``, and its interim results from :attr:`SpeechServer.upcoming` (what the
utterance being heard will say): a test scripts them (a FIFO of answers, :meth:`script`), or
passes its own (e.g. the answer to the current question, or a recogniser). Failures can be
injected (:meth:`fail_next`, or an outage of some seconds: :meth:`fail_for`) to test provider
faults. Every request is recorded (:attr:`transcriptions`, :attr:`speeches`, :attr:`sockets`).
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
import uuid
import wave
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import WSMsgType, web

__all__ = ["SpeechServer"]

SPEECH_RATE = 24000
INTERIM_EVERY_SECS = 0.25
"""Audio between two interim results on the live socket."""
SPEECH_RMS = 200.0
"""A live-socket chunk louder than this (RMS of its 16-bit samples) holds speech. A recogniser
hears no words in silence: interim results are only sent once an utterance holds speech, and
their words grow with the speech heard, not with the silence streamed around it."""


@dataclass
class LiveSocket:
    """One Deepgram live connection: its query and what went over it."""

    query: dict[str, str]
    audio_bytes: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)
    control: list[str] = field(default_factory=list)


def _words(text: str) -> list[str]:
    return text.split()


def _speech_bytes(chunk: bytes) -> int:
    """``len(chunk)`` if the 16-bit PCM ``chunk`` is loud enough to be speech, else 0."""
    import numpy as np

    samples = np.frombuffer(chunk[: len(chunk) // 2 * 2], dtype=np.int16).astype(np.float64)
    if not samples.size or float(np.sqrt((samples**2).mean())) <= SPEECH_RMS:
        return 0
    return len(chunk)


def _wav_pcm(data: bytes) -> tuple[bytes, int]:
    with wave.open(io.BytesIO(data), "rb") as source:
        return source.readframes(source.getnframes()), source.getframerate()


class SpeechServer:
    """See the module docstring. Use as a context manager."""

    def __init__(self, *, host: str = "127.0.0.1", confidence: float = 0.95) -> None:
        self.host = host
        self.confidence = confidence
        self._scripted: deque[str] = deque()
        self.transcribe: Callable[[bytes], str] = self._next_scripted
        self.upcoming: Callable[[], str] = self._peek_scripted
        """What the utterance being heard will say (interim results are its first words)."""
        self.transcriptions: list[dict[str, Any]] = []
        self.speeches: list[dict[str, Any]] = []
        self.sockets: list[LiveSocket] = []
        self.refused: list[str] = []
        self.speech_delay = 0.0
        """Seconds before the first audio of every speech response (a loaded provider)."""
        self.transcription_delay = 0.0
        """Seconds before every transcription response (a loaded recogniser)."""
        """The endpoint of every request refused by an outage (:meth:`fail_for`)."""
        self._failures: deque[tuple[str, int]] = deque()
        self._down_until: dict[str, tuple[float, int]] = {}
        self._voiced: dict[str, bytes] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    # --- control ----------------------------------------------------------------------------

    def script(self, *answers: str) -> None:
        """The next utterances say these, in order (then ``""``)."""
        self._scripted.extend(answers)

    def fail_next(self, endpoint: str, status: int = 500, *, times: int = 1) -> None:
        """The next ``times`` requests to ``endpoint`` (``speech``, ``transcriptions`` or
        ``listen``) fail with HTTP ``status`` (``listen``: the handshake is refused)."""
        self._failures.extend([(endpoint, status)] * times)

    def fail_for(self, endpoint: str, seconds: float, status: int = 503) -> None:
        """Every request to ``endpoint`` fails with HTTP ``status`` for the next ``seconds``
        (an outage; its requests are recorded in :attr:`refused`)."""
        self._down_until[endpoint] = (time.monotonic() + seconds, status)

    def _next_scripted(self, pcm16k: bytes) -> str:
        return self._scripted.popleft() if self._scripted else ""

    def _peek_scripted(self) -> str:
        return self._scripted[0] if self._scripted else ""

    def _failure(self, endpoint: str) -> int | None:
        down = self._down_until.get(endpoint)
        if down is not None and time.monotonic() < down[0]:
            self.refused.append(endpoint)
            return down[1]
        for item in list(self._failures):
            if item[0] == endpoint:
                self._failures.remove(item)
                return item[1]
        return None

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """For OpenAI clients: ``http://127.0.0.1:<port>/v1``."""
        return f"http://{self.host}:{self._port}/v1"

    @property
    def deepgram_url(self) -> str:
        """For Deepgram clients (Pipecat's ``base_url``): ``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self._port}"

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> SpeechServer:
        self._thread = threading.Thread(target=self._serve, name="speech-peer", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the speech peer did not start")
        return self

    def stop(self) -> None:
        loop, runner = self._loop, self._runner
        if loop is None or runner is None:
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    def __enter__(self) -> SpeechServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        app.router.add_post("/v1/audio/speech", self._speech)
        app.router.add_get("/v1/listen", self._listen)
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, self.host, 0)
        loop.run_until_complete(site.start())
        server = site._server
        assert server is not None
        self._port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        loop.run_forever()
        loop.close()

    # --- OpenAI audio --------------------------------------------------------------------------

    async def _transcriptions(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        fields = {k: v for k, v in form.items() if not hasattr(v, "file")}
        upload = form.get("file")
        if upload is None or not hasattr(upload, "file"):
            return _openai_error(400, "file is required")
        status = self._failure("transcriptions")
        if status is not None:
            return _openai_error(status, "scripted failure")
        pcm, rate = _wav_pcm(upload.file.read())
        text = await asyncio.to_thread(self.transcribe, pcm)
        await asyncio.sleep(self.transcription_delay)
        self.transcriptions.append({**fields, "sample_rate": rate, "audio_bytes": len(pcm)})
        body: dict[str, Any] = {"text": text}
        if "logprobs" in form.getall("include[]", []):
            body["logprobs"] = [
                {"token": word, "logprob": -0.05, "bytes": list(word.encode())}
                for word in _words(text)
            ]
        return web.json_response(body)

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        from bot.voice.espeak import Voice, engine

        body = await request.json()
        self.speeches.append({**body, "at": time.monotonic()})
        status = self._failure("speech")
        if status is not None:
            return _openai_error(status, "scripted failure")
        if not str(body.get("input", "")).strip():
            return _openai_error(400, "input is required")
        text = str(body["input"])
        pcm = self._voiced.get(text)
        if pcm is None:  # synthesised once per text, so a repeated request is answered at once
            espeak = engine()
            raw = await asyncio.to_thread(espeak.synthesize, text, Voice(name="en-us"))
            pcm = self._voiced[text] = _resample(raw, espeak.sample_rate, SPEECH_RATE)
        response = web.StreamResponse(headers={"Content-Type": "audio/pcm"})
        await response.prepare(request)
        await asyncio.sleep(self.speech_delay)
        for start in range(0, len(pcm), 4800):
            await response.write(pcm[start : start + 4800])
        await response.write_eof()
        return response

    # --- Deepgram live -------------------------------------------------------------------------

    async def _listen(self, request: web.Request) -> web.StreamResponse:
        status = self._failure("listen")
        if status is not None:
            return web.json_response({"err_code": "scripted", "err_msg": "refused"}, status=status)
        socket = LiveSocket(query=dict(request.query))
        self.sockets.append(socket)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        rate = int(socket.query.get("sample_rate", "16000"))
        interim = socket.query.get("interim_results", "false") == "true"
        utterance = bytearray()
        voiced = 0  # bytes of speech in the utterance (interim words follow them, not silence)
        offset = 0.0
        since_interim = 0

        async def send(message: dict[str, Any]) -> None:
            socket.sent.append(message)
            await ws.send_str(json.dumps(message))

        async def finish(from_finalize: bool) -> None:
            nonlocal offset, voiced
            duration = len(utterance) / (2 * rate)
            text = await asyncio.to_thread(self.transcribe, bytes(utterance)) if utterance else ""
            await send(self._results(text, offset, duration, final=True, finalize=from_finalize))
            offset += duration
            utterance.clear()
            voiced = 0

        async for message in ws:
            if message.type == WSMsgType.BINARY:
                utterance.extend(message.data)
                socket.audio_bytes += len(message.data)
                since_interim += len(message.data)
                voiced += _speech_bytes(message.data)
                if interim and voiced and since_interim >= INTERIM_EVERY_SECS * rate * 2:
                    since_interim = 0
                    partial = await asyncio.to_thread(self._partial, voiced / (2 * rate))
                    if partial:
                        duration = len(utterance) / (2 * rate)
                        await send(self._results(partial, offset, duration, final=False))
            elif message.type == WSMsgType.TEXT:
                kind = json.loads(message.data).get("type", "")
                socket.control.append(kind)
                if kind == "Finalize":
                    await finish(True)
                elif kind == "CloseStream":
                    await send(_metadata(offset))
                    await ws.close()
            else:
                break
        return ws

    def _partial(self, seconds: float) -> str:
        """An interim hypothesis: the upcoming answer's first words, about 2.5 words a second
        of speech heard (nothing when nothing is expected)."""
        words = _words(self.upcoming())
        if not words:
            return ""
        return " ".join(words[: max(1, min(len(words), int(seconds * 2.5)))])

    def _results(
        self, text: str, start: float, duration: float, *, final: bool, finalize: bool = False
    ) -> dict[str, Any]:
        words = _words(text)
        step = duration / max(1, len(words))
        return {
            "type": "Results",
            "channel_index": [0, 1],
            "duration": duration,
            "start": start,
            "is_final": final,
            "speech_final": final,
            "from_finalize": finalize,
            "channel": {
                "alternatives": [
                    {
                        "transcript": text,
                        "confidence": self.confidence if final else 0.6,
                        "words": [
                            {
                                "word": w.lower().strip(".,?!"),
                                "punctuated_word": w,
                                "start": start + i * step,
                                "end": start + (i + 1) * step,
                                "confidence": self.confidence,
                            }
                            for i, w in enumerate(words)
                        ],
                    }
                ]
            },
            "metadata": {
                "request_id": str(uuid.uuid4()),
                "model_info": {"name": "peer", "version": "1", "arch": "test"},
                "model_uuid": str(uuid.uuid4()),
            },
        }


def _metadata(duration: float) -> dict[str, Any]:
    return {
        "type": "Metadata",
        "transaction_key": "deprecated",
        "request_id": str(uuid.uuid4()),
        "sha256": "0" * 64,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "duration": duration,
        "channels": 1,
    }


def _openai_error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "server_error", "code": str(status)}},
        status=status,
    )


def _resample(pcm: bytes, rate_in: int, rate_out: int) -> bytes:
    """Linear-interpolation resampling of 16-bit mono PCM (good enough for a test voice)."""
    import array

    samples = array.array("h", pcm)
    if rate_in == rate_out or not samples:
        return pcm
    count = int(len(samples) * rate_out / rate_in)
    out = array.array("h", bytes(2 * count))
    ratio = rate_in / rate_out
    last = len(samples) - 1
    for i in range(count):
        pos = i * ratio
        j = int(pos)
        frac = pos - j
        nxt = samples[min(j + 1, last)]
        out[i] = int(samples[j] + (nxt - samples[j]) * frac)
    return out.tobytes()
