"""When a spoken answer is over: the exam's end-of-turn policy (docs/spec/runtime-semantics.md
§"End of a spoken turn").

A candidate who stops speaking has not necessarily finished: they pause to think, mid-sentence
or after "let me think". A fixed silence (the speech-timeout rule) ends such an answer, and what
follows the pause is taken as the answer to the next question. The policy instead decides how
long a silence must last before the turn is over from what was said so far and how it sounded:

* **unfinished words** (:func:`unfinished_reason`): the transcript ends on a hesitation filler
  ("um", "äh", "eh"), on a word that cannot end a clause (a conjunction, a preposition, an article:
  "... a priority queue of"; a subject pronoun or a clause opener: "and then we", "it fails when"),
  on a phrase that leads on ("and then", "which means", "for example", "I think that", "I would
  say", "es decir", "und dann"; "and so on" and "I think so" close), on a request for time ("let me
  think", "un momento"), on a comma, dash or ellipsis a punctuating recogniser wrote, or without the
  sentence end such a recogniser writes when it hears one (a transcript with any punctuation and no
  final full stop, question or exclamation mark: "I would make each office a vertex, and each
  network link"). An answer that is only a discourse marker ("so", "well", "basically", "also",
  "bueno") counts as a filler. The candidate is given the whole thinking pause
  (:attr:`TurnTiming.thinking_secs`, default 6 s: a pause of up to ~5 s inside an answer never ends
  it). One exception: an open last word in words the recogniser is not sure of, when the acoustic
  model says finished, gets the hesitant pause. Measured in Chromium (``bench/reply_latency.py``),
  the offline recogniser ended 2 of 4 natural answers with a "the" that was never said, and each
  reply then waited the whole thinking pause (6.4 s after the answer); a filler, a request for time
  and open punctuation keep the thinking pause whatever the sound.
* **finished words the recogniser is sure of** (confidence at least
  :data:`RELIABLE_CONFIDENCE`) end the turn :attr:`TurnTiming.finished_secs` (1.5 s) after the
  speech, once the transcript is in: a pause between two sentences of one answer is shorter.
* **words it is not sure of** leave the decision to the sound: the acoustic end-of-turn model
  (the smart-turn model, run by the bot) gives the probability that the speaker has finished;
  surely unfinished (a filler's sound) gets the thinking pause, unfinished
  (below :data:`FINISHED_PROBABILITY`) the hesitant pause
  (:attr:`TurnTiming.hesitant_secs`), finished ends the turn.

Why the sound does not overrule sure words: measured on the demo's answers spoken by five
eSpeak NG voices (docs/voice.md), the model put 1 in 3 finished answers below 0.5, and on real
speech a recogniser's words are the stronger evidence; where the recogniser is unsure (the
offline one, on a pause-cut segment), the sound is all there is.

Every wait is counted from the end of the candidate's speech, and the thinking pause is the most
any silence waits. The waits come from the package (``metadata.extensions.voice``:
``thinkingPauseSec``, ``hesitantPauseSec``, ``finishedPauseSec``) and are multiplied by the
candidate's extra-time accommodation (:func:`turn_timing`). Pure and deterministic: the bot
supplies the clock, the transcript and the model's probability.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from types import MappingProxyType
from typing import Final

from ioa.languages import exam_language
from ioa.output_filters.text import normalise, words

FINISHED_PROBABILITY: Final = 0.5
"""The acoustic model's probability of "finished" below which the answer sounds unfinished."""
SURELY_UNFINISHED_PROBABILITY: Final = 0.1
"""Below this the answer surely sounds unfinished (a filler's "um", a rising "because...")."""
RELIABLE_CONFIDENCE: Final = 0.6
"""The recogniser's confidence in the turn's last words from which they are evidence of their
own (the runtime's ``CLEAR_CONFIDENCE``)."""
MAX_PAUSE_SECS: Final = 30.0
"""The longest wait a package may set (beyond this a silence is not thinking time)."""


