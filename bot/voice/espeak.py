"""eSpeak NG through ``ctypes``: text in, 16-bit mono PCM out, no subprocess, no apt.

The library and its voice data come from the ``espeakng-loader`` wheel (``libespeak-ng.so`` plus
``espeak-ng-data``, no other dependency). A system ``libespeak-ng`` (Debian ``espeak-ng``) is used
only if that wheel is missing.

eSpeak NG keeps process-global state (one voice, one set of parameters, one synthesis callback),
so every synthesis runs under one lock and sets voice and parameters itself. Synthesis is
synchronous (``AUDIO_OUTPUT_SYNCHRONOUS``): the callback runs in the calling thread before
``espeak_Synth`` returns. It is fast (a sentence takes a few milliseconds on one core), so callers
run :meth:`EspeakEngine.synthesize` in a worker thread and stream the result.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

logger = logging.getLogger(__name__)

# espeak_AUDIO_OUTPUT, espeak_PARAMETER, espeak_POSITION_TYPE and flags (speak_lib.h).
_AUDIO_OUTPUT_SYNCHRONOUS: Final = 2
_INITIALIZE_DONT_EXIT: Final = 0x8000
_PARAM_RATE: Final = 1
_PARAM_VOLUME: Final = 2
_PARAM_PITCH: Final = 3
_POS_CHARACTER: Final = 1
_CHARS_UTF8: Final = 1
_EE_OK: Final = 0
_RANDOM_SEED: Final = 1
_EVENT_LIST_TERMINATED: Final = 0
_EVENT_WORD: Final = 1

MIN_RATE_WPM: Final = 80
"""eSpeak's slowest speaking rate (words per minute)."""
MAX_RATE_WPM: Final = 450
"""eSpeak's fastest speaking rate."""
MAX_VOLUME: Final = 200
"""eSpeak's amplitude range is 0..200; 100 is its default."""


class _EspeakVoice(ctypes.Structure):
    """``espeak_VOICE`` (speak_lib.h)."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_void_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


@dataclass(frozen=True, slots=True)
class VoiceInfo:
    """One voice the engine has: its file (``gmw/en-US``), display name and the language tags
    it speaks, best first (``("en-us", "en")``)."""

    identifier: str
    name: str
    languages: tuple[str, ...]


def _languages(pointer: int | None) -> tuple[str, ...]:
    """espeak_VOICE.languages: (priority byte, tag, NUL) pairs ended by a 0 priority."""
    found: list[tuple[int, str]] = []
    if not pointer:
        return ()
    offset = 0
    while True:
        priority = ctypes.c_ubyte.from_address(pointer + offset).value
        if priority == 0:
            break
        tag = ctypes.string_at(pointer + offset + 1).decode("utf-8", "replace")
        found.append((priority, tag.lower()))
        offset += len(tag.encode()) + 2
    return tuple(tag for _, tag in sorted(found, key=lambda item: item[0]))


class _EspeakEvent(ctypes.Structure):
    """``espeak_EVENT`` (speak_lib.h): ``text_position`` is 1-based, in characters;
    ``audio_position`` is in ms from the start of the synthesis."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_EspeakEvent)
)


@dataclass(frozen=True, slots=True)
class SpokenWord:
    """One word eSpeak spoke: ``text[start:end]`` of the synthesised text, from ``audio_ms``
    into its audio."""

    start: int
    end: int
    audio_ms: int


@dataclass(frozen=True, slots=True)
class Speech:
    """:meth:`EspeakEngine.speak`'s result: the PCM and the timing of each word."""

    pcm: bytes
    words: tuple[SpokenWord, ...]


class EspeakUnavailableError(RuntimeError):
    """Neither the ``espeakng-loader`` wheel nor a system ``libespeak-ng`` could be loaded."""


@dataclass(frozen=True, slots=True)
class Voice:
    """How eSpeak speaks: voice name (``en-us``, ``en-us+f2``...), rate, volume and pitch."""

    name: str = "en-us"
    rate_wpm: int = 160
    volume: int = 100
    pitch: int = 50

    def clamped(self) -> Voice:
        """The same voice with every parameter inside eSpeak's range."""
        return Voice(
            name=self.name,
            rate_wpm=min(MAX_RATE_WPM, max(MIN_RATE_WPM, int(self.rate_wpm))),
            volume=min(MAX_VOLUME, max(0, int(self.volume))),
            pitch=min(100, max(0, int(self.pitch))),
        )


def _locate_library() -> tuple[str, str | None]:
    """``(library path, data path or None for the library's built-in default)``."""
    try:
        import espeakng_loader
    except ImportError:
        found = ctypes.util.find_library("espeak-ng")
        if found is None:
            raise EspeakUnavailableError(
                "eSpeak NG is not installed: pip install espeakng-loader "
                "(requirements/bot.txt) or apt-get install espeak-ng"
            ) from None
        return found, None
    return str(espeakng_loader.get_library_path()), str(espeakng_loader.get_data_path())


