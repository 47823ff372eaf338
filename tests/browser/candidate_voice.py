"""A candidate who speaks when spoken to: a microphone the test plays into, answer by answer.

Chromium's fake microphone (``--use-file-for-fake-audio-capture``) plays one file on its own
clock: answers drift against the examiner's turns, which vary with the machine's load. A person
waits for the question and then answers. :data:`MICROPHONE_SCRIPT` gives the exam room a
microphone that is a Web Audio stream (a ``MediaStreamAudioDestinationNode``, silent until
spoken into), so the test can say each answer when the examiner has finished: the audio goes
through the exam room's own WebRTC connection to the bot, as a microphone's does.

A microphone never stops: between words it delivers its own noise, and the browser sends a
packet every 20 ms. A Web Audio stream with nothing playing into it delivers nothing in Chromium
(crbug.com/1262796), and the exam room's connection then sent no packet in a pause; the bot's
WebRTC stack (aiortc) holds the last ~80-100 ms it received until the next packet comes, so the
end of every answer reached the recogniser only after the pause, cut off ("let me think" heard
as "let me sing", issue #30). The microphone here plays a noise floor
(:data:`NOISE_FLOOR_DBFS`, a quiet room through a laptop microphone) from the moment it is
opened, under the speech, as a real one does.

An answer is a list of :class:`Fragment`: words spoken in one eSpeak NG voice, then a pause (a
candidate thinking mid-sentence, after "um", after "let me think"). :class:`SpokenScript` is
what the candidate has said so far, for the speech peer: a recogniser hears the words of the
audio it was given, so the peer's transcription of an utterance is the words spoken since the
last one (:meth:`SpokenScript.heard`), and its interim results the fragment being spoken.
"""

from __future__ import annotations

import base64
import threading
import time
from dataclasses import dataclass, field

from playwright.sync_api import Page

from bot.voice.espeak import Voice, engine

NOISE_FLOOR_DBFS = -60.0
"""The microphone's noise between words, RMS in dB of full scale: a quiet room through a laptop
microphone (-50 to -65 dBFS); the answers are spoken at about -22 dBFS."""

MICROPHONE_SCRIPT = """
(() => {
  const NOISE_RMS = %NOISE_RMS%;
  let context = null;
  let destination = null;
  const peers = [];
  const NativePeerConnection = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends NativePeerConnection {
    constructor(...args) {
      super(...args);
      peers.push(this);
    }
  };
  window.__candidatePeers = peers;
  const open = () => {
    if (!context) {
      context = new AudioContext({ sampleRate: 48000 });
      destination = context.createMediaStreamDestination();
      // The microphone's own noise, looped: uniform white noise at NOISE_RMS.
      const noise = context.createBuffer(1, context.sampleRate * 2, context.sampleRate);
      const samples = noise.getChannelData(0);
      const peak = NOISE_RMS * Math.sqrt(3);
      for (let i = 0; i < samples.length; i += 1) samples[i] = (Math.random() * 2 - 1) * peak;
      const floor = context.createBufferSource();
      floor.buffer = noise;
      floor.loop = true;
      floor.connect(destination);
      floor.start();
      context.resume();
    }
    return destination;
  };
  const devices = navigator.mediaDevices;
  const original = devices.getUserMedia.bind(devices);
  devices.getUserMedia = async (constraints) => {
    if (constraints && constraints.audio && !constraints.video) {
      const stream = open().stream;
      return new MediaStream(stream.getAudioTracks().map((track) => track.clone()));
    }
    return original(constraints);
  };
  window.__candidateSay = (b64, rate) => new Promise((resolve) => {
    open();
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const samples = new Int16Array(bytes.buffer);
    const buffer = context.createBuffer(1, samples.length, rate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < samples.length; i += 1) channel[i] = samples[i] / 32768;
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(destination);
    source.onended = () => resolve(context.currentTime);
    context.resume().then(() => source.start());
  });
})();
"""
MICROPHONE_SCRIPT = MICROPHONE_SCRIPT.replace("%NOISE_RMS%", f"{10 ** (NOISE_FLOOR_DBFS / 20):.6f}")
"""Installed with ``BrowserContext.add_init_script`` before the exam room loads; it also keeps
the page's peer connections in ``window.__candidatePeers`` (for their statistics)."""


@dataclass(frozen=True)
class Fragment:
    """Words said in one breath, then ``pause_secs`` of silence (0: the answer's end)."""

    text: str
    pause_secs: float = 0.0


@dataclass(frozen=True)
class Answer:
    """One spoken answer: its fragments, in ``voice``."""

    fragments: tuple[Fragment, ...]
    voice: Voice

    @property
    def text(self) -> str:
        return " ".join(fragment.text for fragment in self.fragments)


@dataclass
class Said:
    """One fragment the candidate said: when (wall clock, seconds) and how long."""

    text: str
    started: float
    ended: float | None = None


@dataclass
class SpokenScript:
    """What the candidate has said, for the speech peer (module docstring). Thread-safe: the
    peer reads it from its own thread while the test speaks."""

    said: list[Said] = field(default_factory=list)
    _heard_upto: int = 0
    _words_heard: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, text: str) -> Said:
        with self._lock:
            fragment = Said(text, time.time())
            self.said.append(fragment)
            return fragment

    def end(self, fragment: Said) -> None:
        with self._lock:
            fragment.ended = time.time()

    def heard(self, pcm16k: bytes = b"") -> str:
        """The words said since the last utterance the recogniser finished: every ended
        fragment not yet heard, and of one still being spoken the words said so far (by time)."""
        with self._lock:
            words: list[str] = []
            for index in range(self._heard_upto, len(self.said)):
                fragment = self.said[index]
                all_words = fragment.text.split()
                first = self._words_heard if index == self._heard_upto else 0
                if fragment.ended is not None:
                    words += all_words[first:]
                    self._heard_upto, self._words_heard = index + 1, 0
                    continue
                spoken = time.time() - fragment.started
                upto = min(len(all_words), int(spoken * 2.5))
                words += all_words[first:upto]
                self._heard_upto, self._words_heard = index, max(first, upto)
            return " ".join(words)

    def upcoming(self) -> str:
        """The fragment being spoken (the peer's interim results grow through it)."""
        with self._lock:
            current = self.said[-1] if self.said else None
            return current.text if current is not None and current.ended is None else ""


def say(page: Page, script: SpokenScript, answer: Answer) -> list[Said]:
    """Speak ``answer`` into the page's microphone, fragment by fragment, with its pauses;
    returns the fragments as said (wall-clock times)."""
    espeak = engine()
    spoken: list[Said] = []
    for fragment in answer.fragments:
        pcm = espeak.synthesize(fragment.text, answer.voice)
        said = script.start(fragment.text)
        page.evaluate(
            "([b64, rate]) => window.__candidateSay(b64, rate)",
            [base64.b64encode(pcm).decode("ascii"), espeak.sample_rate],
        )
        script.end(said)
        spoken.append(said)
        if fragment.pause_secs:
            time.sleep(fragment.pause_secs)
    return spoken
