"""A thinking pause does not end the candidate's spoken turn; a finished answer ends it fast
(issue #30, ``bot.voice.turn_end``, ``ioa.runtime.answer_end``).

Spoken answers made with several eSpeak NG voices, with pauses of 2.5-4.5 s where candidates
stop to think (mid-sentence, after a filler, after "let me think"), are played in real time
(20 ms chunks at the wire's pace, as a transport delivers them) into the bot core's own voice
pipeline (``bot.pipeline.build_pipeline`` with ``bot.audio.voice_io``: Silero VAD, the smart-turn
model, and an OpenAI-compatible recogniser served by the local protocol peer, which hears each
VAD segment as the words spoken in it, as a good hosted recogniser does). The user aggregator's
turn ends are counted: each answer must be one turn, and a finished answer's turn must end soon
after its speech. (The offline recogniser mishears the very words that tell a pause from an
end on these voices: its figures are in docs/voice.md, measured by ``bench/turn_end.py``.)
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pytest
from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import EndFrame, InputAudioRawFrame
from pipecat.workers.runner import WorkerRunner

from bot.audio import VOICE_IN_SAMPLE_RATE, host_turn_timing, voice_io
from bot.pipeline import build_pipeline
from bot.voice.espeak import Voice, engine
from bot.voice.turn_end import (
    LATE_WORDS_SECS,
    ExamTurnStopStrategy,
    late_words_wait,
    turn_strategy,
)
from ioa.runtime.answer_end import reply_wait
from tests.bot.voice.support import RecordingCore, unused_llm
from tests.support.speech_server import SpeechServer

CHUNK_MS = 20
SPEECH_END_SLACK = 0.15
"""eSpeak's samples end a little after the speech the VAD hears (its trailing quiet)."""


@dataclass(frozen=True)
class Part:
    """Words spoken, or a silence (``pause`` seconds)."""

    words: str = ""
    pause: float = 0.0


async def _pcm(parts: list[Part], voice: Voice) -> tuple[bytes, float]:
    """The answer at 16 kHz and the second its last word ends."""
    espeak = engine()
    resampler = create_file_resampler()
    pcm = bytes(VOICE_IN_SAMPLE_RATE)  # 0.5 s of silence before
    for part in parts:
        if part.words:
            spoken = await asyncio.to_thread(espeak.synthesize, part.words, voice)
            pcm += await resampler.resample(spoken, espeak.sample_rate, VOICE_IN_SAMPLE_RATE)
        else:
            pcm += bytes(int(part.pause * VOICE_IN_SAMPLE_RATE) * 2)
    return pcm, len(pcm) / (2 * VOICE_IN_SAMPLE_RATE)


@dataclass
class Run:
    stops: list[float]
    """When each turn ended, in seconds after the first sample was sent."""
    speech_end: float
    transcripts: list[str]
    strategy: ExamTurnStopStrategy | None
    unheard: list[int]
    """The durations (ms) of speech reported as heard without words."""
    settles: list[float]
    """When a turn that ended on the reply pause stayed over (``TurnSettled``), in seconds
    after the first sample was sent."""


@pytest.fixture
def peer(settings: Any) -> Any:
    """The recogniser: an OpenAI-compatible transcription peer on 127.0.0.1."""
    with SpeechServer() as server:
        settings.VIVA_STT_PROVIDER = "openai_compatible"
        settings.VIVA_STT_API_KEY = "peer-key"
        settings.VIVA_STT_BASE_URL = server.base_url
        yield server


