"""The learned third stage of the command classifier (issue #31, ``ioa.runtime.classifier``).

The sentence rules and the cue scorer read the phrasings their authors foresaw; on sets written
blind they read 58-86 % of the commands. This stage is a multinomial logistic regression over
the words, word pairs and character n-grams of a short utterance, trained on the labelled
command set (``tests/ioa/runtime/command_set``) and its training sets (``.../training``) by
``bench/train_command_model.py``, one model per language, kept as sparse weights in
``ioa/runtime/data/command_model_<language>.json``.

It is asked only when both other stages read nothing, and it answers only when it is sure: the
most likely class must be a command with probability at least :data:`MIN_PROBABILITY`
(:data:`SILENT_COMMAND_PROBABILITY` for the commands the runtime answers with silence; trained
without a blind set, it read no exam answer of that set as a command). The runtime then treats
its reading as any other: a consequential command is confirmed with the candidate before it is
carried out, and a turn that declines a command is no command (``ioa.runtime.agent_boundary``).

Pure and deterministic: the weights are read once from the package, the features are strings,
the arithmetic is the same on every machine.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Final

from ioa.output_filters.text import words
from ioa.schema import CandidateCommandType

MIN_PROBABILITY: Final = 0.6
"""How sure the model must be before its reading counts (0.7 before the second training set:
with it, 0.6 read 80-87 % of a blind set's commands with no false positive of its own, 0.5
began to read answers as commands; runtime semantics §5)."""

SILENT_COMMAND_PROBABILITY: Final = 0.85
"""How sure the model must be of a command whose turn the runtime does not answer as an answer
(thinking aloud: "Take your time", :data:`SILENT_COMMANDS`). It is said in the words of an
answer's hedge ("let me think, it's the nearest one"), and a false reading costs the answer its
reply, where a missed one costs nothing (the turn is answered as an answer). How sure the
candidate is (``signal_confidence``) was here too while the runtime answered it with silence;
since it is answered as an answer (runtime semantics §5), a false reading costs nothing but a
self-assessment on the record, and it is read at :data:`MIN_PROBABILITY`."""
SILENT_COMMANDS: Final = frozenset({CandidateCommandType.THINKING_ALOUD})
NONE_CLASS: Final = "none"
"""The class of an utterance that is no command (an exam answer)."""
CHAR_NGRAMS: Final = (3, 4, 5)
"""The lengths of the character n-grams taken inside each word (with its boundaries)."""
DATA_PACKAGE: Final = "ioa.runtime.data"
WORD_CACHE_SIZE: Final = 50_000
"""The most words whose weights a model keeps summed (then it starts again)."""


def word_features(word: str) -> tuple[str, ...]:
    """The features of one word: the word (``w:``) and its character n-grams marked at its
    ends (``c:``), each once."""
    marked = f"<{word}>"
    found: dict[str, None] = {f"w:{word}": None}
    for size in CHAR_NGRAMS:
        for start in range(len(marked) - size + 1):
            found[f"c:{marked[start : start + size]}"] = None
    return tuple(found)


def phrase_features(said: tuple[str, ...]) -> tuple[str, ...]:
    """The features of the words' order: the first and last word (``f:``, ``l:``) and each
    pair of neighbouring words (``b:``), each once."""
    if not said:
        return ()
    found: dict[str, None] = {f"f:{said[0]}": None, f"l:{said[-1]}": None}
    for index in range(1, len(said)):
        found[f"b:{said[index - 1]} {said[index]}"] = None
    return tuple(found)


def features(text: str) -> tuple[str, ...]:
    """The features of ``text``, a bag (a feature may come more than once): the order's
    (:func:`phrase_features`) and each distinct word's (:func:`word_features`; two words may
    share a character n-gram)."""
    said = words(text)
    distinct = tuple(dict.fromkeys(said))
    return phrase_features(said) + tuple(f for word in distinct for f in word_features(word))


@dataclass(frozen=True, slots=True)
class CommandModel:
    """One language's model: the classes, their biases and the sparse weights per feature."""

    classes: tuple[str, ...]
    bias: tuple[float, ...]
    weights: MappingProxyType[str, tuple[tuple[int, float], ...]]
    """Per feature, (class index, weight) of its non-zero weights."""
    word_cache: dict[str, tuple[float, ...]] = field(default_factory=dict, compare=False)
    """Per word, what it adds to each class (:meth:`_word_logits`)."""

    def probabilities(self, text: str) -> dict[str, float]:
        """The probability of each class for ``text`` (softmax of the summed weights)."""
        said = words(text)
        logits = list(self.bias)
        for word in dict.fromkeys(said):
            for index, weight in enumerate(self._word_logits(word)):
                logits[index] += weight
        self._add(logits, phrase_features(said))
        top = max(logits)
        exps = [math.exp(logit - top) for logit in logits]
        total = sum(exps)
        return {name: value / total for name, value in zip(self.classes, exps, strict=True)}

    def _add(self, logits: list[float], found: tuple[str, ...]) -> None:
        for feature in found:
            for index, weight in self.weights.get(feature, ()):
                logits[index] += weight

    def _word_logits(self, word: str) -> tuple[float, ...]:
        """What one word adds to each class (cached: words recur from turn to turn)."""
        cached = self.word_cache.get(word)
        if cached is None:
            logits = [0.0] * len(self.classes)
            self._add(logits, word_features(word))
            if len(self.word_cache) >= WORD_CACHE_SIZE:
                self.word_cache.clear()
            cached = self.word_cache[word] = tuple(logits)
        return cached

    def names_something(self, word: str) -> bool:
        """Whether ``word`` (lower-case, as :func:`ioa.output_filters.text.words` gives it)
        weighs, by itself (its ``w:`` feature), no more for any command than for an answer: a
        word the model never learned ("mergesort", "dijkstra") or one it learned from answers
        ("heap"), not a command's word ("sure", "sicher", "seguro")."""
        weights = dict(self.weights.get(f"w:{word}", ()))
        none = weights.pop(self.classes.index(NONE_CLASS), 0.0)
        return all(weight <= none for weight in weights.values())

    def command(self, text: str) -> CandidateCommandType | None:
        """The command ``text`` is, when the model is sure of it (:data:`MIN_PROBABILITY`)."""
        probabilities = self.probabilities(text)
        best = max(probabilities, key=probabilities.__getitem__)
        if best == NONE_CLASS or probabilities[best] < MIN_PROBABILITY:
            return None
        command = CandidateCommandType(best)
        if command in SILENT_COMMANDS and probabilities[best] < SILENT_COMMAND_PROBABILITY:
            return None
        return command

    @classmethod
    def from_json(cls, document: dict[str, object]) -> CommandModel:
        """The model written by ``bench/train_command_model.py``: ``classes``, ``bias`` and
        ``weights`` (feature → list of [class index, weight])."""
        classes = tuple(str(name) for name in document["classes"])  # type: ignore[attr-defined]
        bias = tuple(float(value) for value in document["bias"])  # type: ignore[attr-defined]
        raw = document["weights"]
        assert isinstance(raw, dict)
        weights = {
            str(feature): tuple((int(index), float(weight)) for index, weight in pairs)
            for feature, pairs in raw.items()
        }
        if len(bias) != len(classes) or NONE_CLASS not in classes:
            raise ValueError("a command model needs one bias per class and the none class")
        return cls(classes=classes, bias=bias, weights=MappingProxyType(weights))


@cache
def command_model(language: str) -> CommandModel | None:
    """The model for ``language`` (read once), or None when the package has none."""
    resource = resources.files(DATA_PACKAGE).joinpath(f"command_model_{language}.json")
    if not resource.is_file():
        return None
    return CommandModel.from_json(json.loads(resource.read_text(encoding="utf-8")))


@lru_cache(maxsize=4096)
def learned_command(text: str, language: str) -> CandidateCommandType | None:
    """The command the learned stage reads in ``text`` with confidence, or None (cached: the
    runtime reads the same turn for the classifier and for the LLM's claims)."""
    model = command_model(language)
    return model.command(text) if model is not None else None
