"""A voice transcript's times are the audio's (issue 15): when the candidate's speech started
and ended by the VAD, never when the recogniser finished decoding it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pipecat.frames.frames import (
    InputAudioRawFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.workers.runner import WorkerRunner

from bot.activity import AudioClock
from bot.audio import VAD_STOP_SECS, input_audio_frames, read_wav, voice_io
from bot.pipeline import SpeechSpans, build_pipeline
from bot.voice.offline_stt import decoder_pool
from tests.bot.voice.support import ANSWER, RecordingCore, spoken_wav, unused_llm

LEAD_SECS = 0.5
"""``spoken_wav`` puts half a second of silence before the speech and a second after it."""
TOLERANCE_SECS = 0.35
"""Silero decides in 32 ms windows and needs a few of them over its confidence threshold to
start (``start_secs`` 0.2 is subtracted back) and ``stop_secs`` of silence to stop (subtracted
back too); eSpeak's first and last phonemes are soft. 0.35 s covers that and the pacing of the
feed on a loaded machine."""


@pytest.mark.parametrize("backlog_secs", [0.0, 0.8])
def test_a_transcript_carries_the_span_of_its_speech_in_the_audio(
    tmp_path: Path, backlog_secs: float
) -> None:
    """``backlog_secs``: the audio after the speech reaches the pipeline that much late, in a
    burst (a loaded machine): the VAD decides late, the times stay the audio's. (Under the
    VAD's 1-s idle timeout: a longer stall of the input is a forced stop, not a backlog.)"""
    core = RecordingCore()

    async def scenario() -> tuple[float, float]:
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER)
        pcm, rate = read_wav(wav)
        built = build_pipeline(core=core, llm=unused_llm(), io=voice_io(output=None))
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(built.worker)
        running = asyncio.create_task(runner.run())
        try:
            await asyncio.wait_for(built.started.wait(), timeout=15)
            frames = list(input_audio_frames(pcm, rate))
            speech_end = len(pcm) / 2 / rate - 1.0
            t0 = time.time()
            for index, frame in enumerate(frames):  # in real time, as a microphone gives it
                due = t0 + index * 0.02 + (backlog_secs if index * 0.02 >= speech_end else 0.0)
                await asyncio.sleep(max(0.0, due - time.time()))
                await built.worker.queue_frame(frame)
            await asyncio.wait_for(core.heard.wait(), timeout=30)
            heard_at = time.time()
            await runner.cancel("done")
            return t0, heard_at
        finally:
            if not running.done():
                await runner.cancel("test over")
            await asyncio.wait_for(running, timeout=10)

    t0, heard_at = asyncio.run(scenario())
    assert len(core.transcripts) == 1 and core.spans[0] is not None, core.transcripts
    start, end = core.spans[0]
    speech_secs = len(read_wav(tmp_path / "answer.wav")[0]) / 2 / 16000 - LEAD_SECS - 1.0
    assert abs(start - (t0 + LEAD_SECS)) <= TOLERANCE_SECS, start - t0
    assert abs(end - (t0 + LEAD_SECS + speech_secs)) <= TOLERANCE_SECS, end - t0
    assert heard_at >= end + VAD_STOP_SECS  # the transcript came later; its times did not move


def test_the_audio_clock_times_samples_by_the_stream_not_by_when_they_are_processed() -> None:
    clock = AudioClock()
    chunk = InputAudioRawFrame(audio=bytes(640), sample_rate=16000, num_channels=1)  # 20 ms
    clock.advance(chunk, now=100.02)  # no backlog: the stream started at 100.0
    for _ in range(50):  # a second of audio processed 0.8 s late, in a burst
        clock.advance(chunk, now=101.8 + clock.position / 100)
    assert abs(clock.now() - 101.02) < 1e-6  # 51 chunks in: 1.02 s of audio after 100.0
    clock.advance(chunk, now=110.0)  # nothing came for seconds: a gap, the clock is set again
    assert clock.now() == 110.0


def test_without_a_span_from_the_stt_the_vad_segments_since_the_last_transcript_count() -> None:
    spans = SpeechSpans()
    spans.vad(VADUserStartedSpeakingFrame(start_secs=0.2, timestamp=100.2))
    spans.vad(VADUserStoppedSpeakingFrame(stop_secs=0.6, timestamp=103.6))
    spans.vad(VADUserStartedSpeakingFrame(start_secs=0.2, timestamp=104.2))
    spans.vad(VADUserStoppedSpeakingFrame(stop_secs=0.6, timestamp=106.6))
    spans.vad(VADUserStartedSpeakingFrame(start_secs=0.2, timestamp=110.2))  # still speaking
    frame = TranscriptionFrame("two segments", "", "")
    assert spans.transcript(frame) == (100.0, 106.0)
    assert spans.transcript(frame) is None  # nothing completed since
    spans.vad(VADUserStoppedSpeakingFrame(stop_secs=0.6, timestamp=111.6))
    assert spans.transcript(frame) == (110.0, 111.0)


def test_decoding_a_segment_does_not_stall_the_event_loop(tmp_path: Path) -> None:
    """While an answer is decoded, the bot's loop (VAD, turn timers, audio) keeps running: no
    stall longer than a VAD window's worth of slack (0.2 s). PocketSphinx holds the GIL while it
    decodes, so the decoding runs in a worker process (``bot.voice.decoder_workers``)."""
    pool = decoder_pool()
    pool.warm_up()

    async def scenario() -> float:
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER + " " + ANSWER + " " + ANSWER)
        pcm, _ = read_wav(wav)
        stalls: list[float] = []
        decoding = asyncio.ensure_future(asyncio.to_thread(pool.decode, pcm))
        while not decoding.done():
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            stalls.append(time.perf_counter() - before - 0.01)
        await decoding
        return max(stalls)

    stall = asyncio.run(scenario())
    print(f"longest event-loop stall while decoding: {stall:.3f} s")
    assert stall <= 0.2, stall
