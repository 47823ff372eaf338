"""A recogniser outage pauses the exam and never ends it (issue #30).

Seen before: a recogniser down for ~12 s flapped the exam paused/resumed three times in 8 s and
then ended it as a technical failure, while the banner told the candidate to resume.

The whole bot core runs a session (``bot.runners.run_bot``, the offline examiner); the recogniser
is OpenAI's transcription endpoint served by the local peer, which refuses every request for
20 s (HTTP 503). The candidate keeps talking through the outage, every 4 s, as a person who
does not know the recogniser is down would. The exam must pause for it (clocks stopped, a
``system_error`` on record), never end, not flap with every refused segment, and carry on
hearing the candidate once the recogniser is back.

An outage that outlasts ``VIVA_SPEECH_FALLBACK_SECONDS`` (the recogniser refuses every request
for the rest of the exam) hands the listening to the offline recogniser: the exam resumes and
the candidate is heard again, by PocketSphinx, with a message saying so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.audio import VOICE_IN_SAMPLE_RATE, read_wav
from ioa.events.envelope import parse_timestamp
from tests.bot.conftest import Watcher
from tests.bot.voice.support import ANSWER, spoken_wav
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone, voice_exam_under_way
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE_SECONDS = 20.0
TALK_SECONDS = 32.0


async def _talk(microphone: Microphone, pcm: bytes, seconds: float) -> None:
    """Say ``pcm`` every 4 s for ``seconds``, at the wire's pace."""
    period = bytes(int(4 * VOICE_IN_SAMPLE_RATE) * 2)
    clip = (pcm + period)[: len(period)]
    await microphone.speak(clip * int(seconds / 4), VOICE_IN_SAMPLE_RATE)


def _outage(
    exam_session: Any,
    bot_settings: Any,
    tmp_path: Path,
    *,
    outage: float,
    fallback: float,
    endpoint: str = "transcriptions",
    answers: int | None = None,
) -> tuple[Watcher, int]:
    """A voice exam whose recogniser (``endpoint`` ``speech``: whose voice) on the local peer
    refuses every request for ``outage`` seconds once the exam has started, the candidate
    talking through it (``answers``: answering that many times, then waiting for the examiner
    as a candidate does); the events stored and how many requests were refused."""
    bot_settings.VIVA_BOT_FAULT_RETRY_SECONDS = 2.0
    bot_settings.VIVA_SPEECH_FALLBACK_SECONDS = fallback
    watcher = Watcher()
    microphone = Microphone()
    loudspeaker = Loudspeaker()
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
        peer.script(*[ANSWER] * 20)

        async def main() -> None:
            watcher.bind()
            pcm, _ = read_wav(await spoken_wav(tmp_path / "answer.wav", ANSWER))
            async with voice_exam_under_way(exam_session.pk, watcher, microphone, loudspeaker):
                peer.fail_for(endpoint, outage)
                if answers is None:
                    await _talk(microphone, pcm, TALK_SECONDS)
                else:
                    await _talk(microphone, pcm, 4 * answers)
                    await asyncio.sleep(TALK_SECONDS - 4 * answers)
                await asyncio.sleep(3)

        asyncio.run(asyncio.wait_for(main(), 120))
        return watcher, len(peer.refused)


