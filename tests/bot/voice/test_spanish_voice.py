"""A Spanish voice exam on a hosted recogniser (issue #30).

The Spanish counterpart of ``test_german_voice``: the whole bot core runs the Spanish demo exam
(``cs201-graph-algorithms.es``) with Deepgram's live protocol and OpenAI's speech endpoint
served by the local peer; the candidate answers the warm-up question aloud (eSpeak NG's Spanish
voice). The recogniser must be asked for Spanish, the answer heard as one turn and stored in
Spanish, and the examiner must speak Spanish only: the package's Spanish opening verbatim and
the runtime's Spanish lines, never an English one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.voice.espeak import Voice
from tests.bot.conftest import new_session, publish_example
from tests.bot.voice.test_speech_peers import configure, run_voice_exam
from tests.factories import example_document
from tests.support.english_lines import english_lines
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

SPANISH = "cs201-graph-algorithms.es"
SPANISH_VOICE = Voice(name="es", rate_wpm=140)
ANSWER_ES = (
    "Lo que más me ha gustado ha sido el tema de los algoritmos de grafos, "
    "sobre todo los caminos mínimos."
)


def test_a_spanish_voice_exam_is_heard_and_spoken_in_spanish(
    bot_settings: Any, tmp_path: Path
) -> None:
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="deepgram", tts="openai")
        peer.script(ANSWER_ES)
        session = new_session(publish_example(SPANISH))
        watcher, loudspeaker = run_voice_exam(
            session.pk, tmp_path, answer=ANSWER_ES, voice=SPANISH_VOICE, language="es"
        )
        asked_for = peer.sockets[0].query.get("language") if peer.sockets else None
        speech_inputs = " ".join(speech["input"] for speech in peer.speeches)

    # Deepgram was asked for Spanish and heard the answer as one turn, stored as Spanish.
    assert asked_for == "es", asked_for
    transcripts = [event["payload"] for event in watcher.of("transcript_final")]
    assert [t["text"] for t in transcripts if t["speaker"] == "candidate"] == [ANSWER_ES]
    assert {t["language"] for t in transcripts} == {"es"}

    # The examiner opened with the package's Spanish text, verbatim, and said nothing English;
    # everything it said went through the hosted speech endpoint.
    said = [event["payload"]["text"] for event in watcher.of("examiner_utterance_final")]
    assert len(said) >= 2, said
    opening = example_document(SPANISH)["nodes"][0]["prompt"]["opening"]
    assert said[0] == opening, said[0]
    leaked = [text for text in said for line in english_lines() if line in text]
    assert not leaked, leaked
    missing = [text for text in said if text.split(".")[0] not in speech_inputs]
    assert not missing, (missing, speech_inputs)
    assert loudspeaker.seconds() > 1.0
