"""The offline examiner's lexical-semantic matcher: does an answer show an evidence target?

REHEARSAL ONLY, like :mod:`bot.offline_examiner`. It compares *concepts*, not spellings, and it
is built from three things only: the node's own evidence targets (id, label, description), a
curated lexicon per language committed with the code (``bot/data/synonyms_<language>.json``:
``en``, ``de``, ``es``) and the candidate's words. Pure Python, deterministic, nothing downloaded
at run time.

How an answer is judged against a target:

1. **Concepts.** Both texts are tokenised and stemmed (Snowball, in the exam's language; in
   German and Spanish after folding accents, umlauts and ``ß``, which candidates often leave
   out, and with the lexicon's stem exceptions where Snowball makes two words one, German
   ``nächste`` and ``nach``). A German compound the lexicon does not know is read as its parts
   when its head is a lexicon word (``Kantengewichte``: edge and weight, as the English
   ``edge weights``). The lexicon maps words and phrases (longest first) to concepts, so
   ``node`` and ``vertex``, ``closest`` and ``smallest``, ``finalised`` and ``settled`` meet; a
   term can imply broader concepts (``dijkstra`` is a single-source shortest-path algorithm). A
   word the lexicon does not know is its own concept; a misspelt one (one edit, two for long
   words) is read as the target's word it is closest to.
2. **Negation.** ``not``, ``never``, ``n't``, ``no``, ``without``, ``non-`` and ``un-`` negate the
   next content word (the lexicon's negators and prefixes: German ``nicht``, ``kein``,
   ``nicht-``, Spanish ``no``, ``ningún``, ``sin``): a negated concept only meets a negated one
   (``isn't finalised yet`` meets ``unsettled``), and of an antonym pair it reads as the opposite
   (``can't be negative`` is ``non-negative``). A clause in which the candidate says they do not
   know (``I don't know``, ``not sure``, ``can't remember``; some cues only at the clause's end,
   Spanish ``no sé``, not ``no se puede``) counts for nothing, and the rest of that answer for
   half.
3. **Key concepts.** Each concept of the target weighs its inverse document frequency over the
   node's own texts (its targets and the opening question): what one target alone says weighs
   most, what every target or the question already says weighs least. In German and Spanish
   (the lexicon's ``label_factor``), a concept only the target's label says, not its
   description, weighs less: the label names the topic (``greedy``), the description says what
   to show.
4. **Decision.** A target is met when at least :data:`MIN_HITS` of its concepts are in the answer
   and their weight reaches :data:`THRESHOLD` of the target's weight (at most :data:`WEIGHT_CAP`
   of it: a long description lists examples, not requirements). An answer that asserts the
   opposite of one of the target's concepts (``largest`` for ``smallest``, ``negative`` for
   ``non-negative``) and never the concept itself does not meet it.

The figures on the labelled paraphrases (``tests/bot/offline_matching/``) are in docs/bot.md and
printed by ``bench/offline_matching.py``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, Protocol

import snowballstemmer

DATA: Final = Path(__file__).resolve().parent / "data"
MIN_HITS: Final = 2
"""Distinct target concepts an answer must show."""
THRESHOLD: Final = 0.45
"""Share of the target's (capped) weight the shown concepts must reach."""
WEIGHT_CAP: Final = 8.0
"""The most a target's weight counts when a share of it is asked for."""
CONTEXT_DISCOUNT: Final = 0.5
"""Factor on the weight of a concept the opening question already says."""
COMMON_FACTOR: Final = 0.5
"""Factor on the weight of a common concept (the lexicon's ``common`` list)."""
IMPLIED_FACTOR: Final = 0.5
"""Factor on the weight of a concept the answer only implies."""
IGNORANCE_FACTOR: Final = 0.5
"""Factor on an answer's weight when the candidate says they do not know something."""
NOT: Final = "not:"
STEMMERS: Final = {"en": "english", "de": "german", "es": "spanish"}
FOLDED: Final = frozenset({"de", "es"})
"""Languages whose words are compared without accents, umlauts and ``ß`` (candidates type
``ueber``, ``Strasse``, ``vertice``, ``almacen``)."""
_TOKEN: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_CLAUSE: Final = re.compile(
    r"[.!?;,:]+(?:\s|$)|\s(?:but|although|though|aber|obwohl|sondern|pero|aunque|sino)\s"
)
_FINAL: Final = "$"
"""Marks the end of a clause when looking for an ignorance cue said only there."""
COMPOUND_PART: Final = 4
"""The shortest head of a compound read as its parts (the modifier needs one letter less)."""


