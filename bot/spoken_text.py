"""What the candidate heard of an examiner utterance cut short by a barge-in (issue 15).

The examiner's audio reaches the speech reporter (``bot.pipeline.SpeechReporter``) after the
output transport has played it, so the audio seen there since the utterance's
``TTSStartedFrame`` is what the candidate heard. :class:`HeardSpeech` adds it up and maps it to
text:

* **Word timing** (the offline eSpeak TTS): before each stretch of audio the TTS service sends a
  :class:`SpokenWordsFrame` with the text it is about to play and, for each word, where the word
  ends in that text and when it starts in the audio (eSpeak's word events). A word counts as
  spoken once its audio has started to play; the spoken text is the utterance's text up to the
  end of the last such word (the whole stretch once its last word has started).
* **Without word timing** (a hosted TTS that gives none): the text of each stretch is known once
  its audio has played in full (Pipecat's ``TTSTextFrame`` follows its audio through the output
  transport), so the spoken text is the stretches played to the end: never more than was heard.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipecat.frames.frames import DataFrame, OutputAudioRawFrame


@dataclass(frozen=True, slots=True)
class WordMark:
    """One word of a :class:`SpokenWordsFrame`: ``end`` is the index in the frame's text just
    past the word, ``start_secs`` when the word's audio starts (from the stretch's start)."""

    end: int
    start_secs: float


@dataclass
class SpokenWordsFrame(DataFrame):
    """The text of the audio that follows (one TTS request) and its word timing."""

    text: str = ""
    words: tuple[WordMark, ...] = ()


@dataclass(frozen=True, slots=True)
class Interruption:
    """A barge-in cut an utterance: ``at`` (wall-clock seconds) the audio stopped, after
    ``played_secs`` of it, with ``spoken_text`` heard."""

    at: float
    played_secs: float
    spoken_text: str


@dataclass
class _Stretch:
    """One TTS request's text within an utterance, from ``offset_secs`` of its audio."""

    offset_secs: float
    text: str
    words: tuple[WordMark, ...]


@dataclass
class HeardSpeech:
    """The audio of one utterance played so far, and the text it carried (module docstring)."""

    played_secs: float = 0.0
    _stretches: list[_Stretch] = field(default_factory=list)
    _played_texts: list[str] = field(default_factory=list)

    def audio(self, frame: OutputAudioRawFrame) -> None:
        """``frame`` was played."""
        rate = frame.sample_rate or 1
        self.played_secs += len(frame.audio) / (2 * max(1, frame.num_channels) * rate)

    def words(self, frame: SpokenWordsFrame) -> None:
        """The audio from now on carries ``frame.text`` with this word timing."""
        self._stretches.append(_Stretch(self.played_secs, frame.text, frame.words))

    def text_played(self, text: str) -> None:
        """A stretch of audio carrying ``text`` has played to its end (``TTSTextFrame``)."""
        if text.strip():
            self._played_texts.append(text.strip())

    def spoken_text(self) -> str:
        """The text heard so far (module docstring)."""
        if not self._stretches:
            return " ".join(self._played_texts)
        parts: list[str] = []
        for stretch in self._stretches:
            if not stretch.words:
                continue
            started = [
                mark
                for mark in stretch.words
                if stretch.offset_secs + mark.start_secs < self.played_secs
            ]
            if not started:
                break
            if len(started) == len(stretch.words):
                parts.append(stretch.text.strip())
                continue
            parts.append(stretch.text[: started[-1].end].strip())
            break
        return " ".join(part for part in parts if part)