async def _speak(
    parts: list[Part], voice: Voice, *, tail: float, stall: tuple[float, float] | None = None
) -> Run:
    """Play the answer in real time into the voice pipeline, then ``tail`` s of silence.

    ``stall``: ``(at, secs)``, the delivery stops at ``at`` s of audio for ``secs`` s, then the
    held audio arrives at once and the pace resumes (a network hiccup, or a loaded machine: the
    audio is late, not lost)."""
    pcm, speech_end = await _pcm(parts, voice)
    pcm += bytes(int(tail * VOICE_IN_SAMPLE_RATE) * 2)
    core = RecordingCore()
    io = voice_io(output=None)
    built = build_pipeline(core=core, llm=unused_llm(), io=io)
    stops: list[float] = []
    settles: list[float] = []
    t0 = 0.0
    strategy = turn_strategy(io.user_params)
    assert strategy is not None
    strategy.settlement.bind(lambda: settles.append(time.monotonic() - t0))

    @built.aggregators.user().event_handler("on_user_turn_stopped")
    async def _stopped(*_: object) -> None:
        stops.append(time.monotonic() - t0)

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(built.worker)
    running = asyncio.create_task(runner.run())
    try:
        await asyncio.wait_for(built.started.wait(), timeout=30)
        size = VOICE_IN_SAMPLE_RATE * CHUNK_MS // 1000 * 2
        t0 = time.monotonic()
        for index, start in enumerate(range(0, len(pcm), size)):
            frame = InputAudioRawFrame(
                audio=pcm[start : start + size], sample_rate=VOICE_IN_SAMPLE_RATE, num_channels=1
            )
            await built.worker.queue_frame(frame)
            # At the wire's pace: chunk n is sent n * 20 ms after the first.
            due = (index + 1) * CHUNK_MS / 1000
            if stall is not None and stall[0] <= due < stall[0] + stall[1]:
                due = stall[0] + stall[1]
            delay = t0 + due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        await built.worker.queue_frame(EndFrame())
        await asyncio.wait_for(running, timeout=60)
    finally:
        if not running.done():
            await runner.cancel("test failed")
            await asyncio.wait_for(running, timeout=10)
    transcripts = [t for t, _ in core.transcripts]
    return Run(stops, speech_end, transcripts, strategy, core.unheard, settles)


THINKING_ANSWERS = [
    pytest.param(
        [
            Part("Dijkstra's algorithm keeps a priority queue of"),
            Part(pause=3.5),
            Part("the vertices, ordered by their distance from the source."),
        ],
        Voice(name="en-us+f2", rate_wpm=150),
        id="mid-sentence-3.5s",
    ),
    pytest.param(
        [
            Part("The running time is, um,"),
            Part(pause=4.0),
            Part("O of E log V with a binary heap."),
        ],
        Voice(name="en-us", rate_wpm=165),
        id="after-a-filler-4s",
    ),
    pytest.param(
        [
            Part("Hmm. Let me think."),
            Part(pause=4.5),
            Part("It relaxes the edges of the closest vertex."),
        ],
        Voice(name="en-gb", rate_wpm=140),
        id="let-me-think-4.5s",
    ),
    pytest.param(
        [
            Part("I would model the shops as vertices and"),
            Part(pause=2.5),
            Part("the roads between them as weighted edges."),
        ],
        Voice(name="en-us+m3", rate_wpm=175),
        id="after-and-2.5s",
    ),
]


@pytest.mark.parametrize(("parts", "voice"), THINKING_ANSWERS)
def test_a_thinking_pause_inside_an_answer_does_not_end_the_turn(
    parts: list[Part], voice: Voice, peer: SpeechServer
) -> None:
    peer.script(*(part.words for part in parts if part.words))
    run = asyncio.run(_speak(parts, voice, tail=8.0))

    # One answer, one turn: it ended after the last words, never in the pause.
    assert len(run.stops) == 1, (
        run.stops,
        run.transcripts,
        run.strategy and run.strategy.decisions,
    )
    assert run.stops[0] > run.speech_end, (run.stops, run.speech_end, run.transcripts)
    assert run.strategy is not None
    assert len(run.strategy.decisions) == 1


FINISHED_ANSWERS = [
    pytest.param(
        "It keeps the unvisited vertices in a priority queue ordered by distance.",
        Voice(name="en-us+f2", rate_wpm=150),
        id="en-us+f2",
    ),
    pytest.param(
        "With negative costs I would need Bellman-Ford instead.",
        Voice(name="en-us", rate_wpm=170),
        id="en-us",
    ),
]


@pytest.mark.parametrize(("words", "voice"), FINISHED_ANSWERS)
def test_a_finished_answer_ends_the_turn_without_the_thinking_pause(
    words: str, voice: Voice, peer: SpeechServer
) -> None:
    peer.script(words)
    run = asyncio.run(_speak([Part(words)], voice, tail=9.0))

    assert len(run.stops) == 1, (
        run.stops,
        run.transcripts,
        run.strategy and run.strategy.decisions,
    )
    waited = run.stops[0] - run.speech_end
    assert run.strategy is not None
    timing = run.strategy.timing
    # The finished pause (above a pause between sentences) and the transcription's round
    # trip: never the thinking pause.
    assert waited < timing.finished_secs + 0.8 < timing.thinking_secs, (
        waited,
        run.strategy.decisions,
    )
    assert run.strategy.decisions[0].wait == timing.finished_secs


