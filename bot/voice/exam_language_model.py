"""A language model biased to one exam, for the offline recogniser (issue #17).

PocketSphinx's general US English model spreads its probability over 126,000 words; in an exam
the candidate talks about the package's own subject. This module builds, from the package's own
text (questions, openings, rubric targets, scenarios...), a trigram model interpolated with the
general model, written as ARPA and loaded as an extra search of the pooled decoders:

* **vocabulary**: every word of the exam text that the pronunciation dictionary knows or eSpeak
  NG can pronounce (:mod:`bot.voice.pronunciation`: added to the decoder's dictionary), plus the
  :data:`GENERAL_WORDS` most probable words of the general model (so an answer in ordinary
  English is still heard);
* **unigrams**: ``λ1 · P_exam(w) + (1 - λ1) · P_general(w)`` (the general part renormalised over
  the vocabulary);
* **bigrams and trigrams** seen in the exam text: Jelinek-Mercer interpolation with the order
  below (``λ2``, ``λ3``); an unseen one backs off with weight ``1 - λ`` (exactly what the
  interpolation leaves over), so the model is a proper distribution.

Nothing is trained on what candidates say: the text is the package's. Deterministic: the same text
gives the same file (its name is the digest of text and weights), so pooled decoders add each
exam's model once.

**Per node** (:class:`ExamModels`): the bot knows which node the candidate is answering, so each
node with prose of its own gets a model of that prose (plus the package's title and learning
outcomes and the exam phrases, :func:`bot.voice.exam_text.node_texts`), and the package-wide
model serves everywhere else (before the first node, a node without prose). On the demo exam's
spoken answers the node's model misses fewer words than the package's (``bench/stt.py``): the
answer to one question is made of that question's words.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bot.voice.pronunciation import accent_variants, pronounce

GENERAL_WORDS: Final = 5_000
"""How many of the general model's most probable words stay in the vocabulary."""
WEIGHTS: Final = (0.8, 0.8, 0.8)
"""λ1 (exam unigrams vs general), λ2 (bigram vs unigram), λ3 (trigram vs bigram)."""
LOG10_BASE: Final = math.log10(1.0001)
"""PocketSphinx's log base (``-logbase``, default 1.0001): its integer scores in log10."""
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_BOS, _EOS = "<s>", "</s>"


@dataclass(frozen=True)
class ExamLanguageModel:
    """An exam's model on disk: ``name`` is the decoder search it becomes."""

    name: str
    arpa_path: str
    words: int
    pronunciations: tuple[tuple[str, str], ...] = ()
    """Words of the exam the dictionary lacks, with the CMU phones eSpeak NG gives them
    (:mod:`bot.voice.pronunciation`): added to a decoder's dictionary with the model."""
    variants: tuple[tuple[str, str], ...] = ()
    """The exam's words with their pronunciations in other accents
    (:func:`bot.voice.pronunciation.accent_variants`): added as ``word(n)`` where the decoder's
    dictionary has no such pronunciation."""


@dataclass(frozen=True)
class ExamModels:
    """An exam's models: the package-wide one and one per node that has prose of its own."""

    package: ExamLanguageModel
    nodes: Mapping[str, ExamLanguageModel]

    def for_node(self, node_id: str | None) -> ExamLanguageModel:
        """The model to decode an answer at ``node_id`` with (the package's when the node has
        none of its own or is unknown)."""
        return self.nodes.get(node_id, self.package) if node_id else self.package


BUILT_KEPT: Final = 32
"""How many exams' models a process remembers (:func:`build_exam_models`)."""
_built: OrderedDict[str, ExamModels] = OrderedDict()
_built_lock = threading.Lock()


