"""Live turn-taking in voice mode (issue 15), in Chromium, on the embedded default: daphne with
the examiner bot inline (SmallWebRTC), the offline examiner, PocketSphinx and eSpeak NG.

The candidate's voice is a WAV made at test time with eSpeak NG and played by Chromium's fake
microphone (``--use-file-for-fake-audio-capture``). Where speech is in that file is measured
from the file itself (``tests/browser/microphone.py``: an energy threshold, independent of the
bot's VAD), and the stored events are checked against it. The file's clock starts when the exam
room opens the microphone, which the test does not control to the second, so the stored timeline
is anchored on the first speech onset the bot recorded (``candidate_activity``); every later
time is checked against the audio from there.

* A long answer (``%noloop``: the file plays once). After a silence that leaves the examiner time
  to ask the opening question, the candidate answers for about 20 s in sentences separated by
  0.9-s pauses (longer than the VAD's 0.6 s, so each sentence is a VAD segment; shorter than the
  finished pause of 1.5 s, counted on the audio the bot has heard). The node's silence window is
  20 s, so a silence clock running from the end of the question would fire in the middle of the
  answer. No examiner utterance starts while
  the candidate speaks, no silence recovery or skip happens during the answer, and each
  transcript's start and end are where its sentence is in the audio.
* Barge-in (the file loops): 2.5 s of speech every 5 s, so the candidate starts speaking while
  the examiner asks the opening question. The examiner stops; its utterance is stored as
  interrupted, when its audio stopped, and with the words eSpeak had spoken by then.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from accounts.services import invitation_create
from bot.voice.espeak import Voice, engine
from publishing.services import version_publish
from sessions.models import ExamSession, SessionEvent, Sitting
from tests.browser.exam_journey import Exam, start_voice_exam
from tests.browser.helpers import eventually, fake_microphone_page
from tests.browser.microphone import Timeline, microphone_wav
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXAMINER_VOICE = Voice(name="en-us", rate_wpm=160)
"""The offline TTS's default voice and rate (``bot.voice.offline_tts``)."""
SILENCE_AFTER_SEC = 20
"""The warm-up's voice silence window in these tests."""
LEAD_SECS = 20.0
"""Silence before the long answer: the bot connects, the exam is started and the opening
question (about 6 s of speech) is asked well within it."""
PAUSE_SECS = 0.9
ANSWER = [
    "I enjoyed the part of the course on graph algorithms the most.",
    "Shortest paths were my favourite topic, because the ideas are simple.",
    "Dijkstra's algorithm keeps a tentative distance for every vertex.",
    "It settles the closest vertex and then relaxes each of its edges.",
]
BARGE_IN = "I think the answer is one hundred."
TOLERANCE_MS = 450
"""Silero decides in 32-ms windows: a start is confirmed after ``start_secs`` (0.2 s) of speech
and a stop after ``stop_secs`` (0.6 s) of silence, both subtracted back (``bot.activity``), so
the VAD's times are within about 0.15 s of the audio's (``tests/bot/voice/test_speech_timing.py``
measures +0.12 s and +0.05 s). Opus frames (20 ms), the WebRTC jitter buffer (up to ~0.2 s under
load) and the energy threshold's edges on eSpeak's soft first and last phonemes add the rest."""
PROMPT = "Take your time"
RECORDING_LAG_MS = 1000
AUDIO_CHUNK_MS = 20
"""The examiner's audio reaches the transport in 20-ms chunks (``bot.audio``)."""
"""How late an event may be recorded after what it reports (the bot's decision queue and the
journal's write on a loaded 2-core machine)."""


@pytest.fixture(scope="module")
def voice_server(django_db_setup: None) -> Iterator[str]:
    """daphne with the bots inline: SmallWebRTC's peer lives in the web process."""
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_BOT_RUNNER="inline") as address:
        yield f"http://{address}"


@pytest.fixture
def exam() -> Exam:
    """The CS201 exam; its warm-up has a 20-s voice silence window."""
    document = example_document()
    for node in document["nodes"]:
        if node["nodeId"] == "warmup":
            node["recoveryHandlers"] = [
                {
                    "scenario": "silence",
                    "afterSec": SILENCE_AFTER_SEC,
                    "maxAttempts": 2,
                    "action": "gentle_reprompt",
                    "escalation": "skip_node",
                }
            ]
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=document)
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(version=version, title="CS201 orals", created_by=author)
    candidate = CandidateFactory(display_name="Ada Lovelace")
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    invite = invitation_create(
        candidate=candidate, created_by=author, next_path=f"/exam/{session.pk}/"
    )
    return Exam(session=session, invitation_path=invite.path)


def voice_page(browser: Any, server: str, wav: str, name: str) -> Iterator[Page]:
    with fake_microphone_page(browser, wav, server, f"test_voice_turn_taking__{name}") as page:
        yield page


@dataclass(frozen=True)
class Event:
    seq: int
    type: str
    ms: int
    """When it was recorded, in ms since the session opened (``bot_ready``)."""
    payload: dict[str, Any]


