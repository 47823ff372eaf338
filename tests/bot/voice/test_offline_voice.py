"""A spoken answer through a REAL Pipecat pipeline, fully offline.

The answer is spoken by eSpeak NG at test time and written to a WAV file; its PCM enters the
pipeline as ``InputAudioRawFrame`` chunks (what an input transport delivers). Silero VAD
segments it, PocketSphinx transcribes it, the transcript reaches a controller hook, and the
examiner's reply is spoken by the offline TTS. Nothing in Pipecat is patched.

The pipeline is ``VADProcessor → PocketsphinxSTTService → ControllerHook →
EspeakTTSService → recorder`` (the bot core's builder puts the user aggregator, LLM and
FlowManager where the hook is).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
    TTSSpeakFrame,
    TTSUpdateSettingsFrame,
)
from pipecat.processors.frame_processor import FrameProcessor

from bot.audio import (
    VOICE_IN_SAMPLE_RATE,
    VOICE_OUT_SAMPLE_RATE,
    build_vad_processor,
    input_audio_frames,
    pcm_duration_secs,
    pipeline_params,
    read_wav,
)
from bot.voice.espeak import Voice, engine
from bot.voice.offline_stt import (
    OfflineTranscript,
    PocketsphinxSTTService,
    WordScore,
    decoder_pool,
    transcription_confidence,
    utterance_confidence,
)
from bot.voice.offline_tts import (
    NORMAL_RATE_WPM,
    SLOWER_RATE_WPM,
    EspeakTTSService,
    EspeakTTSSettings,
)
from tests.bot.voice.support import (
    ANSWER,
    REPLY,
    AfterAllReplies,
    ControllerHook,
    SpeechRecorder,
    run_pipeline,
    spoken_wav,
    words_heard,
)


def test_a_spoken_answer_is_transcribed_and_the_examiner_replies(tmp_path: Path) -> None:
    started = time.monotonic()

    async def scenario() -> tuple[ControllerHook, SpeechRecorder]:
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER)
        pcm, rate = read_wav(wav)
        assert rate == VOICE_IN_SAMPLE_RATE
        hook = ControllerHook(lambda text, confidence: REPLY)
        recorder = SpeechRecorder()
        processors: list[FrameProcessor] = [
            build_vad_processor(),
            PocketsphinxSTTService(),
            hook,
            EspeakTTSService(),
            recorder,
        ]
        await run_pipeline(processors, list(input_audio_frames(pcm, rate)), recorder.done)
        return hook, recorder

    hook, recorder = asyncio.run(scenario())

    # One VAD segment, one final transcript with the answer's words and a usable confidence.
    assert len(hook.transcripts) == 1, hook.transcripts
    text, confidence = hook.transcripts[0]
    assert len(words_heard(text)) >= 3, text
    assert confidence is not None
    assert 0.5 <= confidence <= 1.0, confidence

    # The reply is 16-bit mono PCM at the pipeline's output rate, as long as the sentence.
    assert recorder.utterances_done == 1
    assert recorder.audio
    assert {f.sample_rate for f in recorder.audio} == {VOICE_OUT_SAMPLE_RATE}
    assert {f.num_channels for f in recorder.audio} == {1}
    pcm_out = b"".join(f.audio for f in recorder.audio)
    assert len(pcm_out) % 2 == 0
    assert any(pcm_out[i : i + 2] != b"\x00\x00" for i in range(0, len(pcm_out), 2))
    seconds = pcm_duration_secs(pcm_out, VOICE_OUT_SAMPLE_RATE)
    assert 2.0 <= seconds <= 6.0, seconds  # 10 words at ~160 words per minute
    assert time.monotonic() - started < 30


GARBLED = [
    ("Der schnelle braune Fuchs springt über den faulen Hund.", Voice(name="de", rate_wpm=170)),
    ("Minä luulen, että vastaus on sata, koska verkossa on kymmenen särmää.", Voice(name="fi")),
    ("Ich glaube, die Antwort ist hundert, weil der Graph zehn Kanten hat.", Voice(name="de")),
]


def test_garbled_audio_gets_a_low_confidence(tmp_path: Path) -> None:
    """Foreign-language answers: PocketSphinx still guesses English words, but with low word
    posteriors, so EVD-010 would reject evidence resting on them. One utterance can score near
    0.5 by chance; their mean stays well below."""

    async def scenario() -> list[tuple[str, float | None]]:
        pcm = b""
        for index, (text, voice) in enumerate(GARBLED):
            wav = await spoken_wav(tmp_path / f"garbled-{index}.wav", text, voice)
            pcm += read_wav(wav)[0]
        hook = ControllerHook(lambda text, confidence: "Could you say that again?")
        recorder = SpeechRecorder()
        processors: list[FrameProcessor] = [
            build_vad_processor(),
            PocketsphinxSTTService(),
            hook,
            EspeakTTSService(),
            recorder,
        ]
        feed = list(input_audio_frames(pcm, VOICE_IN_SAMPLE_RATE))
        replied = AfterAllReplies(recorder, len(GARBLED))
        await run_pipeline([*processors, replied], feed, replied.done)
        return hook.transcripts

    transcripts = asyncio.run(scenario())
    assert len(transcripts) == len(GARBLED), transcripts
    confidences = [confidence for _, confidence in transcripts]
    assert all(c is not None and 0.0 <= c <= 1.0 for c in confidences)
    assert sum(c or 0.0 for c in confidences) / len(confidences) < 0.5, transcripts


def test_the_slower_rate_speaks_longer_and_the_settings_frame_applies() -> None:
    async def scenario() -> tuple[float, float, int]:
        tts = EspeakTTSService()
        recorder = SpeechRecorder()
        sentence = "The shortest path from A to B goes through C."
        slower = tts.delivery_update("rate", "slower")
        assert isinstance(slower, TTSUpdateSettingsFrame)
        assert isinstance(slower.delta, EspeakTTSSettings)
        assert slower.delta.rate == SLOWER_RATE_WPM
        feed: list[Frame] = [TTSSpeakFrame(sentence), slower, TTSSpeakFrame(sentence)]
        replied = AfterAllReplies(recorder, 2)
        await run_pipeline([tts, recorder, replied], feed, replied.done)
        by_context: dict[str | None, int] = {}
        for frame in recorder.audio:
            by_context[frame.context_id] = by_context.get(frame.context_id, 0) + len(frame.audio)
        first, second = list(by_context.values())
        return (
            pcm_duration_secs(b"\x00" * first, VOICE_OUT_SAMPLE_RATE),
            pcm_duration_secs(b"\x00" * second, VOICE_OUT_SAMPLE_RATE),
            tts.voice.rate_wpm,
        )

    normal, slower, rate = asyncio.run(scenario())
    assert rate == SLOWER_RATE_WPM
    assert slower > normal * (NORMAL_RATE_WPM / SLOWER_RATE_WPM) * 0.85, (normal, slower)


def test_delivery_updates() -> None:
    tts = EspeakTTSService(rate_wpm=NORMAL_RATE_WPM, volume=100)

    def delta(setting: str, value: str) -> EspeakTTSSettings:
        frame = tts.delivery_update(setting, value)
        assert frame.service is tts
        assert isinstance(frame.delta, EspeakTTSSettings)
        return frame.delta

    assert delta("rate", "slower").rate == SLOWER_RATE_WPM
    assert delta("rate", "normal").rate == NORMAL_RATE_WPM
    assert delta("rate", "110").rate == 110
    assert delta("volume", "up").volume == 120
    assert delta("volume", "up").volume == 140  # queued updates add up
    assert delta("volume", "down").volume == 120
    assert delta("volume", "normal").volume == 100
    assert delta("volume", "5").volume == 40  # never inaudible
    slow = EspeakTTSService(rate_wpm=SLOWER_RATE_WPM)  # a candidate with the accommodation
    assert slow.delivery_update("rate", "normal").delta.rate == SLOWER_RATE_WPM  # type: ignore[union-attr]
    assert slow.delivery_update("rate", "slower").delta.rate == 100  # type: ignore[union-attr]
    for setting, value in [("rate", "warp"), ("volume", "loudest"), ("pitch", "up")]:
        with pytest.raises(ValueError, match="unknown"):
            tts.delivery_update(setting, value)


def test_espeak_voice_parameters_are_clamped_and_rate_changes_length() -> None:
    espeak = engine()
    assert espeak.sample_rate == 22050
    assert espeak.synthesize("   ") == b""
    fast = espeak.synthesize("one two three four five", Voice(rate_wpm=400))
    slow = espeak.synthesize("one two three four five", Voice(rate_wpm=100))
    assert len(slow) > 2 * len(fast)
    assert Voice(rate_wpm=10_000, volume=-5, pitch=500).clamped() == Voice(
        rate_wpm=450, volume=0, pitch=100
    )
    with pytest.raises(ValueError, match="no voice"):
        espeak.synthesize("hello", Voice(name="no-such-voice"))


def test_confidence_is_the_duration_weighted_mean_of_word_posteriors() -> None:
    words = [
        WordScore("long", 1.0, start_ms=0, end_ms=300),
        WordScore("short", 0.0, start_ms=300, end_ms=400),
    ]
    assert utterance_confidence(words) == 0.75
    assert utterance_confidence([]) == 0.0
    frame = TranscriptionFrame(
        "long short",
        "",
        "2026-01-01T00:00:00Z",
        result=OfflineTranscript("long short", 0.75, tuple(words), 400),
    )
    assert transcription_confidence(frame) == 0.75
    assert transcription_confidence(TranscriptionFrame("x", "", "t", result=None)) is None
    assert (
        transcription_confidence(TranscriptionFrame("x", "", "t", result={"confidence": 2})) == 1.0
    )


def test_the_decoder_pool_decodes_directly_and_ignores_silence() -> None:
    pool = decoder_pool()
    assert pool.decode(b"") is None
    assert pool.decode(bytes(VOICE_IN_SAMPLE_RATE * 2)) is None  # one second of silence


def test_a_pipeline_at_8khz_is_resampled_for_the_model(tmp_path: Path) -> None:
    """Segments arrive at the pipeline's input rate (Silero also runs at 8 kHz, e.g. telephony);
    PocketSphinx is given 16 kHz either way. Narrowband audio loses most words with the
    wideband en-US model, so only the path is checked here, not the words."""

    async def scenario() -> list[tuple[str, float | None]]:
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER)
        pcm, rate = read_wav(wav)
        pcm8k = await create_file_resampler().resample(pcm, rate, 8000)
        hook = ControllerHook(lambda text, confidence: "Thank you.")
        recorder = SpeechRecorder()
        processors: list[FrameProcessor] = [
            build_vad_processor(),
            PocketsphinxSTTService(),
            hook,
            EspeakTTSService(),
            recorder,
        ]
        await run_pipeline(
            processors,
            list(input_audio_frames(pcm8k, 8000)),
            recorder.done,
            params=pipeline_params(audio_in_sample_rate=8000),
        )
        return hook.transcripts

    transcripts = asyncio.run(scenario())
    assert len(transcripts) == 1
    text, confidence = transcripts[0]
    assert text.strip()
    assert confidence is not None
    assert 0.0 <= confidence <= 1.0
