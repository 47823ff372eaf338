"""The Deepgram live protocol of the local speech peer (``tests.support.speech_server``), spoken
to over a real WebSocket as a live client speaks to it: audio all the time, silence included."""

from __future__ import annotations

import asyncio
import json
import math
import struct
from typing import Any

from aiohttp import ClientSession, WSMsgType

from tests.support.speech_server import SpeechServer

RATE = 16000
ANSWER = "It keeps a tentative distance for every vertex."


def chunks(seconds: float, amplitude: int) -> list[bytes]:
    """20-ms chunks of 16-bit PCM: a 220-Hz tone of ``amplitude`` (0: digital silence)."""
    size = RATE // 50
    total = round(seconds * 50)
    return [
        struct.pack(
            f"<{size}h",
            *(
                round(amplitude * math.sin(2 * math.pi * 220 * (n * size + i) / RATE))
                for i in range(size)
            ),
        )
        for n in range(total)
    ]


async def stream(peer: SpeechServer, audio: list[list[bytes]]) -> list[list[dict[str, Any]]]:
    """Send each part of ``audio`` at real-time pace, then ``Finalize``; the messages the peer
    sent during each part (the final result is in the last part's)."""
    url = f"{peer.deepgram_url}/v1/listen?interim_results=true&sample_rate={RATE}&encoding=linear16"
    parts: list[list[dict[str, Any]]] = []
    async with ClientSession() as client, client.ws_connect(url) as ws:
        for part in audio:
            received: list[dict[str, Any]] = []
            for chunk in part:
                await ws.send_bytes(chunk)
                await asyncio.sleep(0.02)
                while True:
                    try:
                        message = await ws.receive(timeout=0.001)
                    except TimeoutError:
                        break
                    if message.type == WSMsgType.TEXT:
                        received.append(json.loads(message.data))
            parts.append(received)
        await ws.send_str(json.dumps({"type": "Finalize"}))
        message = await ws.receive(timeout=5)
        parts[-1].append(json.loads(message.data))
        await ws.send_str(json.dumps({"type": "CloseStream"}))
    return parts


def words(message: dict[str, Any]) -> str:
    return str(message["channel"]["alternatives"][0]["transcript"])


def test_silence_streamed_to_the_live_socket_gets_no_interim_words() -> None:
    with SpeechServer() as peer:
        peer.script(ANSWER)
        silence, speech = asyncio.run(stream(peer, [chunks(2.0, 0), chunks(1.2, 6000)]))

    # Two seconds of silence: a recogniser hears no words in it (a live client streams the
    # microphone all the time; words here would be a phantom candidate talking over the
    # examiner, Pipecat's transcription turn start interrupts on any interim words).
    assert [words(m) for m in silence if words(m)] == []
    # Speech: interim words grow with the speech heard, from the first word; then the final.
    interim = [words(m) for m in speech if not m["is_final"]]
    assert interim and interim[0] == "It", interim
    assert all(ANSWER.startswith(text) for text in interim)
    assert len(interim[-1].split()) <= 4, interim  # ~2.5 words a second of speech, not of audio
    assert speech[-1]["is_final"] and words(speech[-1]) == ANSWER