@pytest.mark.parametrize(("words", "voice"), FINISHED_ANSWERS)
def test_a_finished_answer_ends_on_the_reply_pause_and_settles_after_the_finished_pause(
    words: str, voice: Voice, peer: SpeechServer, settings: Any
) -> None:
    # Issue #30: the reply came 1.9 s after a finished answer, the 1.5-s finished pause being
    # most of it. The turn now ends on the reply pause (the examiner may answer), and it
    # stays open to the candidate's going on until the finished pause has passed. The words
    # decide here: smart-turn hears some eSpeak answers as unfinished (docs/voice.md), and
    # then the turn waits its finished pause (``reply_wait``, tests/ioa/runtime).
    settings.VIVA_VOICE_TURN_MODEL = "off"
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = "0.7"  # off by default: this host opts in
    peer.script(words)
    run = asyncio.run(_speak([Part(words)], voice, tail=6.0))

    assert run.strategy is not None
    timing = run.strategy.timing
    (decision,) = run.strategy.decisions
    assert decision.reply == timing.reply_secs, decision
    assert len(run.stops) == 1
    waited = run.stops[0] - run.speech_end
    # The VAD's own stop (0.6 s) and the transcription's round trip: well inside the pause.
    assert waited < timing.finished_secs - 0.2, (waited, decision)
    (settled,) = run.settles
    assert settled >= run.speech_end + timing.finished_secs - SPEECH_END_SLACK, (
        settled,
        run.speech_end,
    )
    assert settled < run.speech_end + timing.finished_secs + 0.5, (settled, run.speech_end)
    assert not run.strategy.settlement.unsettled


def test_the_host_has_no_reply_pause_unless_it_opts_in(settings: Any) -> None:
    # Seen in CI and in Chromium with the 0.7-s reply pause on by default: the examiner began
    # its reply in a 1-s gap between two finished sentences of one answer, over the second
    # (tests/browser/test_voice_turn_taking.py). Off by default: no turn ends before its
    # finished pause unless the host or the package asks for the reply pause.
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = None
    default = host_turn_timing()
    assert reply_wait(default, default.finished_secs) is None
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = "0.7"
    assert reply_wait(host_turn_timing(), default.finished_secs) == 0.7
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = "soon"
    with pytest.raises(ValueError, match="VIVA_VOICE_REPLY_PAUSE_SEC"):
        host_turn_timing()


def test_speech_the_recogniser_gives_no_words_for_is_reported_once(peer: SpeechServer) -> None:
    # Issue #30: a recogniser that returned empty text left the candidate with no response.
    peer.script("")
    voice = Voice(name="en-us+f2", rate_wpm=150)
    run = asyncio.run(_speak([Part("It keeps a priority queue of the vertices.")], voice, tail=7.0))

    assert run.transcripts == []
    assert len(run.unheard) == 1, run.unheard
    assert 1500 <= run.unheard[0] <= 4500, run.unheard


def test_speech_with_words_is_never_reported_unheard(peer: SpeechServer) -> None:
    peer.script("It keeps a priority queue of the vertices.")
    voice = Voice(name="en-gb", rate_wpm=150)
    run = asyncio.run(_speak([Part("It keeps a priority queue of the vertices.")], voice, tail=7.0))

    assert run.transcripts == ["It keeps a priority queue of the vertices."]
    assert run.unheard == []


