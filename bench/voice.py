#!/usr/bin/env python
"""Voice benchmark: what the product adds around speech, section by section.

Each section is one function; run them all (default) or some (``--only cold_start``).

* ``cold_start``: how long a fresh process takes before it can answer the first candidate's
  offer. *Today's baseline* (lazy, what the product did before ``bot.warmup``): import the voice
  stack and build the first session's voice I/O on the offer. *Warm start*: the ASGI entry loads
  it at process start (``warm_on_start``), so the offer only builds the session's services. Each
  figure is measured in a fresh Python process, several times.
* ``turn_taking`` (``bench/voice_turns.py``): spoken answers of 5-60 s with mid-answer pauses
  through the real runtime controller on a simulated clock: end of candidate speech → examiner
  audio (p50/p95), the examiner utterances started while the candidate spoke (target 0) and
  the error of the stored hesitation before the answer, with voice activity and the speech's
  own start/end fed to the controller and, as the baseline, final transcripts only.
* ``added_latency``: with speech peers answering instantly (``tests/support/speech_server.py``:
  Deepgram's live protocol for STT, OpenAI's speech endpoint for TTS, both on 127.0.0.1), the
  time the product adds between the end of the candidate's speech and the first examiner audio,
  per stage, through a real Pipecat pipeline (input → Silero VAD → STT → transcript hook →
  the reply handed to TTS → TTS → output):

  - *VAD end*: last voiced audio frame in → ``VADUserStoppedSpeakingFrame``, minus the configured
    end-of-segment silence (``VAD_STOP_SECS``, a deliberate wait, not overhead);
  - *transcript*: VAD stop → the final ``TranscriptionFrame`` (the peer answers ``Finalize`` at
    once);
  - *TTS hand-off*: the reply queued (``ExaminerSpeakFrame``) → the TTS request reaching the peer;
  - *TTS first audio*: the reply queued → the first ``TTSAudioRawFrame`` at the output.

  The controller and output filters are timed by ``bench/controller.py`` (p99 under 1 ms in
  memory); the transport's own hand-off (SmallWebRTC/LiveKit) is not measured here. The same
  run measures today's offline default (PocketSphinx STT, eSpeak NG TTS) as the baseline, and the
  turn timeout (``VIVA_VOICE_TURN_TIMEOUT_SECS``, a deliberate wait) is left out of both.

* ``decode``: one spoken answer (~16 s) decoded by PocketSphinx from the bot's event loop, as
  ``PocketsphinxSTTService.run_stt`` does: the decode's latency and the loop's longest stall
  meanwhile, with the decoder in a worker process (the product, ``bot.voice.decoder_workers``)
  and, as the baseline, in a thread of the same process (before issue 15: PocketSphinx holds the
  GIL, so the loop stalls for the whole decode).

* ``capacity``: how many voice sessions one worker process holds: 1, 2, 4... speech pipelines
  (Silero VAD, the Deepgram-protocol STT peer, the OpenAI-protocol TTS peer) on one event loop,
  as ``bot.hosting`` runs bots, each candidate answering ``--voice-turns`` times at a
  microphone's pace; end of voiced audio → first examiner audio, p95 < 1.5 s. The peers run in
  the same process (a provider's own work would be elsewhere), and the controller and event
  store's share of a turn is a text turn's, measured by ``bench/bot.py``.

Usage: ``python bench/voice.py [--only SECTION ...] [--turns 20] [--runs 3] [--decodes 10]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def fmt(values: Sequence[float], unit: str = "ms", scale: float = 1000.0) -> str:
    if not values:
        return "-"
    return (
        f"median {statistics.median(values) * scale:7.1f} {unit}  "
        f"p95 {pct(values, 0.95) * scale:7.1f} {unit}  max {max(values) * scale:7.1f} {unit}  "
        f"(n={len(values)})"
    )


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


# --- section: cold start -------------------------------------------------------------------------

COLD_LAZY = """
import time, json
t = time.perf_counter()
import django; django.setup()
base = time.perf_counter()
from bot.audio import voice_io
from bot.voice import webrtc
from bot.voice.offline_stt import decoder_pool
io = voice_io()
decoder_pool().warm_up()  # the first answer's decoder load
print(json.dumps({"offer": time.perf_counter() - base}))
"""

COLD_WARM = """
import time, json
t = time.perf_counter()
import config.asgi
serving = time.perf_counter() - t
from bot import warmup
warmup._started.join()
warm = time.perf_counter() - t
offer = time.perf_counter()
from bot.audio import voice_io
io = voice_io()
print(json.dumps({"serving": serving, "warm": warm, "offer": time.perf_counter() - offer}))
"""


def _fresh(code: str) -> dict[str, float]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "VIVA_PIPECAT_LOG_LEVEL": "ERROR",
    }
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def cold_start(args: argparse.Namespace) -> None:
    """The first offer's wait in a fresh process: lazy loading (baseline) vs the warm start."""
    print("== cold start: what the first candidate's offer waits for, in a fresh process")
    lazy = [_fresh(COLD_LAZY)["offer"] for _ in range(args.runs)]
    warm = [_fresh(COLD_WARM) for _ in range(args.runs)]
    print(f"  baseline (lazy, on the offer)    offer waits  {fmt(lazy, 's', 1)}")
    print(f"  warm start: serving after        {fmt([w['serving'] for w in warm], 's', 1)}")
    print(f"  warm start: voice loaded after   {fmt([w['warm'] for w in warm], 's', 1)}")
    print(f"  warm start: offer waits          {fmt([w['offer'] for w in warm], 's', 1)}")
    print("  target: Start enabled within 2 s of the room loading (the offer's wait is inside it)")