class UnfinishedReason(StrEnum):
    """Why the words so far do not end an answer."""

    FILLER = "filler"
    OPEN_WORD = "open_word"
    ASKS_FOR_TIME = "asks_for_time"
    OPEN_PUNCTUATION = "open_punctuation"
    UNTERMINATED = "unterminated"


@dataclass(frozen=True, slots=True)
class TurnTiming:
    """How long a silence after speech must last before the candidate's turn is over, by how
    finished the answer looks (module docstring), in seconds."""

    finished_secs: float = 1.5
    """Above a natural pause between two sentences of one answer (about 1 s), plus the VAD's
    0.2 s to hear speech start again: shorter, a speaker's next sentence is cut off."""
    hesitant_secs: float = 2.5
    thinking_secs: float = 6.0
    reply_secs: float = 0.7
    """The *reply pause* (runtime semantics §18): a turn whose words are finished ends this
    long after the speech (the VAD's own stop comes first when it is longer), so the reply
    comes sooner than the finished pause; it stays open to their going on until the finished
    pause has passed. Longer than the breath a speaker takes between two sentences said in
    one go (0.33-0.45 s in eSpeak's voices) plus the VAD's 0.2 s to hear speech start again:
    on 0.3 s the examiner began its reply in that gap, over the second sentence. At or above
    ``finished_secs`` there is no early end."""

    def __post_init__(self) -> None:
        for name in ("finished_secs", "hesitant_secs", "thinking_secs", "reply_secs"):
            value = getattr(self, name)
            if not 0.0 <= value <= MAX_PAUSE_SECS * 3:
                raise ValueError(f"{name} must be between 0 and {MAX_PAUSE_SECS * 3} s: {value}")
        if not self.finished_secs <= self.hesitant_secs <= self.thinking_secs:
            raise ValueError("pauses must grow: finished <= hesitant <= thinking")

    def scaled(self, multiplier: float) -> TurnTiming:
        """The waits for a candidate with ``multiplier`` extra time (the finished wait stays:
        a finished answer is not made to wait)."""
        factor = max(1.0, float(multiplier))
        return TurnTiming(
            finished_secs=self.finished_secs,
            reply_secs=self.reply_secs,
            hesitant_secs=round(self.hesitant_secs * factor, 3),
            thinking_secs=round(self.thinking_secs * factor, 3),
        )


@dataclass(frozen=True, slots=True)
class _Cues:
    fillers: frozenset[str]
    open_words: frozenset[str]
    asks_for_time: re.Pattern[str]
    open_endings: re.Pattern[str]
    """Endings of two or more words after which the thought goes on ("and then", "which
    means", "I would say"), over the answer's words (:func:`words`: lower case, apostrophes
    dropped)."""
    closed_endings: re.Pattern[str]
    """Endings that close an answer although their last word is open ("and so on")."""
    markers: re.Pattern[str]
    """A whole answer that is only a discourse marker ("so", "well", "basically"): the
    candidate has started, not answered."""