def _answer_not_over_in_the_pause(run: Run) -> None:
    """The answer did not end in the pause between its sentences: any turn that ended before
    its last words ended on the reply pause, and it never stayed over (no ``TurnSettled``: a
    completion decided on it is held, then dropped when the next sentence starts, runtime
    semantics §18); the answer settles once, a finished pause after its end."""
    assert run.strategy is not None
    timing = run.strategy.timing
    assert run.stops and run.stops[-1] > run.speech_end, (run.stops, run.speech_end)
    if timing.reply_secs >= timing.finished_secs:  # no reply pause: one end, nothing to settle
        assert len(run.strategy.decisions) == 1 and not run.settles, run.strategy.decisions
        return
    for decision in run.strategy.decisions[:-1]:
        assert decision.reply is not None, run.strategy.decisions
    assert len(run.settles) == 1, (run.settles, run.stops)
    # (``speech_end`` is the end of eSpeak's samples, a little after the speech the VAD hears.)
    assert run.settles[0] >= run.speech_end + timing.finished_secs - SPEECH_END_SLACK, (
        run.settles,
        run.speech_end,
    )


REPLY_PAUSES = [pytest.param("off", id="no-reply-pause"), pytest.param("0.7", id="reply-pause")]
"""The host's default (none) and the opt-in reply pause (runtime semantics §18)."""


@pytest.mark.parametrize("reply_pause", REPLY_PAUSES)
def test_a_short_pause_between_two_sentences_does_not_end_the_answer(
    peer: SpeechServer, settings: Any, reply_pause: str
) -> None:
    # Sentences of one answer, a natural 0.9 s apart: each is a VAD segment of its own, and
    # each reads as finished. The old 1.2 s timeout held them; the finished pause must too:
    # the turn may end on the reply pause after the first, but the answer stays open.
    first = "I enjoyed the part of the course on graph algorithms the most."
    second = "Shortest paths were my favourite topic."
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = reply_pause
    peer.script(first, second)
    voice = Voice(name="en-us", rate_wpm=160)
    run = asyncio.run(_speak([Part(first), Part(pause=0.9), Part(second)], voice, tail=6.0))

    assert run.transcripts == [first, second]
    _answer_not_over_in_the_pause(run)


SENTENCE_GAP_VOICES = [
    pytest.param(Voice(name="en-gb+f4", rate_wpm=130), id="en-gb-f4-130wpm"),
    pytest.param(Voice(name="en-us+f2", rate_wpm=140), id="en-us-f2-140wpm"),
]


@pytest.mark.parametrize("voice", SENTENCE_GAP_VOICES)
def test_the_breath_between_two_sentences_never_ends_the_turn(
    voice: Voice, peer: SpeechServer, settings: Any
) -> None:
    # Issue #30, seen in CI: two sentences said in one breath-group ("... turn out to be
    # wrong. So for negative weights ...") leave the speaker's own sentence gap between them,
    # 0.42-0.45 s in these voices; the recogniser finalises each sentence. On the 0.3-s reply
    # pause the turn ended in that gap and the examiner's "Thank you." began over the second
    # sentence. The reply pause is longer than a breath: the turn ends once, after the answer.
    first = (
        "If an edge is negative, a distance that was already settled could turn out to be wrong."
    )
    second = "So for negative weights I would use Bellman-Ford instead."
    # A streaming recogniser (Deepgram's live protocol on the peer): its 0.3-s VAD stop
    # splits the answer at the gap, as in the browser.
    settings.VIVA_STT_PROVIDER = "deepgram"
    settings.VIVA_STT_BASE_URL = peer.deepgram_url
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = "0.7"  # off by default: this host opts in
    peer.script(first, second)
    run = asyncio.run(_speak([Part(f"{first} {second}")], voice, tail=6.0))

    assert run.transcripts == [first, second]
    assert run.strategy is not None
    assert [d.text for d in run.strategy.decisions] == [f"{first} {second}"], run.strategy.decisions
    assert len(run.stops) == 1 and run.stops[0] > run.speech_end, (run.stops, run.speech_end)


@pytest.mark.parametrize("reply_pause", REPLY_PAUSES)
def test_audio_that_arrives_late_does_not_end_the_answer_in_a_pause(
    peer: SpeechServer, settings: Any, reply_pause: str
) -> None:
    # The same two sentences, 0.9 s apart, but the audio stalls for 1.4 s during the pause and
    # then arrives at once (seen in CI on a loaded 2-core machine: the bot heard the second
    # sentence start 0.5 s late). The turn's silence is counted on the audio the bot has heard,
    # not on the wall clock: the second sentence is in the held audio, so the turn goes on.
    first = "I enjoyed the part of the course on graph algorithms the most."
    second = "Shortest paths were my favourite topic."
    settings.VIVA_VOICE_REPLY_PAUSE_SEC = reply_pause
    peer.script(first, second)
    voice = Voice(name="en-us", rate_wpm=160)
    _, first_end = asyncio.run(_pcm([Part(first)], voice))
    stall = (first_end + 0.75, 1.4)  # after the VAD's stop (0.6 s) and the transcript
    run = asyncio.run(
        _speak([Part(first), Part(pause=0.9), Part(second)], voice, tail=6.0, stall=stall)
    )

    assert run.transcripts == [first, second]
    _answer_not_over_in_the_pause(run)