# --- section: added latency ----------------------------------------------------------------------


def _answer_pcm() -> tuple[bytes, int]:
    from pipecat.audio.utils import create_file_resampler

    from bot.audio import VOICE_IN_SAMPLE_RATE
    from bot.voice.espeak import Voice, engine

    async def make() -> bytes:
        espeak = engine()
        pcm = espeak.synthesize(
            "I think the answer is one hundred.", Voice(name="en-us+f2", rate_wpm=140)
        )
        return await create_file_resampler().resample(pcm, espeak.sample_rate, VOICE_IN_SAMPLE_RATE)

    speech = asyncio.run(make())
    silence = bytes(VOICE_IN_SAMPLE_RATE * 2)  # 1 s
    return silence + speech + silence * 2, VOICE_IN_SAMPLE_RATE


def _stamper(marks: dict[str, float], on_final: Callable[[], Any]) -> Any:
    from pipecat.frames.frames import (
        Frame,
        TranscriptionFrame,
        TTSAudioRawFrame,
        VADUserStoppedSpeakingFrame,
    )
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

    class Stamp(FrameProcessor):
        """Times the frames of one turn as they pass (after the STT: VAD stop, final)."""

        async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            now = time.perf_counter()
            if isinstance(frame, VADUserStoppedSpeakingFrame):
                marks.setdefault("vad_stop", now)
            elif isinstance(frame, TranscriptionFrame) and "final" not in marks:
                marks["final"] = now
                await self.push_frame(frame, direction)
                await on_final()
                return
            elif isinstance(frame, TTSAudioRawFrame):
                marks.setdefault("first_audio", now)
            await self.push_frame(frame, direction)

    return Stamp()


async def _speech_worker(
    stt: Any, tts: Any, marks: dict[str, float], reply: Callable[[], Any]
) -> tuple[Any, asyncio.Task[None]]:
    """input → Silero VAD → ``stt`` → stamp → ``tts`` → stamp, running; the worker and its task."""
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.workers.runner import WorkerRunner

    from bot.audio import build_vad_processor, pipeline_params

    worker = PipelineWorker(
        Pipeline([build_vad_processor(), stt, _stamper(marks, reply), tts, _stamper(marks, reply)]),
        params=pipeline_params(),
        idle_timeout_secs=None,
        enable_rtvi=False,
    )
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    return worker, asyncio.create_task(runner.run())