def stored(exam: Exam) -> list[Event]:
    rows = list(SessionEvent.objects.filter(session=exam.session).order_by("seq"))
    opened: datetime | None = next((r.timestamp for r in rows if r.type == "bot_ready"), None)
    if opened is None:
        return []
    return [
        Event(r.seq, r.type, round((r.timestamp - opened).total_seconds() * 1000), dict(r.payload))
        for r in rows
    ]


def of(events: list[Event], type_: str, **fields: Any) -> list[Event]:
    return [
        e
        for e in events
        if e.type == type_ and all(e.payload.get(k) == v for k, v in fields.items())
    ]


def speech_onsets(events: list[Event]) -> list[int]:
    return [
        e.payload["atMs"]
        for e in of(events, "candidate_activity", activity="speaking", state="started")
        if e.payload.get("atMs") is not None
    ]


def summary(events: list[Event]) -> str:
    lines = []
    for e in events:
        if e.type in {"heartbeat", "usage_reported"}:
            continue
        detail = {k: v for k, v in e.payload.items() if k not in {"type"}}
        lines.append(f"{e.ms:>7} {e.type} {str(detail)[:160]}")
    return "\n".join(lines)


@pytest.fixture
def long_answer(tmp_path: Path) -> Timeline:
    parts: list[str | float] = [LEAD_SECS]
    for sentence in ANSWER:
        parts += [sentence, PAUSE_SECS]
    parts.append(30.0)
    return microphone_wav(tmp_path / "long-answer.wav", parts)


@pytest.fixture
def long_answer_page(browser: Any, voice_server: str, long_answer: Timeline) -> Iterator[Page]:
    yield from voice_page(browser, voice_server, f"{long_answer.path}%noloop", "long_answer")


@pytest.mark.timeout(180)
def test_a_long_spoken_answer_is_heard_out_and_stored_where_it_is_in_the_audio(
    long_answer_page: Page, exam: Exam, long_answer: Timeline
) -> None:
    answer = long_answer.regions
    answer_secs = answer[-1][1] - answer[0][0]
    assert answer_secs >= 15 and len(answer) == len(ANSWER), answer
    start_voice_exam(long_answer_page, exam)

    def answered() -> list[Event] | None:
        events = stored(exam)
        onsets = speech_onsets(events)
        if not onsets:
            return None
        end_ms = onsets[0] + round((answer[-1][1] - answer[0][0]) * 1000)
        replies = [e for e in of(events, "examiner_utterance_started") if e.ms > end_ms]
        return events if replies else None

    events = eventually(answered, 120.0)
    assert events, f"no examiner reply after the answer:\n{summary(stored(exam))}"
    print(summary(events))
    # The answer came after the opening question had been spoken in full.
    (opening,) = of(events, "examiner_utterance_final")[:1]
    onset = speech_onsets(events)[0]
    assert opening.ms <= onset, "the candidate spoke over the opening question: timeline too short"

    def at(secs: float) -> int:
        """A point of the audio file in session ms (anchored on the first onset)."""
        return onset + round((secs - answer[0][0]) * 1000)

    answer_start, answer_end = at(answer[0][0]), at(answer[-1][1])
    # Voice activity: one start and one stop per sentence, where the sentence is in the audio.
    activity = of(events, "candidate_activity", activity="speaking")
    starts = [e.payload["atMs"] for e in activity if e.payload["state"] == "started"]
    stops = [e.payload["atMs"] for e in activity if e.payload["state"] == "stopped"]
    assert len(starts) == len(answer), (starts, answer)
    for (begin, end), started, stopped in zip(answer, starts, stops, strict=False):
        assert abs(started - at(begin)) <= TOLERANCE_MS, (started, at(begin))
        assert abs(stopped - at(end)) <= TOLERANCE_MS, (stopped, at(end))
    # Transcripts: each sentence's start and end are the audio's, not the decoder's.
    heard = of(events, "transcript_final", speaker="candidate")
    assert len(heard) >= len(answer) - 1, [t.payload["text"] for t in heard]
    for turn in heard:
        begin, end = turn.payload["startTimeMs"], turn.payload["endTimeMs"]
        match = min(answer, key=lambda region: abs(at(region[0]) - begin))
        assert abs(begin - at(match[0])) <= TOLERANCE_MS, (turn.payload, match)
        assert abs(end - at(match[1])) <= TOLERANCE_MS, (turn.payload, match)
        assert turn.ms >= end  # stored after the speech ended, with the speech's own times
    # Nothing was said over the candidate, no silence recovery, no skip during the answer.
    during = [e for e in events if answer_start <= e.ms <= answer_end + TOLERANCE_MS]
    assert not of(during, "examiner_utterance_started"), summary(during)
    assert not of(during, "recovery_started"), summary(during)
    assert not [e for e in of(events, "examiner_utterance_final") if PROMPT in e.payload["text"]]
    assert not [
        e for e in of(events, "recovery_resolved") if e.payload["resolution"] == "skipped_to_next"
    ]
    # The examiner's reply came after the answer had ended.
    reply = next(e for e in of(events, "examiner_utterance_started") if e.ms > answer_end)
    # A hesitation before the answer is measured from the end of the question's audio.
    for hesitation in of(events, "hesitation_detected", context="after_question"):
        expected = heard[0].payload["startTimeMs"] - opening.ms
        assert abs(hesitation.payload["durationMs"] - expected) <= TOLERANCE_MS, hesitation
    errors = [abs(a - at(r[0])) for a, r in zip(starts, answer, strict=False)]
    errors += [abs(a - at(r[1])) for a, r in zip(stops, answer, strict=False)]
    print(
        f"answer {answer_secs:.1f} s in {len(answer)} sentences; VAD vs audio: max "
        f"{max(errors)} ms; end of speech -> examiner audio {reply.ms - answer_end} ms; the "
        f"answer began {(onset - opening.ms) / 1000:.1f} s after the question ended"
    )