def build_exam_models(
    texts: Sequence[str], nodes: Mapping[str, Sequence[str]], *, directory: str | None = None
) -> ExamModels:
    """The package's model from ``texts`` and one model per entry of ``nodes`` (node id → its
    texts), each built by :func:`build` (written once; models with the same text are shared).

    Remembered per process for the :data:`BUILT_KEPT` exams last asked for: building the demo
    exam's nine models takes about 0.75 s of CPU even with their files on disk (the vocabulary,
    eSpeak's pronunciations), and every candidate of a published package asks for the same
    ones. A remembered exam whose files were removed is built again."""
    place = directory or _cache_dir()
    key = repr((tuple(texts), sorted((node, tuple(t)) for node, t in nodes.items()), place))
    with _built_lock:
        models = _built.get(key)
        if models is not None:
            _built.move_to_end(key)
    if models is not None and all(
        Path(m.arpa_path).exists() for m in (models.package, *models.nodes.values())
    ):
        return models
    models = ExamModels(
        package=build(texts, directory=place),
        nodes={node: build(node_texts, directory=place) for node, node_texts in nodes.items()},
    )
    with _built_lock:
        _built[key] = models
        while len(_built) > BUILT_KEPT:
            _built.popitem(last=False)
    return models


def sentences(texts: Iterable[str]) -> list[list[str]]:
    """The texts cut into sentences of lower-case words (what the model counts)."""
    found: list[list[str]] = []
    for text in texts:
        for sentence in re.split(r"[.!?;:\n]+", text.lower()):
            tokens = _WORD.findall(sentence.replace("\u2019", "'"))
            if tokens:
                found.append(tokens)
    return found


class GeneralModel:
    """The wheel's general model as unigram probabilities over its dictionary (loaded once)."""

    _lock = threading.Lock()
    _loaded: GeneralModel | None = None

    def __init__(self, unigrams: Mapping[str, float], dictionary: frozenset[str]) -> None:
        self.unigrams = unigrams
        self.dictionary = dictionary

    @classmethod
    def load(cls) -> GeneralModel:
        with cls._lock:
            if cls._loaded is None:
                cls._loaded = cls._read()
            return cls._loaded

    @staticmethod
    def _read() -> GeneralModel:
        from pocketsphinx import NGramModel, get_model_path

        model_dir = Path(get_model_path()) / "en-us"
        lm = NGramModel.readfile(str(model_dir / "en-us.lm.bin"))
        with open(model_dir / "cmudict-en-us.dict", encoding="utf-8") as handle:
            dictionary = frozenset(line.split(" ", 1)[0] for line in handle if "(" not in line[:1])
        words = {w.split("(")[0] for w in dictionary}
        scores = {word: lm.prob([word]) for word in words}
        unigrams = {w: 10 ** (s * LOG10_BASE) for w, s in scores.items() if s > -(2**28)}
        return GeneralModel(unigrams, frozenset(words))


def build(
    texts: Sequence[str],
    *,
    general: GeneralModel | None = None,
    general_words: int = GENERAL_WORDS,
    weights: tuple[float, float, float] = WEIGHTS,
    directory: str | None = None,
) -> ExamLanguageModel:
    """The exam's model for ``texts`` (module docstring), written once to ``directory``."""
    general = general or GeneralModel.load()
    split = sentences(texts)
    unknown = sorted({w for s in split for w in s} - general.dictionary)
    pronounced = {w: phones for w in unknown if (phones := pronounce(w)) is not None}
    known = general.dictionary | pronounced.keys()
    corpus = [[w for w in s if w in known] for s in split]
    corpus = [s for s in corpus if s]
    extra = tuple(sorted(pronounced.items()))
    exam_words = sorted({w for s in corpus for w in s})
    variants = tuple((w, phones) for w in exam_words for phones in accent_variants(w))
    key = repr((corpus, extra, variants, general_words, weights))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = f"exam-{digest}"
    path = Path(directory or _cache_dir()) / f"{name}.arpa"
    vocabulary = _vocabulary(corpus, general, general_words)
    if not path.exists():
        arpa = _arpa(corpus, vocabulary, general, weights)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as handle:
            handle.write(arpa)
        os.replace(handle.name, path)
    return ExamLanguageModel(
        name=name,
        arpa_path=str(path),
        words=len(vocabulary),
        pronunciations=extra,
        variants=variants,
    )