async def _one_turn(
    stt: Any, tts: Any, pcm: bytes, rate: int, peer: Any | None
) -> dict[str, float]:
    """One spoken answer through input → VAD → STT → stamp → TTS → stamp; the marks."""
    from pipecat.frames.frames import EndFrame, TTSSpeakFrame

    from bot.audio import input_audio_frames

    marks: dict[str, float] = {}
    done = asyncio.Event()

    async def reply() -> None:
        marks["queued"] = time.perf_counter()
        await worker.queue_frame(TTSSpeakFrame("Thank you. Why one hundred?"))

    worker, running = await _speech_worker(stt, tts, marks, reply)
    frames = list(input_audio_frames(pcm, rate))
    # Real time: the VAD sees audio at the pace a microphone delivers it.
    voiced_end = None
    for index, frame in enumerate(frames):
        await worker.queue_frame(frame)
        await asyncio.sleep(0.02)
        if index * 0.02 >= len(pcm) / (2 * rate) - 2.0 and voiced_end is None:
            voiced_end = (
                time.perf_counter()
            )  # the last voiced frame went in (2 s of silence follow)
        if "first_audio" in marks:
            break
    deadline = time.perf_counter() + 10
    while "first_audio" not in marks and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)
    if peer is not None and peer.speeches:
        marks["tts_request"] = peer.speeches[-1]["at"]
    marks["voiced_end"] = voiced_end or 0.0
    await worker.queue_frame(EndFrame())
    await asyncio.wait_for(running, 30)
    done.set()
    return marks


def _stages(turns: list[dict[str, float]]) -> dict[str, list[float]]:
    from bot.audio import VAD_STOP_SECS

    stages: dict[str, list[float]] = {
        "VAD end": [],
        "transcript": [],
        "TTS hand-off": [],
        "TTS first audio": [],
        "added in all": [],
    }
    for m in turns:
        if not {"vad_stop", "final", "queued", "first_audio"} <= m.keys():
            continue
        stages["VAD end"].append(max(0.0, m["vad_stop"] - m["voiced_end"] - VAD_STOP_SECS))
        stages["transcript"].append(m["final"] - m["vad_stop"])
        if "tts_request" in m:
            stages["TTS hand-off"].append(m["tts_request"] - m["queued"])
        stages["TTS first audio"].append(m["first_audio"] - m["queued"])
        stages["added in all"].append(
            max(0.0, m["vad_stop"] - m["voiced_end"] - VAD_STOP_SECS)
            + (m["final"] - m["vad_stop"])
            + (m["first_audio"] - m["queued"])
        )
    return stages


def added_latency(args: argparse.Namespace) -> None:
    """Per-stage latency the product adds, peers answering instantly vs the offline default."""
    import django

    django.setup()
    from bot.audio import build_offline_stt, build_offline_tts
    from bot.speech_providers import SpeechChoice, build_hosted_stt, build_hosted_tts
    from tests.support.speech_server import SpeechServer

    print("== added latency: end of the candidate's speech → first examiner audio, per stage")
    pcm, rate = _answer_pcm()
    with SpeechServer() as peer:
        hosted: list[dict[str, float]] = []
        offline: list[dict[str, float]] = []
        for turn in range(args.turns + 1):  # the first turn of each warms connections, unmeasured
            peer.script("I think the answer is one hundred.")
            stt = build_hosted_stt(
                SpeechChoice(
                    "stt", "deepgram", "nova-3-general", None, "en", peer.deepgram_url, None, "k"
                )
            )
            tts = build_hosted_tts(
                SpeechChoice("tts", "openai", "tts-1", "alloy", "en", peer.base_url, None, "k")
            )
            marks = asyncio.run(_one_turn(stt, tts, pcm, rate, peer))
            baseline = asyncio.run(
                _one_turn(build_offline_stt(), build_offline_tts(), pcm, rate, None)
            )
            if turn:
                hosted.append(marks)
                offline.append(baseline)
    for label, turns in (
        ("peers (Deepgram live + OpenAI speech)", hosted),
        ("baseline: offline default (PocketSphinx + eSpeak NG)", offline),
    ):
        print(f"  {label}")
        for stage, values in _stages(turns).items():
            print(f"    {stage:<16} {fmt(values)}")
    added = _stages(hosted)["added in all"]
    if added:
        verdict = "met" if pct(added, 0.95) < 0.150 else "NOT met"
        print(f"  target p95 < 150 ms with instant peers: {verdict}")