class EspeakEngine:
    """The process-wide eSpeak NG instance. Use :func:`engine` to get it."""

    def __init__(self) -> None:
        library_path, data_path = _locate_library()
        try:
            lib = ctypes.CDLL(library_path)
        except OSError as error:
            raise EspeakUnavailableError(f"cannot load {library_path}: {error}") from error
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
        lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(_EspeakVoice))
        lib.espeak_TextToPhonemes.argtypes = [
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int,
            ctypes.c_int,
        ]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        lib.espeak_ng_SetRandSeed.restype = None
        # espeak_Initialize wants the folder holding espeak-ng-data (or that folder itself).
        home = str(Path(data_path).parent).encode() if data_path else None
        sample_rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, home, _INITIALIZE_DONT_EXIT
        )
        if sample_rate <= 0:
            raise EspeakUnavailableError(f"espeak_Initialize failed ({sample_rate})")
        self._lib = lib
        self.sample_rate: int = sample_rate
        self.library_path = library_path
        self._lock = threading.Lock()
        self._resolved: dict[str, str] = {}
        self._chunks: list[bytes] = []
        self._words: list[SpokenWord] = []
        # Kept on the instance: ctypes must not free the callback while the library holds it.
        self._callback = _SynthCallback(self._on_samples)
        lib.espeak_SetSynthCallback(self._callback)

    def _on_samples(
        self,
        wav: ctypes._Pointer[ctypes.c_short],
        count: int,
        events: ctypes._Pointer[_EspeakEvent],
    ) -> int:
        if wav and count > 0:
            self._chunks.append(ctypes.string_at(wav, count * 2))
        index = 0
        while events and events[index].type != _EVENT_LIST_TERMINATED:
            event = events[index]
            if event.type == _EVENT_WORD and event.length > 0:
                start = max(0, event.text_position - 1)
                self._words.append(
                    SpokenWord(start, start + event.length, max(0, event.audio_position))
                )
            index += 1
        return 0  # 0 = go on synthesising

    def voices(self) -> list[VoiceInfo]:
        """Every voice the engine's data holds (``espeak_ListVoices``), in its order."""
        with self._lock:
            listed = self._lib.espeak_ListVoices(None)
            found: list[VoiceInfo] = []
            index = 0
            while listed[index]:
                item = listed[index].contents
                found.append(
                    VoiceInfo(
                        identifier=(item.identifier or b"").decode(),
                        name=(item.name or b"").decode(),
                        languages=_languages(item.languages),
                    )
                )
                index += 1
        return found

    def voice_for(self, name: str) -> str:
        """The name to give eSpeak for ``name``: itself when it is a voice name or file, else
        the voice that speaks that language tag best (``en-gb`` → ``gmw/en``), the variant
        (``+f2``) kept. Raises ``ValueError`` when no voice fits."""
        cached = self._resolved.get(name)
        if cached is not None:
            return cached
        base, plus, variant = name.partition("+")
        tag = base.strip().lower()
        best: tuple[int, str] | None = None
        for info in self.voices():
            if tag in (info.identifier.lower(), info.name.lower()):
                best = (-1, info.identifier)
                break
            if tag in info.languages:
                rank = info.languages.index(tag)
                if best is None or rank < best[0]:
                    best = (rank, info.identifier)
        if best is None:
            raise ValueError(f"eSpeak NG has no voice {name!r}")
        resolved = best[1] + plus + variant
        self._resolved[name] = resolved
        return resolved

    def phonemes(self, text: str, voice: str = "en-us") -> str:
        """eSpeak's phonemes for ``text`` in ``voice`` (its ASCII phoneme names, stress marks
        included; ``espeak_TextToPhonemes``), clause by clause, space-separated."""
        name = self.voice_for(voice)
        buffer = ctypes.create_string_buffer(text.encode("utf-8"))
        pointer = ctypes.c_void_p(ctypes.addressof(buffer))
        found: list[str] = []
        with self._lock:
            if self._lib.espeak_SetVoiceByName(name.encode()) != _EE_OK:
                raise ValueError(f"eSpeak NG has no voice {voice!r}")
            while pointer.value:
                clause = self._lib.espeak_TextToPhonemes(ctypes.byref(pointer), _CHARS_UTF8, 0)
                if clause:
                    found.append(clause.decode("utf-8", "replace"))
        return " ".join(found)

    def synthesize(self, text: str, voice: Voice | None = None) -> bytes:
        """Speak ``text``: 16-bit signed little-endian mono PCM at :attr:`sample_rate`.

        Blocking (run it in a worker thread from async code). Empty text gives empty audio.
        """
        return self.speak(text, voice).pcm

    def speak(self, text: str, voice: Voice | None = None) -> Speech:
        """Speak ``text``: its PCM (as :meth:`synthesize`) and where each word of ``text``
        starts in it (eSpeak's word events), in text order."""
        if not text.strip():
            return Speech(b"", ())
        wanted = (voice or Voice()).clamped()
        data = text.encode("utf-8")
        name = self.voice_for(wanted.name)
        with self._lock:
            if self._lib.espeak_SetVoiceByName(name.encode()) != _EE_OK:
                raise ValueError(f"eSpeak NG has no voice {wanted.name!r}")
            self._lib.espeak_SetParameter(_PARAM_RATE, wanted.rate_wpm, 0)
            self._lib.espeak_SetParameter(_PARAM_VOLUME, wanted.volume, 0)
            self._lib.espeak_SetParameter(_PARAM_PITCH, wanted.pitch, 0)
            self._chunks = []
            self._words = []
            # eSpeak NG adds random variation (seeded from the clock); a fixed seed makes the
            # same text, voice and settings always sound the same (reproducible tests, replay).
            self._lib.espeak_ng_SetRandSeed(_RANDOM_SEED)
            status = self._lib.espeak_Synth(
                data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None
            )
            pcm = b"".join(self._chunks)
            words = tuple(self._words)
            self._chunks, self._words = [], []
        if status != _EE_OK:
            raise RuntimeError(f"espeak_Synth failed ({status})")
        return Speech(pcm, words)


_engine: EspeakEngine | None = None
_engine_lock = threading.Lock()


def engine() -> EspeakEngine:
    """The process-wide engine, loaded on first use (or :class:`EspeakUnavailableError`)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = EspeakEngine()
            logger.info(
                "eSpeak NG loaded from %s (%d Hz)", _engine.library_path, _engine.sample_rate
            )
        return _engine