def _cache_dir() -> str:
    return os.environ.get("VIVA_STT_MODEL_DIR") or os.path.join(
        tempfile.gettempdir(), "viva-exam-lm"
    )


def _vocabulary(corpus: list[list[str]], general: GeneralModel, size: int) -> list[str]:
    exam = {w for s in corpus for w in s}
    common = sorted(general.unigrams, key=lambda w: (-general.unigrams[w], w))[:size]
    return sorted(exam | set(common))


def _arpa(
    corpus: list[list[str]],
    vocabulary: list[str],
    general: GeneralModel,
    weights: tuple[float, float, float],
) -> str:
    unigrams = _unigrams(corpus, vocabulary, general, weights[0])
    bigrams = _higher(corpus, 2, weights[1], lambda h, w: unigrams[w])
    trigrams = _higher(
        corpus, 3, weights[2], lambda h, w: _bigram(bigrams, unigrams, weights, h, w)
    )
    lines = ["\\data\\", f"ngram 1={len(unigrams)}", f"ngram 2={len(bigrams)}"]
    lines += [f"ngram 3={len(trigrams)}", "", "\\1-grams:"]
    with_history = {h[:1] for h in bigrams}
    for word, prob in unigrams.items():
        backoff = f" {math.log10(1 - weights[1]):.4f}" if (word,) in with_history else ""
        lines.append(f"{_log(prob)} {word}{backoff}")
    lines += ["", "\\2-grams:"]
    with_history = {h[:2] for h in trigrams}
    for gram, prob in bigrams.items():
        backoff = f" {math.log10(1 - weights[2]):.4f}" if gram in with_history else ""
        lines.append(f"{_log(prob)} {' '.join(gram)}{backoff}")
    lines += ["", "\\3-grams:"]
    lines += [f"{_log(prob)} {' '.join(gram)}" for gram, prob in trigrams.items()]
    lines += ["", "\\end\\", ""]
    return "\n".join(lines)


def _unigrams(
    corpus: list[list[str]], vocabulary: list[str], general: GeneralModel, weight: float
) -> dict[str, float]:
    counts = Counter(w for s in corpus for w in [*s, _EOS])
    total = sum(counts.values()) or 1
    mass = sum(general.unigrams.get(w, 0.0) for w in vocabulary) or 1.0
    eos_general = 0.05  # the general share of sentence ends
    found = {_BOS: 1e-99}
    for word in [*vocabulary, _EOS]:
        general_p = eos_general if word == _EOS else general.unigrams.get(word, 0.0) / mass
        found[word] = weight * counts[word] / total + (1 - weight) * general_p / (1 + eos_general)
    return found


Gram = tuple[str, ...]


def _higher(
    corpus: list[list[str]], order: int, weight: float, lower: Callable[[Gram, str], float]
) -> dict[Gram, float]:
    counts: dict[Gram, Counter[str]] = defaultdict(Counter)
    for sentence in corpus:
        padded = [_BOS] * (order - 1) + sentence + [_EOS]
        if order == 3:
            padded = padded[1:]  # <s> once: trigrams start at (<s>, w1)
        for i in range(order - 1, len(padded)):
            counts[tuple(padded[i - order + 1 : i])][padded[i]] += 1
    found: dict[Gram, float] = {}
    for history, following in counts.items():
        total = sum(following.values())
        for word, count in following.items():
            found[(*history, word)] = weight * count / total + (1 - weight) * lower(history, word)
    return found


def _bigram(
    bigrams: dict[Gram, float],
    unigrams: dict[str, float],
    weights: tuple[float, float, float],
    h: Gram,
    w: str,
) -> float:
    seen = bigrams.get((h[-1], w))
    return seen if seen is not None else (1 - weights[1]) * unigrams[w]


def _log(prob: float) -> str:
    return f"{math.log10(prob) if prob > 0 else -99:.4f}"
