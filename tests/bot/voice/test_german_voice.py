"""A German voice exam on a hosted recogniser (issue #30).

The offline recogniser knows English only, so a German or Spanish exam could be spoken only
with a hosted one; nothing showed that it can. The whole bot core runs the German demo exam
(``cs201-graph-algorithms.de``) with Deepgram's live protocol and OpenAI's speech endpoint
served by the local peer; the candidate answers aloud (eSpeak NG's German voice). The
recogniser must be asked for German, the answer heard and the turn ended (the smart-turn model
and the end-of-turn policy on German speech), and the examiner must speak German only: the
package's German texts and the runtime's German lines, never an English one.
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

ANSWER_DE = "Am meisten Freude hat mir das Thema Graphalgorithmen gemacht, vor allem kürzeste Wege."
GERMAN_VOICE = Voice(name="de", rate_wpm=140)
GERMAN = "cs201-graph-algorithms.de"


def test_a_german_voice_exam_is_heard_and_spoken_in_german(
    bot_settings: Any, tmp_path: Path
) -> None:
    with SpeechServer() as peer:
        _exam_in_german(bot_settings, peer, tmp_path)


def _exam_in_german(bot_settings: Any, peer: SpeechServer, tmp_path: Path) -> None:
    configure(bot_settings, peer, stt="deepgram", tts="openai")
    peer.script(ANSWER_DE)
    session = new_session(publish_example(GERMAN))

    watcher, loudspeaker = run_voice_exam(
        session.pk, tmp_path, answer=ANSWER_DE, voice=GERMAN_VOICE, language="de"
    )

    # The recogniser was asked for German, and heard the German answer as one turn.
    assert peer.sockets and peer.sockets[0].query.get("language") == "de", peer.sockets[0].query
    finals = [e["payload"] for e in watcher.of("transcript_final")]
    heard = [t for t in finals if t["speaker"] == "candidate"]
    assert [t["text"] for t in heard] == [ANSWER_DE]
    assert {t["language"] for t in finals} == {"de"}
    # The examiner spoke German, through the speech endpoint, and no English line.
    spoken = [e["payload"]["text"] for e in watcher.of("examiner_utterance_final")]
    assert len(spoken) >= 2, spoken
    english = english_lines()
    assert not [s for s in spoken if any(line in s for line in english)], spoken
    opening = example_document(GERMAN)["nodes"][0]["prompt"]["opening"]
    assert spoken[0] == opening, spoken[0]  # the package's German, verbatim
    asked = " ".join(s["input"] for s in peer.speeches)
    assert all(text.split(".")[0] in asked for text in spoken), (spoken, asked)
    assert loudspeaker.seconds() > 1.0