def test_a_recogniser_outage_pauses_the_exam_without_ending_or_flapping_it(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    # The pause alone (the fallback to the offline recogniser: the next test).
    watcher, refused = _outage(
        exam_session, bot_settings, tmp_path, outage=OUTAGE_SECONDS, fallback=0
    )

    assert refused >= 3, "the outage was not met"
    faults = [e["payload"] for e in watcher.of("system_error")]
    assert faults and {f["code"] for f in faults} == {"stt_fault"}, faults
    # The exam never ended for an outage shorter than the limit.
    assert watcher.of("exam_completed") == []
    states = [e["payload"] for e in watcher.of("exam_state_changed")]
    pauses = [s for s in states if s["toState"] == "paused"]
    assert pauses and {s["reason"] for s in pauses} == {"technical_fault"}, states
    # No flapping: fewer pauses than refused segments (the back-off holds the pause).
    assert len(pauses) < refused, (len(pauses), refused)
    assert len(pauses) <= 4, states
    # Back after the outage: in progress, and the candidate heard again.
    assert states[-1]["toState"] == "in_progress", states
    last_resume = max(e["seq"] for e in watcher.of("exam_state_changed"))
    heard_after = [
        e
        for e in watcher.of("transcript_final")
        if e["payload"]["speaker"] == "candidate" and e["seq"] > last_resume
    ]
    assert heard_after, "; ".join(
        str(x)
        for x in [
            (e["seq"], e["type"], e["payload"].get("toState") or e["payload"].get("text"))
            for e in watcher.events
            if e["type"] in ("exam_state_changed", "transcript_final", "system_error")
        ]
    )


FALLBACK_SECONDS = 6.0


def test_a_recogniser_down_for_good_is_replaced_by_the_offline_one(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    watcher, refused = _outage(
        exam_session, bot_settings, tmp_path, outage=600, fallback=FALLBACK_SECONDS
    )

    assert refused >= 2, "the outage was not met"
    errors = [e for e in watcher.events if e["type"] == "system_error"]
    codes = [e["payload"]["code"] for e in errors]
    assert codes.count("stt_fallback") == 1, codes
    assert set(codes) == {"stt_fault", "stt_fallback"}, codes
    (switched,) = [e for e in errors if e["payload"]["code"] == "stt_fallback"]
    assert switched["payload"]["severity"] == "warning"
    assert switched["payload"]["details"]["provider"] == "pocketsphinx"
    assert "simpler one is listening" in switched["payload"]["userMessage"]
    # The exam carried on: resumed after the switch, never ended, and the candidate was heard
    # again (by the offline recogniser) after it.
    assert watcher.of("exam_completed") == []
    states = [e for e in watcher.of("exam_state_changed") if e["seq"] > switched["seq"]]
    assert states and states[0]["payload"]["toState"] == "in_progress", states
    heard_after = [
        e
        for e in watcher.of("transcript_final")
        if e["payload"]["speaker"] == "candidate" and e["seq"] > switched["seq"]
    ]
    assert heard_after, [(e["seq"], e["type"]) for e in watcher.events[-30:]]
    # The switch came once the outage had lasted the configured time, not before.
    first_fault = next(e for e in errors if e["payload"]["code"] == "stt_fault")
    waited = parse_timestamp(switched["timestamp"]) - parse_timestamp(first_fault["timestamp"])
    assert waited.total_seconds() >= FALLBACK_SECONDS - 0.5, waited


def test_a_voice_down_for_good_is_replaced_by_the_offline_one(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    """The examiner's voice (OpenAI's speech endpoint on the peer) fails for the rest of the
    exam once the opening was heard; the candidate answers and waits. The examiner's reply
    cannot be spoken: seen before, it was logged as spoken all the same and the exam went on
    with the candidate hearing nothing. Now it is a fault of the voice (the exam pauses),
    and after the fallback time eSpeak NG speaks, and the exam goes on."""
    watcher, refused = _outage(
        exam_session,
        bot_settings,
        tmp_path,
        outage=600,
        fallback=FALLBACK_SECONDS,
        endpoint="speech",
        answers=1,
    )

    assert refused >= 1, "the outage was not met"
    errors = [e for e in watcher.events if e["type"] == "system_error"]
    codes = [e["payload"]["code"] for e in errors]
    assert codes.count("tts_fallback") == 1 and set(codes) == {"tts_fault", "tts_fallback"}, codes
    (switched,) = [e for e in errors if e["payload"]["code"] == "tts_fallback"]
    assert switched["payload"]["details"]["provider"] == "espeak-ng"
    assert "simpler voice" in switched["payload"]["userMessage"]
    assert watcher.of("exam_completed") == []
    # After the switch the examiner is heard again: its words played as audio by eSpeak.
    spoken_after = [
        e["payload"] for e in watcher.of("examiner_utterance_final") if e["seq"] > switched["seq"]
    ]
    assert [p for p in spoken_after if p["durationMs"] > 500], spoken_after
    states = [e for e in watcher.of("exam_state_changed") if e["seq"] > switched["seq"]]
    assert states and states[0]["payload"]["toState"] == "in_progress", states
