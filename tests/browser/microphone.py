"""Fake-microphone timelines for voice tests in Chromium: a WAV made at test time with eSpeak NG
(``--use-file-for-fake-audio-capture`` plays it, looped unless the path ends with ``%noloop``;
``helpers.fake_microphone_page``), and where speech is in it, measured from the audio itself."""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.voice.espeak import Voice, engine

CANDIDATE_VOICE = Voice(name="en-us+f2", rate_wpm=140)
"""A clear eSpeak voice for PocketSphinx."""


@dataclass(frozen=True)
class Timeline:
    """A microphone WAV and where speech is in it (seconds from the file's start)."""

    path: Path
    regions: list[tuple[float, float]]
    secs: float


def speech_regions(pcm: bytes, rate: int, *, gap_secs: float = 0.5) -> list[tuple[float, float]]:
    """Where ``pcm`` (16-bit mono) holds speech: 10-ms windows above an energy threshold,
    merged across gaps shorter than ``gap_secs`` (eSpeak's pauses at commas)."""
    samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float64)
    window = rate // 100
    frames = samples[: len(samples) // window * window].reshape(-1, window)
    loud = np.sqrt((frames**2).mean(axis=1)) > 300
    regions: list[tuple[float, float]] = []
    for index in np.flatnonzero(loud):
        start, end = index / 100, (index + 1) / 100
        if regions and start - regions[-1][1] < gap_secs:
            regions[-1] = (regions[-1][0], end)
        else:
            regions.append((start, end))
    return regions


def microphone_wav(
    path: Path, parts: list[str | float], voice: Voice = CANDIDATE_VOICE
) -> Timeline:
    """A WAV of ``parts``: text spoken by eSpeak NG in ``voice``, numbers as seconds of
    silence."""
    espeak = engine()
    rate = espeak.sample_rate
    pcm = b"".join(
        bytes(2 * round(rate * part)) if isinstance(part, float) else espeak.synthesize(part, voice)
        for part in parts
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm)
    return Timeline(path, speech_regions(pcm, rate), len(pcm) / 2 / rate)