BARGE_IN_SILENCE_SECS = 2.5


@pytest.fixture
def barge_in(tmp_path: Path) -> Timeline:
    return microphone_wav(tmp_path / "barge-in.wav", [BARGE_IN_SILENCE_SECS, BARGE_IN])


@pytest.fixture
def barge_in_page(browser: Any, voice_server: str, barge_in: Timeline) -> Iterator[Page]:
    yield from voice_page(browser, voice_server, str(barge_in.path), "barge_in")  # looped


def heard_prefixes(text: str, played_ms: int) -> set[str]:
    """What eSpeak had spoken of ``text`` (the examiner's voice) after ``played_ms`` of audio:
    up to the last word whose audio had started (``bot.spoken_text``), give or take the 20-ms
    audio chunk the cut fell in."""
    words = engine().speak(text, EXAMINER_VOICE).words
    prefixes = set()
    for ms in (played_ms - 20, played_ms, played_ms + 20):
        started = [word for word in words if word.audio_ms < ms]
        prefixes.add(text[: started[-1].end].strip() if started else "")
    return prefixes


@pytest.mark.timeout(180)
def test_speaking_over_the_examiner_stops_it_and_stores_what_was_heard(
    barge_in_page: Page, exam: Exam, barge_in: Timeline
) -> None:
    period_ms = round(barge_in.secs * 1000)
    assert len(barge_in.regions) == 1, barge_in.regions
    start_voice_exam(barge_in_page, exam)

    def cut() -> list[Event] | None:
        events = stored(exam)
        return events if of(events, "examiner_utterance_final", interrupted=True) else None

    events = eventually(cut, 90.0)
    assert events, f"no examiner utterance was cut short:\n{summary(stored(exam))}"
    print(summary(events))
    final = of(events, "examiner_utterance_final", interrupted=True)[0]
    text, spoken = final.payload["text"], final.payload["spokenText"]
    (started,) = of(events, "examiner_utterance_started", utteranceId=final.payload["utteranceId"])
    # Cut short: less audio than the whole utterance, and only its beginning was heard. Where
    # in the utterance the looped speech lands is not under the test's control (it may start
    # in the utterance's last second), so "less" is by more than the audio's 20-ms chunks.
    whole_ms = round(
        len(engine().synthesize(text, EXAMINER_VOICE)) / 2 / engine().sample_rate * 1000
    )
    assert final.payload["durationMs"] < whole_ms - 2 * AUDIO_CHUNK_MS, (final.payload, whole_ms)
    assert text.startswith(spoken) and len(spoken) < len(text), final.payload
    # The text heard is what eSpeak had spoken when the audio stopped.
    assert spoken in heard_prefixes(text, final.payload["durationMs"]), final.payload
    # When: the audio began (atMs: its first audio frame left the transport, whenever the
    # controller recorded that) and stopped durationMs later...
    began, stopped_at = started.payload["atMs"], final.payload["interruptedAtMs"]
    assert -AUDIO_CHUNK_MS <= started.ms - began <= RECORDING_LAG_MS, started
    assert abs(stopped_at - (began + final.payload["durationMs"])) <= TOLERANCE_MS
    # ...shortly after the candidate started speaking over it (VAD start, then the interruption).
    onsets = speech_onsets(events)
    over = [at for at in onsets if began - TOLERANCE_MS < at <= stopped_at]
    assert over and stopped_at - over[-1] <= 1500, (onsets, started.ms, stopped_at)
    # The candidate's speech is where the looped file has it: one onset per loop.
    for onset in onsets:
        phase = (onset - onsets[0]) % period_ms
        assert min(phase, period_ms - phase) <= TOLERANCE_MS, (onsets, period_ms)
    print(
        f"cut after {final.payload['durationMs']} ms of {whole_ms} ms; heard {spoken!r}; "
        f"speech onset -> examiner stopped {stopped_at - over[-1]} ms"
    )
