"""The end-of-turn policy (``ioa.runtime.answer_end``): unfinished words get the thinking
pause, an unfinished sound the hesitant pause, a finished answer ends at once; the package
and the extra-time accommodation set the waits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ioa.runtime.answer_end import (
    MAX_PAUSE_SECS,
    TurnTiming,
    UnfinishedReason,
    reply_wait,
    turn_timing,
    turn_wait,
    unfinished_reason,
)
from tests.support.json_values import json_values

UNTERMINATED = UnfinishedReason.UNTERMINATED
TIMING = TurnTiming(finished_secs=0.0, hesitant_secs=2.5, thinking_secs=6.0)

# What candidates say when they stop to think (transcripts as recognisers write them: the
# offline one lower-case and unpunctuated, hosted ones punctuated).
UNFINISHED = [
    ("en", "dijkstra's algorithm keeps a priority queue of", UnfinishedReason.OPEN_WORD),
    ("en", "It relaxes the edges and", UnfinishedReason.OPEN_WORD),
    ("en", "the part I liked best was the one about", UnfinishedReason.OPEN_WORD),
    ("en", "The time complexity is", UnfinishedReason.OPEN_WORD),
    ("en", "i would use a heap because", UnfinishedReason.OPEN_WORD),
    ("en", "The running time is, um", UnfinishedReason.FILLER),
    ("en", "so the complexity would be uh", UnfinishedReason.FILLER),
    ("en", "Hmm, let me think.", UnfinishedReason.ASKS_FOR_TIME),
    ("en", "okay give me a second", UnfinishedReason.ASKS_FOR_TIME),
    ("en", "I need a moment to think", UnfinishedReason.ASKS_FOR_TIME),
    ("en", "how do I put this", UnfinishedReason.ASKS_FOR_TIME),
    ("en", "It uses a priority queue,", UnfinishedReason.OPEN_PUNCTUATION),
    ("en", "The first step is...", UnfinishedReason.OPEN_PUNCTUATION),
    ("en", "Negative edges break it —", UnfinishedReason.OPEN_PUNCTUATION),
    # A punctuating recogniser wrote no sentence end: the clause after the comma is unfinished
    # although its last word could end one (issue #30, a 3.5-s pause in Chromium).
    ("en", "I would make each office a vertex, and each network link", UNTERMINATED),
    ("en", "I'd model the depot and each shop as vertices, and every road", UNTERMINATED),
    ("en", "Well, the heap gives us the closest vertex", UNTERMINATED),
    ("de", "Jedes Büro ist ein Knoten, und jede Leitung", UnfinishedReason.UNTERMINATED),
    ("es", "Cada oficina es un vértice, y cada enlace", UnfinishedReason.UNTERMINATED),
    ("de", "Der Algorithmus wählt immer den Knoten mit der", UnfinishedReason.OPEN_WORD),
    ("de", "Die Laufzeit ist, ähm", UnfinishedReason.FILLER),
    ("de", "Moment, lass mich kurz überlegen", UnfinishedReason.ASKS_FOR_TIME),
    ("de", "Er funktioniert nicht, weil", UnfinishedReason.OPEN_WORD),
    ("es", "El algoritmo elige el vértice con la", UnfinishedReason.OPEN_WORD),
    ("es", "La complejidad es, eh", UnfinishedReason.FILLER),
    ("es", "Déjame pensar un momento", UnfinishedReason.ASKS_FOR_TIME),
    ("es", "No funciona porque", UnfinishedReason.OPEN_WORD),
]

# Seen as unlisted checks would try them: how people really trail off while thinking (issue
# #30). Each of these ended the turn 1.5 s after the words before.
TRAILING_OFF = [
    ("en", "first you pick the closest vertex and then"),
    ("en", "First you pick the closest vertex, and then we"),
    ("en", "it is a greedy algorithm so"),
    ("en", "I think that"),
    ("en", "it's basically like"),
    ("en", "it fails when"),
    ("en", "you need a graph where"),
    ("en", "it does not"),
    ("en", "the reason is that it's"),
    ("en", "it uses a heap which means"),
    ("en", "a priority queue you know"),
    ("en", "for example"),
    ("en", "I would say"),
    ("en", "on the other hand"),
    ("de", "Zuerst nimmt man den nächsten Knoten und dann"),
    ("de", "zum Beispiel"),
    ("de", "das heißt"),
    ("es", "primero eliges el vértice más cercano y luego"),
    ("es", "la complejidad es"),
    ("es", "es decir"),
]
MARKERS = [
    ("en", "So."),
    ("en", "well"),
    ("en", "so basically"),
    ("de", "Also"),
    ("es", "Bueno"),
]

FINISHED = [
    ("en", "It keeps a priority queue of the vertices ordered by distance."),
    ("en", "dijkstra settles the closest unvisited vertex and relaxes its edges"),
    ("en", "Yes."),
    ("en", "I think so"),
    ("en", "I'm not sure about that"),
    ("en", "With negative costs I would need Bellman-Ford instead."),
    ("en", "Could you repeat the question please?"),
    ("de", "Das weiß ich nicht."),
    ("de", "Der Algorithmus hört dann auf"),
    ("de", "Mit einem binären Heap ist die Laufzeit O von E log V."),
    ("es", "Creo que no."),
    ("es", "Usa una cola de prioridad con los vértices"),
    # Endings that look open but close an answer.
    ("en", "It stores the vertices, the edges and so on"),
    ("en", "Maybe ten or so"),
    ("en", "I hope so"),
    ("en", "whether it is connected or not"),
    ("en", "as you know"),
    ("en", "Okay."),
    ("en", "It works well"),
    ("en", "each vertex is settled once"),
    ("en", "And then?"),
    ("es", "Así es"),
]


@pytest.mark.parametrize(("language", "text", "reason"), UNFINISHED)
def test_words_that_stop_mid_thought_get_the_thinking_pause(
    language: str, text: str, reason: UnfinishedReason
) -> None:
    assert unfinished_reason(text, language) is reason
    assert turn_wait(TIMING, text, language, finished_probability=0.99) == 6.0


@pytest.mark.parametrize(("language", "text"), TRAILING_OFF)
def test_a_phrase_that_leads_on_gets_the_thinking_pause(language: str, text: str) -> None:
    assert unfinished_reason(text, language) is UnfinishedReason.OPEN_WORD
    assert turn_wait(TIMING, text, language, finished_probability=0.99) == 6.0


@pytest.mark.parametrize(("language", "text"), MARKERS)
def test_an_answer_that_is_only_a_discourse_marker_is_a_start_not_an_answer(
    language: str, text: str
) -> None:
    assert unfinished_reason(text, language) is UnfinishedReason.FILLER
    assert turn_wait(TIMING, text, language, finished_probability=0.99) == 6.0


@pytest.mark.parametrize(("language", "text"), FINISHED)
def test_a_finished_answer_ends_at_once_when_it_also_sounds_finished(
    language: str, text: str
) -> None:
    assert unfinished_reason(text, language) is None
    assert turn_wait(TIMING, text, language, finished_probability=0.9) == 0.0
    assert turn_wait(TIMING, text, language, finished_probability=None) == 0.0


def test_sure_words_decide_and_unsure_words_leave_it_to_the_sound() -> None:
    text = "It keeps a priority queue of the vertices"
    assert turn_wait(TIMING, text, "en", finished_probability=0.2) == 0.0
    unsure = {"words_reliable": False}
    assert turn_wait(TIMING, text, "en", 0.2, **unsure) == 2.5
    assert turn_wait(TIMING, text, "en", 0.05, **unsure) == 6.0
    assert turn_wait(TIMING, text, "en", 0.7, **unsure) == 0.0
    assert turn_wait(TIMING, text, "en", None, **unsure) == 2.5
    # Unfinished words get the thinking pause whatever the sound.
    assert turn_wait(TIMING, "and then um", "en", 0.99, **unsure) == 6.0


def test_an_unsure_open_last_word_is_left_to_the_sound() -> None:
    """Seen: PocketSphinx heard "... relaxes edges going ultimate the" (confidence 0.52) for an
    answer that ended "... going out of it.", and the reply waited the whole thinking pause."""
    heard = "so dijkstra keeps such tentative distance and relaxes edges going ultimate the"
    unsure = {"words_reliable": False}
    assert turn_wait(TIMING, heard, "en", 0.8, **unsure) == TIMING.hesitant_secs
    assert turn_wait(TIMING, heard, "en", 0.3, **unsure) == TIMING.thinking_secs
    assert turn_wait(TIMING, heard, "en", None, **unsure) == TIMING.thinking_secs
    # Sure words ending on an open word: the candidate stopped mid-clause, whatever the sound.
    assert turn_wait(TIMING, heard, "en", 0.99) == TIMING.thinking_secs
    # A request for time or a filler is never overruled by the sound.
    assert turn_wait(TIMING, "so let me think", "en", 0.99, **unsure) == 6.0
    assert turn_wait(TIMING, "the heap and um", "en", 0.99, **unsure) == 6.0


def test_empty_text_is_not_judged() -> None:
    assert unfinished_reason("", "en") is None
    assert unfinished_reason("  ...  ", "en") is UnfinishedReason.OPEN_PUNCTUATION
    assert turn_wait(TIMING, "", "en") == 0.0


@given(
    text=st.text(max_size=80),
    language=st.sampled_from(["en", "de", "es", "en-GB"]),
    probability=st.none() | st.floats(0.0, 1.0),
    reliable=st.booleans(),
)
def test_every_wait_is_one_of_the_three_and_never_beyond_the_thinking_pause(
    text: str, language: str, probability: float | None, reliable: bool
) -> None:
    wait = turn_wait(TIMING, text, language, probability, words_reliable=reliable)
    assert wait in {TIMING.finished_secs, TIMING.hesitant_secs, TIMING.thinking_secs}


@given(
    prefix=st.text(max_size=60),
    filler=st.sampled_from(["um", "uh", "erm", "hmm"]),
    probability=st.none() | st.floats(0.0, 1.0),
    reliable=st.booleans(),
)
def test_an_answer_ending_on_a_filler_always_gets_the_thinking_pause(
    prefix: str, filler: str, probability: float | None, reliable: bool
) -> None:
    text = f"{prefix} {filler}"
    wait = turn_wait(TIMING, text, "en", probability, words_reliable=reliable)
    assert wait == TIMING.thinking_secs


def test_the_package_sets_the_waits_and_extra_time_lengthens_the_thinking_pause() -> None:
    extensions = {"voice": {"thinkingPauseSec": 8, "hesitantPauseSec": 3.0}}
    timing = turn_timing(extensions)
    assert timing == TurnTiming(finished_secs=1.5, hesitant_secs=3.0, thinking_secs=8.0)
    longer = turn_timing(extensions, multiplier=1.5)
    assert longer == TurnTiming(finished_secs=1.5, hesitant_secs=4.5, thinking_secs=12.0)
    assert turn_timing({"voice": {"finishedPauseSec": 0.4}}).finished_secs == 0.4
    assert turn_timing({}) == TurnTiming()
    assert turn_timing({"marking": {}}, multiplier=1.0) == TurnTiming()


@pytest.mark.parametrize(
    ("voice", "named"),
    [
        ({"thinkingPauseSec": "long"}, "thinkingPauseSec"),
        ({"thinkingPauseSec": True}, "thinkingPauseSec"),
        ({"hesitantPauseSec": -1}, "hesitantPauseSec"),
        ({"finishedPauseSec": MAX_PAUSE_SECS + 1}, "finishedPauseSec"),
        ({"hesitantPauseSec": 9, "thinkingPauseSec": 4}, "grow"),
    ],
)
def test_a_bad_package_setting_is_refused_by_name(voice: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        turn_timing({"voice": voice})


@given(extensions=st.dictionaries(st.sampled_from(["voice", "x"]), json_values, max_size=2))
def test_any_json_in_the_extension_gives_a_timing_or_a_clear_error(
    extensions: dict[str, object],
) -> None:
    try:
        timing = turn_timing(extensions, multiplier=2.0)
    except ValueError as error:
        message = str(error)
    else:
        assert timing.finished_secs <= timing.hesitant_secs <= timing.thinking_secs
        return
    assert "metadata.extensions.voice" in message


# --- the reply pause (runtime semantics §18) ----------------------------------------------------


def test_only_a_finished_answer_gets_the_reply_pause() -> None:
    timing = TurnTiming()
    assert reply_wait(timing, timing.finished_secs) == timing.reply_secs
    assert reply_wait(timing, timing.hesitant_secs) is None
    assert reply_wait(timing, timing.thinking_secs) is None


def test_only_the_model_hearing_a_surely_unfinished_answer_keeps_the_whole_pause() -> None:
    timing = TurnTiming()
    assert reply_wait(timing, timing.finished_secs, 0.05) is None
    assert reply_wait(timing, timing.finished_secs, 0.3) == timing.reply_secs
    assert reply_wait(timing, timing.finished_secs, 0.8) == timing.reply_secs


def test_a_reply_pause_at_or_above_the_finished_pause_ends_nothing_early() -> None:
    timing = TurnTiming(reply_secs=1.5)
    assert reply_wait(timing, timing.finished_secs) is None


def test_a_package_sets_the_reply_pause_and_extra_time_keeps_it() -> None:
    timing = turn_timing({"voice": {"replyPauseSec": 0.5}}, multiplier=1.5)
    assert timing.reply_secs == 0.5
    assert timing.thinking_secs == TurnTiming().thinking_secs * 1.5
    with pytest.raises(ValueError, match="replyPauseSec"):
        turn_timing({"voice": {"replyPauseSec": -1}})