class TargetLike(Protocol):
    """What the matcher reads of an evidence target."""

    @property
    def id(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def description(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's lexicon: concepts of stemmed words and phrases, and the cue words."""

    language: str
    concepts: dict[tuple[str, ...], str]
    """Stemmed word sequence -> concept name."""
    implies: dict[str, tuple[str, ...]]
    antonyms: dict[str, frozenset[str]]
    stopwords: frozenset[str]
    negators: frozenset[str]
    negation_skip: frozenset[str]
    ignorance: tuple[tuple[str, ...], ...]
    fillers: frozenset[str]
    """Words left out when looking for an ignorance cue (``I don't *really* know``)."""
    clause_negators: frozenset[str]
    """``no`` / ``nothing``: also turn a polar concept later in the clause (``no road takes a
    negative time``)."""
    dismissive: frozenset[str]
    """Negated, these negate the whole clause (``the ECG isn't needed``)."""
    common: frozenset[str]
    """Concepts that weigh :data:`COMMON_FACTOR` (a field's objects, everyday academic words)."""
    longest: int = 1
    prefixes: tuple[str, ...] = ("un", "non", "in")
    """Prefixes that negate a known word (``unsettled``, ``nichtnegativ``)."""
    compounds: bool = False
    """Whether a word the lexicon does not know may be read as a compound of known parts."""
    label_factor: float = 1.0
    """Factor on the weight of a concept only a target's label says, not its description (the
    label names the topic, ``greedy``, ``limitation``; the description says what to show)."""


@cache
def _stemmer(language: str) -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer(STEMMERS.get(language, "english"))


def _data(language: str) -> dict[str, object]:
    path = DATA / f"synonyms_{language}.json"
    data: dict[str, object] = json.loads(path.read_text("utf-8")) if path.exists() else {}
    return data


def fold(word: str, language: str = "en") -> str:
    """``word`` without accents, umlauts and ``ß`` in a :data:`FOLDED` language (unchanged in
    the others)."""
    if language not in FOLDED:
        return word
    decomposed = unicodedata.normalize("NFD", word.replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _exceptions(language: str) -> dict[str, str]:
    """The lexicon's ``stems``: folded word -> stem, where Snowball's would join two words."""
    found = _data(language).get("stems")
    if not isinstance(found, dict):
        return {}
    return {fold(str(word), language): str(stemmed) for word, stemmed in found.items()}


@cache
def stem(word: str, language: str = "en") -> str:
    """The Snowball stem of a lower-case word (digits and symbols unchanged), folded first in
    a :data:`FOLDED` language, or the lexicon's exception for it."""
    word = fold(word.replace("'s", "").replace("'", ""), language)
    if word in _exceptions(language):
        return _exceptions(language)[word]
    return str(_stemmer(language).stemWord(word)) if word.isalpha() else word


def raw_tokens(text: str) -> list[str]:
    """Lower-case word tokens; ``^2`` and ``²`` become ``squared``, ``%`` is kept."""
    text = text.lower().replace("\u2019", "'").replace("^2", " squared ").replace("²", " squared ")
    return _TOKEN.findall(text.replace("%", " percent "))


def _stems(text: str, language: str) -> tuple[str, ...]:
    return tuple(stem(token, language) for token in raw_tokens(text))


@cache
def lexicon(language: str) -> Lexicon:
    """The committed lexicon of ``language`` (``bot/data/synonyms_<language>.json``), or an
    empty one (stemming only) for a language without a file."""
    data: dict[str, Any] = _data(language)
    concepts: dict[tuple[str, ...], str] = {}
    for group in data.get("groups", []):
        for entry in group:
            concepts.setdefault(_stems(entry, language), group[0])
    antonyms: dict[str, set[str]] = {}
    for left, right in data.get("antonyms", []):
        antonyms.setdefault(left, set()).add(right)
        antonyms.setdefault(right, set()).add(left)
    return Lexicon(
        language=language,
        concepts=concepts,
        implies={name: tuple(more) for name, more in data.get("implies", {}).items()},
        antonyms={name: frozenset(others) for name, others in antonyms.items()},
        stopwords=frozenset(stem(w, language) for w in data.get("stopwords", [])),
        negators=frozenset(fold(w.replace("'", ""), language) for w in data.get("negators", [])),
        negation_skip=frozenset(stem(w, language) for w in data.get("negation_skip", [])),
        ignorance=tuple(_stems(cue, language) for cue in data.get("ignorance", []))
        + tuple((*_stems(cue, language), _FINAL) for cue in data.get("ignorance_final", [])),
        fillers=frozenset(stem(w, language) for w in data.get("fillers", [])),
        clause_negators=frozenset(fold(w, language) for w in data.get("clause_negators", [])),
        dismissive=frozenset(stem(w, language) for w in data.get("dismissive", [])),
        common=frozenset(
            concepts.get(_stems(w, language), stem(w, language)) for w in data.get("common", [])
        ),
        longest=max((len(key) for key in concepts), default=1),
        prefixes=tuple(fold(p, language) for p in data.get("prefixes", ("un", "non", "in"))),
        compounds=bool(data.get("compounds", False)),
        label_factor=float(data.get("label_factor", 1.0)),
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """The concepts of a text: plain or negated (``not:`` prefix), and whether the candidate
    said they do not know something in it."""

    concepts: frozenset[str]
    unknown: bool = False
    implied: frozenset[str] = frozenset()
    """Broader concepts the words imply (``dijkstra``: a shortest-path algorithm); they weigh
    :data:`IMPLIED_FACTOR` and do not count as shown concepts for :data:`MIN_HITS`."""


def _clauses(text: str) -> list[str]:
    return [part for part in _CLAUSE.split(f" {text} ") if part and part.strip()]


def _has_cue(stems: Sequence[str], lex: Lexicon) -> bool:
    """Whether the clause says the candidate does not know (fillers ignored; a cue of the
    lexicon's ``ignorance_final`` only at the clause's end)."""
    joined = f" {' '.join(s for s in stems if s not in lex.fillers)} {_FINAL} "
    return any(f" {' '.join(cue)} " in joined for cue in lex.ignorance if cue)


def _compound(token: str, lex: Lexicon, vocabulary: frozenset[str]) -> list[str]:
    """A German compound the lexicon does not know as a whole, as its modifier and its head
    when the head is a lexicon word (the longest such head; a linking ``s``, ``n``, ``en`` or
    ``e`` left out of the modifier when the rest is known): ``kantengewichte`` is ``kanten``
    and ``gewichte``. Any other token as it is."""
    whole = stem(token, lex.language)
    if (
        not lex.compounds
        or not token.isalpha()
        or len(token) < 2 * COMPOUND_PART
        or (whole,) in lex.concepts
        or whole in vocabulary
        or whole in lex.stopwords
    ):
        return [token]
    for cut in range(COMPOUND_PART - 1, len(token) - COMPOUND_PART + 1):
        head = stem(token[cut:], lex.language)
        if (head,) not in lex.concepts or head in lex.stopwords:
            continue
        modifier = token[:cut]
        for link in ("s", "en", "n", "e"):
            bare = modifier.removesuffix(link)
            known = (stem(bare, lex.language),) in lex.concepts
            if bare != modifier and len(bare) >= COMPOUND_PART - 1 and known:
                modifier = bare
                break
        return [modifier, token[cut:]]
    return [token]


def _negatable(token: str, lex: Lexicon) -> bool:
    return token not in lex.negation_skip and token not in lex.negators


def _concept_at(stems: Sequence[str], i: int, lex: Lexicon) -> tuple[str | None, int]:
    """The concept starting at ``stems[i]`` (longest lexicon phrase first) and its length."""
    for size in range(min(lex.longest, len(stems) - i), 0, -1):
        found = lex.concepts.get(tuple(stems[i : i + size]))
        if found is not None:
            return found, size
    word = stems[i]
    if word in lex.stopwords:
        return None, 1
    return word, 1


def _polar(concept: str, negated: bool, lex: Lexicon) -> set[str]:
    """A concept with its polarity: a negated member of an antonym pair is its opposite."""
    if not negated:
        return {concept}
    opposite = lex.antonyms.get(concept)
    return set(opposite) if opposite else {NOT + concept}


def _implied(concept: str, lex: Lexicon) -> set[str]:
    bare = concept.removeprefix(NOT)
    prefix = NOT if concept.startswith(NOT) else ""
    return {prefix + more for more in lex.implies.get(bare, ())}


def read_clause(
    tokens: Sequence[str], lex: Lexicon, vocabulary: frozenset[str]
) -> tuple[set[str], set[str]]:
    """The concepts of one clause's raw tokens (see the module docstring), and the broader
    concepts they imply."""
    tokens = [part for token in tokens for part in _compound(token, lex, vocabulary)]
    stems = [stem(t, lex.language) for t in tokens]
    out: set[str] = set()
    implied: set[str] = set()
    negate = quantified = dismissed = False
    i = 0
    while i < len(stems):
        raw = fold(tokens[i].replace("'", ""), lex.language)
        if raw in lex.negators:
            negate, i = True, i + 1
            quantified = quantified or raw in lex.clause_negators
            continue
        if negate and stems[i] in lex.dismissive:
            dismissed = True
        concept, size = _concept_at(stems, i, lex)
        concept, negated = _unprefixed(concept, raw, size, lex, vocabulary)
        if concept is not None:
            concept = _spelled(concept, vocabulary, lex)
            flip = negate or (quantified and concept in lex.antonyms)
            for found in _polar(concept, flip != negated, lex):
                out.add(found)
                implied |= _implied(found, lex)
            negate = False
        elif negate and _negatable(stems[i], lex):
            negate = False
        i += size
    if dismissed:
        return {c if c.startswith(NOT) else NOT + c for c in out}, set()
    return out, implied


def _unprefixed(
    concept: str | None, raw: str, size: int, lex: Lexicon, vocabulary: frozenset[str]
) -> tuple[str | None, bool]:
    """``unsettled`` / ``non-negative`` / ``nonnegative``: the negated known concept, when the
    whole word is not itself known."""
    if concept is None or size > 1 or (concept,) in lex.concepts or concept in vocabulary:
        return concept, False
    for prefix in lex.prefixes:
        rest = raw.removeprefix(prefix).lstrip("-")
        if rest != raw and len(rest) > 3:
            known = lex.concepts.get((stem(rest, lex.language),))
            if known is not None:
                return known, True
    return concept, False


def _spelled(concept: str, vocabulary: frozenset[str], lex: Lexicon) -> str:
    """A word neither known to the lexicon nor in the target's vocabulary, read as the
    vocabulary word one edit away (two for words of nine letters or more)."""
    if concept in vocabulary or len(concept) < 5 or (concept,) in lex.concepts:
        return concept
    if concept in lex.concepts.values():
        return concept
    allowed = 2 if len(concept) >= 9 else 1
    best = min(
        (w for w in vocabulary if abs(len(w) - len(concept)) <= allowed and not w.startswith(NOT)),
        key=lambda w: (_edits(concept, w), w),
        default=None,
    )
    return best if best is not None and _edits(concept, best) <= allowed else concept


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (with adjacent transpositions)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, previous2[j - 2] + 1)
            row.append(cost)
        previous2, previous = previous, row
    return previous[-1]


def read(
    text: str, lex: Lexicon, vocabulary: frozenset[str] = frozenset(), *, implied: bool = True
) -> Reading:
    """The concepts of ``text``; clauses where the candidate says they do not know are left
    out (and flagged). ``implied``: add the broader concepts terms imply (answers, not
    targets: a target asks for what it says)."""
    concepts: set[str] = set()
    broader: set[str] = set()
    unknown = False
    for clause in _clauses(text):
        tokens = raw_tokens(clause)
        stems = [stem(t, lex.language) for t in tokens]
        if _has_cue(stems, lex):
            unknown = True
            continue
        said, more = read_clause(tokens, lex, vocabulary)
        concepts |= said
        broader |= more
    return Reading(
        frozenset(concepts), unknown, frozenset(broader - concepts) if implied else frozenset()
    )


@dataclass(frozen=True, slots=True)
class Judgement:
    """How well an answer shows one target."""

    target_index: int
    hits: frozenset[str]
    score: float
    """Weight of the shown concepts over the target's (capped) weight, 0..1+."""
    contradicted: bool

    @property
    def met(self) -> bool:
        return not self.contradicted and len(self.hits) >= MIN_HITS and self.score >= THRESHOLD


@dataclass(frozen=True, slots=True)
class NodeMatcher:
    """The matcher of one node: its targets read once, with their concept weights."""

    language: str
    readings: tuple[frozenset[str], ...]
    weights: dict[str, float] = field(default_factory=dict)

    @property
    def lex(self) -> Lexicon:
        return lexicon(self.language)

    @property
    def vocabulary(self) -> frozenset[str]:
        return frozenset().union(*self.readings) if self.readings else frozenset()

    def judge(self, text: str, index: int) -> Judgement:
        """How well ``text`` shows target ``index``."""
        answer = read(text, self.lex, self.vocabulary)
        return self._judge(answer, index)

    def _judge(self, answer: Reading, index: int) -> Judgement:
        target = self.readings[index]
        hits = target & answer.concepts
        total = sum(self.weights[c] for c in target)
        shown = sum(self.weights[c] for c in hits)
        shown += IMPLIED_FACTOR * sum(self.weights[c] for c in (target & answer.implied) - hits)
        if answer.unknown:
            shown *= IGNORANCE_FACTOR
        score = shown / min(total, WEIGHT_CAP) if total else 0.0
        return Judgement(index, frozenset(hits), score, self._contradicts(answer, target))

    def _contradicts(self, answer: Reading, target: frozenset[str]) -> bool:
        """Whether the answer asserts the opposite of a target concept (an antonym, or the plain
        form of a concept the target only has negated) and never the concept itself."""
        for concept in target - answer.concepts:
            bare = concept.removeprefix(NOT)
            if concept.startswith(NOT):
                opposites = {bare} - target
            else:
                opposites = set(self.lex.antonyms.get(bare, frozenset())) - target
            if opposites & answer.concepts:
                return True
        return False

    def judge_all(self, text: str) -> list[Judgement]:
        """``text`` judged against every target of the node."""
        answer = read(text, self.lex, self.vocabulary)
        return [self._judge(answer, index) for index in range(len(self.readings))]


def _target_text(target: TargetLike) -> str:
    return f"{target.label}. {target.description}"


def node_matcher(
    targets: Sequence[TargetLike], context: str = "", language: str = "en"
) -> NodeMatcher:
    """A matcher for a node's ``targets``; ``context`` (the opening question) weighs down the
    concepts it already says."""
    lex = lexicon(language)
    readings = tuple(read(_target_text(t), lex, implied=False).concepts for t in targets)
    described = (read(t.description, lex, implied=False).concepts for t in targets)
    titled = {c for reading, said in zip(readings, described, strict=True) for c in reading - said}
    asked = read(context, lex, implied=False).concepts if context else frozenset()
    documents = [*readings, asked] if context else list(readings)
    weights: dict[str, float] = {}
    for concept in frozenset().union(*readings) if readings else frozenset():
        frequency = sum(concept in document for document in documents)
        weight = math.log(1 + len(documents) / frequency)
        if concept in asked:
            weight *= CONTEXT_DISCOUNT
        if concept.removeprefix(NOT) in lex.common:
            weight *= COMMON_FACTOR
        if concept in titled:
            weight *= lex.label_factor
        weights[concept] = weight
    return NodeMatcher(language, readings, weights)


def confidence(judgement: Judgement) -> float:
    """A report confidence in [0.55, 0.95] growing with the shown share of the target."""
    return round(min(0.95, 0.55 + 0.4 * min(1.0, judgement.score)), 2)