# --- section: capacity --------------------------------------------------------------------------


async def _voice_session(
    pcm: bytes, rate: int, peer: Any, turns: int, latencies: list[float]
) -> None:
    """One voice session's speech pipeline (input → Silero VAD → Deepgram-protocol STT → reply
    → OpenAI-protocol TTS → output) answering ``turns`` times, each spoken answer fed at a
    microphone's pace; appends end of voiced audio → first examiner audio per turn."""
    from pipecat.frames.frames import EndFrame, TTSSpeakFrame

    from bot.audio import input_audio_frames
    from bot.speech_providers import SpeechChoice, build_hosted_stt, build_hosted_tts

    marks: dict[str, float] = {}

    async def reply() -> None:
        await worker.queue_frame(TTSSpeakFrame("Thank you. Why one hundred?"))

    stt = build_hosted_stt(
        SpeechChoice("stt", "deepgram", "nova-3-general", None, "en", peer.deepgram_url, None, "k")
    )
    tts = build_hosted_tts(
        SpeechChoice("tts", "openai", "tts-1", "alloy", "en", peer.base_url, None, "k")
    )
    worker, running = await _speech_worker(stt, tts, marks, reply)
    frames = list(input_audio_frames(pcm, rate))
    voiced_frames = int((len(pcm) / (2 * rate) - 2.0) / 0.02)
    started = time.perf_counter()
    for _ in range(turns):
        marks.clear()
        voiced_end = None
        for index, frame in enumerate(frames):
            await worker.queue_frame(frame)
            started += 0.02  # a microphone's pace, without drift
            await asyncio.sleep(max(0.0, started - time.perf_counter()))
            if index == voiced_frames:
                voiced_end = time.perf_counter()
        deadline = time.perf_counter() + 10
        while "first_audio" not in marks and time.perf_counter() < deadline:
            await asyncio.sleep(0.005)
        if voiced_end is not None and "first_audio" in marks:
            latencies.append(marks["first_audio"] - voiced_end)
        started = time.perf_counter()
    await worker.queue_frame(EndFrame())
    await asyncio.wait_for(running, 30)


async def _voice_level(count: int, pcm: bytes, rate: int, peer: Any, turns: int) -> list[float]:
    latencies: list[float] = []
    await asyncio.gather(*(_voice_session(pcm, rate, peer, turns, latencies) for _ in range(count)))
    return latencies