def test_a_slow_recogniser_does_not_end_the_turn_on_the_previous_sentence(
    peer: SpeechServer,
) -> None:
    # The same two sentences, 0.9 s apart, heard by a recogniser that answers 2.5 s after each
    # stretch of speech (seen in CI on a loaded 2-core machine: 1.7 s). The first sentence's
    # words arrive while the second is spoken; the turn must wait for the second's words, not
    # end on the first's when the second's silence has passed (it did: the second's words then
    # started a turn of their own, which interrupted the examiner's next question and ended
    # by the watchdog 9 s later, and the examiner fell silent at the next node).
    first = "I enjoyed the part of the course on graph algorithms the most."
    second = "Shortest paths were my favourite topic, because the ideas are simple."
    peer.script(first, second)
    peer.transcription_delay = 2.5
    voice = Voice(name="en-us", rate_wpm=160)
    run = asyncio.run(_speak([Part(first), Part(pause=0.9), Part(second)], voice, tail=14.0))

    assert run.transcripts == [first, second]
    assert run.strategy is not None
    assert [d.text for d in run.strategy.decisions] == [f"{first} {second}"]
    assert len(run.stops) == 1, (run.stops, run.speech_end)
    # It ended once the words came (2.5 s after the VAD's stop), not by a watchdog.
    assert run.speech_end + 2.5 < run.stops[0] < run.speech_end + 6.0, (run.stops, run.speech_end)


def test_a_short_sound_after_the_answer_is_not_waited_for(peer: SpeechServer) -> None:
    # A finished answer, then a short "hm" the recogniser gives no words for: the turn ends
    # by the finished pause after it, not LATE_WORDS_SECS later waiting for its words.
    answer = "It settles the closest vertex and then relaxes each of its edges."
    peer.script(answer)
    voice = Voice(name="en-us", rate_wpm=160)
    run = asyncio.run(_speak([Part(answer), Part(pause=0.8), Part("Hm.")], voice, tail=8.0))

    assert run.transcripts == [answer]
    assert run.strategy is not None
    assert [d.text for d in run.strategy.decisions] == [answer]
    assert len(run.stops) == 1, (run.stops, run.speech_end)
    assert run.stops[0] < run.speech_end + 2.9, (run.stops, run.speech_end)


def test_words_the_recogniser_never_gives_are_waited_for_no_longer_than_they_need(
    peer: SpeechServer,
) -> None:
    # A finished answer, then "yes, that is it" said away from the microphone: 1.3 s of speech
    # the recogniser gives no words for. The turn waited the whole LATE_WORDS_SECS (3 s) past
    # the finished pause for them, and the examiner's reply came 4.5 s after the speech (seen
    # in CI with a 0.5-s "hm" too). The wait grows with the stretch instead.
    answer = "It settles the closest vertex and then relaxes each of its edges."
    sound = "Yes, that is it."
    peer.script(answer)
    voice = Voice(name="en-us", rate_wpm=160)
    _, sound_end = asyncio.run(_pcm([Part(sound)], voice))
    sound_secs = sound_end - 0.5  # _pcm puts 0.5 s of silence before the words
    run = asyncio.run(_speak([Part(answer), Part(pause=0.8), Part(sound)], voice, tail=8.0))

    assert run.transcripts == [answer]
    assert run.strategy is not None
    assert [d.text for d in run.strategy.decisions] == [answer]
    assert len(run.stops) == 1, (run.stops, run.speech_end)
    waited = run.stops[0] - run.speech_end
    bound = run.strategy.timing.finished_secs + late_words_wait(sound_secs) + 0.4
    assert waited < bound < run.strategy.timing.finished_secs + LATE_WORDS_SECS, (waited, bound)