def _ending(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return (
        re.compile(r"(?:^|\b)(?:" + "|".join(patterns) + r")$") if patterns else re.compile(r"$^")
    )


def _cues(
    fillers: str,
    open_words: str,
    asks_for_time: tuple[str, ...],
    *,
    open_endings: tuple[str, ...] = (),
    closed_endings: tuple[str, ...] = (),
    markers: tuple[str, ...] = (),
) -> _Cues:
    return _Cues(
        fillers=frozenset(fillers.split()),
        open_words=frozenset(open_words.split()),
        asks_for_time=re.compile(r"(?:^|\b)(?:" + "|".join(asks_for_time) + r")\W*$"),
        open_endings=_ending(open_endings),
        closed_endings=_ending(closed_endings),
        markers=re.compile(r"^(?:" + "|".join(markers) + r")$") if markers else re.compile(r"$^"),
    )


CUES: Final = MappingProxyType(
    {
        "en": _cues(
            "um umm uh uhm uhh er erm err hmm hm mm mmm ah eh",
            "and but or because cause since which whose whereas although though if unless "
            "until than as the a an of to for with into onto between via my your its our "
            "their every each whether nor plus about in on at by from over under through "
            "without is are was were be being would will can could should must "
            "when where while whenever wherever whereby we i they he she thats theres "
            "theyre youre whats heres im ive weve youve theyve",
            (
                r"let me (think|see|check|remember)( about (it|that|this))?",
                r"give me (a|one) (moment|second|sec|minute)",
                r"(just )?(a|one) (moment|second|sec|minute)",
                r"hold on",
                r"wait",
                r"i need (a moment|a second|some time|to think)( to think)?",
                r"how (do|can|should) i (put|say|explain) (this|it)",
                r"what('s| is) (it|the word) called",
                r"i mean",
            ),
            open_endings=(
                r"(and|but|or|so) (then|so|also|basically|essentially|actually)",
                r"(?<!think )(?<!hope )(?<!guess )(?<!believe )(?<!not )(?<!or )(?<!do )"
                r"(?<!said )(?<!even )(?<!just )so",
                r"(think|thought|say|said|know|knew|mean|means|meant|believe|guess|show|shows"
                r"|showed|note|notice|assume|ensure|ensures|guarantee|guarantees|prove|proves"
                r"|is|was|so|such|except|fact) that",
                r"(which|that|this|it) means",
                r"meaning",
                r"namely",
                r"(for|as an) (example|instance)",
                r"(?<!as )(?<!if )(?<!do )you know",
                r"(i would|id|lets|let us|we could|you could|i could|i might|i should) say",
                r"(its|is|was|thats|just|basically|really|actually|kind of|sort of|something|looks"
                r"|sounds|more) like",
                r"(is|are|was|were|does|do|did|can|could|would|will|should|must|has|have|had"
                r"|its|thats) not",
                r"first of all",
                r"in other words",
                r"on the other hand",
            ),
            closed_endings=(r"and so (on|forth)", r"and the like", r"or so"),
            markers=(r"(so |well |okay so |ok so )?(so|well|basically|essentially)",),
        ),
        "de": _cues(
            "äh ähm ähh öh öhm hm hmm mh mhm ehm em",
            "und aber oder denn weil dass ob wenn als wie sondern sowie obwohl während bevor "
            "nachdem also der dem den des ein eine einen einem einer eines von für in im am "
            "zum zur vom gegen ohne zwischen",
            (
                r"lass(en sie)? mich (kurz |mal )?(überlegen|nachdenken|nachdenke|überleg)",
                r"(einen |ein )?(moment|momentchen|augenblick|sekunde)( bitte)?",
                r"warte(n sie)?( mal| kurz)?",
                r"wie sagt man( das)?",
                r"wie heißt (das|es)( noch)?",
                r"ich muss (kurz |mal )?(überlegen|nachdenken)",
                r"ich meine",
            ),
            open_endings=(
                r"(und|aber|oder) (dann|so|zwar|danach)",
                r"zum beispiel",
                r"das heißt",
                r"nämlich",
                r"beziehungsweise",
                r"(ich|wir) würde(n)? sagen",
            ),
            markers=(r"(also|ja also|na ja|naja|tja|so|gut also)",),
        ),
        "es": _cues(
            "eh em ehm mm mmm hmm este esto pues ah",
            "y e o u pero porque que cuyo donde cuando mientras aunque si sino como el la "
            "los las un unos unas de del al a con sin en por para sobre entre hacia desde "
            "hasta mi mis tu tus su sus cada ningún ni",
            (
                r"d[ée]jame (pensar|ver|pensarlo|recordar)",
                r"(un|dame un) (momento|segundo|momentito)( por favor)?",
                r"espera(me|d)?( un poco)?",
                r"a ver",
                r"c[óo]mo se (dice|llama)",
                r"necesito (pensar|un momento)",
                r"o sea",
                r"quiero decir",
            ),
            open_endings=(
                r"y (luego|entonces|después|despues|también|tambien)",
                r"es decir",
                r"por ejemplo",
                r"(yo )?diría",
                r"(la|el|lo|las|los) [a-záéíóúñü]+ (es|son|era|fue|sería|seria)",
            ),
            closed_endings=(r"(eso|así|asi|esto) (es|son|era|fue)",),
            markers=(r"(bueno|pues|entonces|bueno pues|pues bueno)",),
        ),
    }
)
"""Per exam language, what marks words as unfinished (module docstring). The fillers are the
ones recognisers write (PocketSphinx and hosted services alike); the open words are function
words after which a clause rarely ends in an answer. The lists lean to "unfinished": a word that
sometimes ends a sentence ("what it is", "what I thought about") costs a finished answer the
thinking pause, while a missing one costs a thinking candidate their question."""

_OPEN_PUNCTUATION: Final = re.compile(r"(,|;|:|-|\u2013|\u2014|\.\.\.|\u2026)\s*$")
"""A comma, semicolon, colon, hyphen, en or em dash, or ellipsis at the end."""
_PUNCTUATION: Final = re.compile(r"[,;:.?!\u00bf\u00a1]")
"""Any mark a punctuating recogniser writes: text with one comes from a recogniser that ends a
sentence with a full stop, question or exclamation mark when it hears one end."""


def unfinished_reason(text: str, language: str = "en") -> UnfinishedReason | None:
    """Why the transcript ``text`` of an answer so far (in the exam's ``language``) is not a
    finished answer, or None when its words could end one (module docstring). Empty text is
    not judged (None)."""
    stripped = text.strip()
    if not stripped:
        return None
    if _OPEN_PUNCTUATION.search(stripped):
        return UnfinishedReason.OPEN_PUNCTUATION
    said = words(stripped)
    if not said:
        return None
    cues = CUES[exam_language(language)]
    if cues.asks_for_time.search(normalise(stripped).rstrip(" .!?")):
        return UnfinishedReason.ASKS_FOR_TIME
    last = said[-1]
    joined = " ".join(said)
    if last in cues.fillers or cues.markers.match(joined):
        return UnfinishedReason.FILLER
    if stripped.endswith(("?", "!", ".")) or cues.closed_endings.search(joined):
        return None
    if last in cues.open_words or cues.open_endings.search(joined):
        return UnfinishedReason.OPEN_WORD
    if _PUNCTUATION.search(stripped):
        # A punctuating recogniser wrote no sentence end: "I would make each office a vertex,
        # and each network link" (issue #30: it ended the turn in a 3.5-s thinking pause).
        return UnfinishedReason.UNTERMINATED
    return None


@lru_cache(maxsize=2048)
def asks_for_time(text: str, language: str) -> bool:
    """The words ask for time or trail off in a filler: the candidate is thinking, not
    answering ("let me think", "um..."). Cached: the runtime reads a candidate turn when it
    arrives (``ioa.runtime.transcripts``) and again, up to three times, for the observation
    that answers it."""
    reason = unfinished_reason(text.rstrip(" .,;:-\u2013\u2014\u2026"), language)
    return reason in (UnfinishedReason.ASKS_FOR_TIME, UnfinishedReason.FILLER)


def turn_wait(
    timing: TurnTiming,
    text: str,
    language: str = "en",
    finished_probability: float | None = None,
    *,
    words_reliable: bool = True,
) -> float:
    """Seconds of silence after the end of speech before the turn is over (module docstring).

    Unfinished words get the thinking pause, except an open last word the recogniser is not
    sure of, which gets the hesitant pause when the sound says finished. Words the recogniser
    is sure of (``words_reliable``) otherwise end the turn at once: they are the best evidence
    there is.
    Words it is not sure of leave it to the sound (``finished_probability`` from the acoustic
    model, None when there is none): below :data:`SURELY_UNFINISHED_PROBABILITY` the thinking
    pause, below :data:`FINISHED_PROBABILITY` (or no model) the hesitant pause, else at once."""
    reason = unfinished_reason(text, language)
    if reason is UnfinishedReason.OPEN_WORD and not words_reliable:
        # A function word the recogniser is unsure of ends the words (the offline one adds
        # "the" to an answer's end): the sound decides between the thinking and hesitant pause.
        sounds_finished = finished_probability is not None and (
            finished_probability >= FINISHED_PROBABILITY
        )
        return timing.hesitant_secs if sounds_finished else timing.thinking_secs
    if reason is not None:
        return timing.thinking_secs
    if words_reliable:
        return timing.finished_secs
    if finished_probability is None:
        return timing.hesitant_secs
    if finished_probability < SURELY_UNFINISHED_PROBABILITY:
        return timing.thinking_secs
    if finished_probability < FINISHED_PROBABILITY:
        return timing.hesitant_secs
    return timing.finished_secs


def reply_wait(
    timing: TurnTiming, wait: float, finished_probability: float | None = None
) -> float | None:
    """The reply pause for a turn whose policy wait is ``wait``, or None when the turn waits
    its whole silence (runtime semantics §18). Only a finished answer ends early: its wait is
    the finished pause (sure finished words, or unsure words the model heard as finished).
    The smart-turn model, when there is one, vetoes it only when it hears the speech as
    surely unfinished (``finished_probability`` < :data:`SURELY_UNFINISHED_PROBABILITY`), as
    between two sentences of one answer: an examiner who starts to speak at every full stop is
    one the candidate has to talk over. Short of that, sure words are the stronger evidence
    (docs/voice.md: on synthetic speech the model puts a third of finished answers below 0.5)."""
    if wait > timing.finished_secs or timing.reply_secs >= timing.finished_secs:
        return None
    if finished_probability is not None and finished_probability < SURELY_UNFINISHED_PROBABILITY:
        return None
    return timing.reply_secs


_EXTENSION_KEYS: Final = MappingProxyType(
    {
        "finishedPauseSec": "finished_secs",
        "hesitantPauseSec": "hesitant_secs",
        "thinkingPauseSec": "thinking_secs",
        "replyPauseSec": "reply_secs",
    }
)


def turn_timing(
    extensions: Mapping[str, object],
    multiplier: float = 1.0,
    default: TurnTiming | None = None,
) -> TurnTiming:
    """The package's turn timing (``metadata.extensions.voice``, any key left out keeps
    ``default``'s value), scaled by the candidate's extra-time ``multiplier``. A value that is
    not a number of seconds in [0, :data:`MAX_PAUSE_SECS`], or waits that do not grow, raise
    ``ValueError`` naming the key."""
    base = default or TurnTiming()
    voice = extensions.get("voice")
    values = {
        "finished_secs": base.finished_secs,
        "hesitant_secs": base.hesitant_secs,
        "thinking_secs": base.thinking_secs,
        "reply_secs": base.reply_secs,
    }
    if isinstance(voice, Mapping):
        for key, field_name in _EXTENSION_KEYS.items():
            if key not in voice:
                continue
            value = voice[key]
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value <= MAX_PAUSE_SECS
            ):
                raise ValueError(
                    f"metadata.extensions.voice.{key} must be a number of seconds between 0 "
                    f"and {MAX_PAUSE_SECS:g}: {value!r}"
                )
            values[field_name] = float(value)
    try:
        timing = TurnTiming(**values)
    except ValueError as error:
        raise ValueError(f"metadata.extensions.voice: {error}") from error
    return timing.scaled(multiplier)