def capacity(args: argparse.Namespace) -> None:
    """How many voice sessions one worker process holds with end of speech → first examiner
    audio p95 < 1.5 s: 1, 2, 4... sessions on one event loop (as ``bot.hosting`` runs them)."""
    import django

    django.setup()
    from tests.support.speech_server import SpeechServer

    print(
        "== capacity: voice sessions on one event loop (one worker process), each answering "
        f"{args.voice_turns} times; end of voiced audio → first examiner audio (includes the "
        "VAD's end-of-speech silence)"
    )
    pcm, rate = _answer_pcm()
    with SpeechServer() as peer:
        peer.transcribe = lambda _pcm: "I think the answer is one hundred."
        held, count, failed = 0, 1, 0
        while count <= args.max_voice:
            latencies = asyncio.run(_voice_level(count, pcm, rate, peer, args.voice_turns))
            expected = count * args.voice_turns
            ok = len(latencies) == expected and pct(latencies, 0.95) < 1.5
            print(
                f"  {count:>3} sessions: {fmt(latencies)} of {expected} turns "
                f"{'ok' if ok else 'TOO SLOW'} ({load_average()})"
            )
            if ok:
                held = count
            else:
                failed = count
            if failed and failed - held <= max(1, held // 4):
                break  # doubled, then halved the gap down to a quarter of what held
            count = (held + failed) // 2 if failed else count * 2
    print(
        f"  voice sessions one worker process holds (p95 < 1.5 s): {held} "
        "(speech pipelines with the peers in the same process; the controller and the event "
        "store add a text turn's cost, bench/bot.py)"
    )


# --- section: decode ----------------------------------------------------------------------------


def _long_answer_pcm() -> bytes:
    from pipecat.audio.utils import create_file_resampler

    from bot.voice.espeak import Voice, engine

    sentence = "I think the answer is one hundred, because each vertex is settled once."
    espeak = engine()
    pcm = espeak.synthesize(" ".join([sentence] * 3), Voice(name="en-us+f2", rate_wpm=140))
    return asyncio.run(create_file_resampler().resample(pcm, espeak.sample_rate, 16000))


def _timed_decodes(
    decode: Callable[[bytes], object], pcm: bytes, count: int
) -> tuple[list[float], list[float]]:
    """``count`` decodes from an event loop through ``asyncio.to_thread``: each one's latency and
    the loop's longest stall (a 10-ms sleep that took longer) while it ran."""

    async def one() -> tuple[float, float]:
        started = time.perf_counter()
        decoding = asyncio.ensure_future(asyncio.to_thread(decode, pcm))
        stall = 0.0
        while not decoding.done():
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            stall = max(stall, time.perf_counter() - before - 0.01)
        await decoding
        return time.perf_counter() - started, stall

    runs = [asyncio.run(one()) for _ in range(count)]
    return [latency for latency, _ in runs], [stall for _, stall in runs]


def decode(args: argparse.Namespace) -> None:
    """Decode latency and event-loop stall: decoder in a worker process vs in a thread."""
    from bot.voice.decoder_workers import DecoderProcesses
    from bot.voice.sphinx_decoder import DEFAULT_DECODER_OPTIONS, DecoderPool

    pcm = _long_answer_pcm()
    print(f"\n## decode: a {len(pcm) / 32000:.1f}-s answer, {args.decodes} decodes each")
    here = DecoderPool(DEFAULT_DECODER_OPTIONS, 1)
    here.warm_up()
    workers = DecoderProcesses(DEFAULT_DECODER_OPTIONS, 1)
    workers.warm_up()
    try:
        for name, pool in (("baseline: thread", here), ("worker process", workers)):
            latency, stall = _timed_decodes(pool.decode, pcm, args.decodes)
            print(f"  {name:<17} latency      {fmt(latency)}")
            print(f"  {name:<17} loop stall   {fmt(stall)}")
    finally:
        workers.close()
    print("  target: no loop stall over 200 ms (a VAD window's slack)")


# --- section: turn taking ------------------------------------------------------------------------


def turn_taking(args: argparse.Namespace) -> None:
    """Per answer length: end of candidate speech → examiner audio (p50/p95) and examiner
    utterances started while the candidate spoke (target 0), against a transcripts-only
    baseline (``bench/voice_turns.py``)."""
    from bench.voice_turns import report

    print("\n## turn taking (simulated clock, real runtime controller)")
    report(args.trials, args.seed)


SECTIONS: dict[str, Callable[[argparse.Namespace], None]] = {
    "cold_start": cold_start,
    "added_latency": added_latency,
    "turn_taking": turn_taking,
    "decode": decode,
    "capacity": capacity,
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", choices=sorted(SECTIONS), help="sections to run")
    parser.add_argument("--turns", type=int, default=20, help="spoken turns per configuration")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per cold-start figure")
    parser.add_argument("--trials", type=int, default=40, help="answers per length (turn_taking)")
    parser.add_argument("--seed", type=int, default=7, help="turn_taking's random seed")
    parser.add_argument("--decodes", type=int, default=10, help="decodes per configuration")
    parser.add_argument("--voice-turns", type=int, default=4, help="answers per voice session")
    parser.add_argument("--max-voice", type=int, default=64, help="largest level (capacity)")
    args = parser.parse_args()
    print(f"bench/voice.py  ({load_average()})")
    for name in args.only or list(SECTIONS):
        SECTIONS[name](args)
    print(f"done ({load_average()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
