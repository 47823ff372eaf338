"""OUT-002 for rubric level labels and outcome names: a label used as a verdict (issue #31).

A rubric level label (``Mostly complete``, ``Fragmentary``: the short rubric texts of the node,
at most :data:`MAX_LABEL_WORDS` words) or an outcome name (:data:`OUTCOME_NAMES`: the rubric's
level names and common grades) is too short for the run and paraphrase checks of
``rubric_leak``, and most labels are ordinary words. So a label counts as leaked only where it
is a judgement about the candidate's answer:

* after a verdict subject and a copula: "That answer is mostly complete", "it's fragmentary",
  "your explanation was a partial one", "das ist weitgehend vollständig", "eso es fragmentario";
* after the examiner's own judging verb: "I'd call that fragmentary", "I would rate it as
  satisfactory", "that counts as excellent", "marked as partial";
* as a level named as such: "Level: mostly complete", "the grade is a merit", "in the
  fragmentary band";
* as a sentence of its own: "Mostly complete." (a filler such as "I'd say" or "overall" allowed).

The label must end its clause (punctuation, the end, a conjunction) or be followed by a noun
for the answer ("a fragmentary answer"), so "a partial order" and "a complete graph" pass, as
does "complete" used as a verb ("Could you complete the picture?"). A subject-and-copula frame
inside a question the candidate is asked ("Would you say your answer is complete?") is not a
verdict; a judging verb is one in a question too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ioa.output_filters.base import RubricText
from ioa.output_filters.text import normalise, words

MAX_LABEL_WORDS: Final = 4
"""Rubric texts of at most this many words are labels (longer ones are descriptions, which the
run and paraphrase checks cover)."""

OUTCOME_NAMES: Final = (
    "excellent",
    "satisfactory",
    "partial",
    "absent",
    "distinction",
    "merit",
    "pass",
    "fail",
    "insufficient",
    "unsatisfactory",
)
"""The rubric's level names and common grade names: judgements when used as a verdict."""
OUTCOME: Final = "outcome"
"""What :func:`verdict_label` names for an outcome name (no target)."""

_WS: Final = r"\s+"
_SUBJECT: Final = (
    r"(?:that|this|it|which|(?:your|the|that|this)\s+(?:\w+\s+)?"
    r"(?:answer|explanation|response|reply|description|account|attempt|reasoning|work|"
    r"argument|summary|picture|coverage|understanding|plan|approach|proposal|analysis)|"
    r"you|das|dies|es|ihre\s+antwort|deine\s+antwort|eso|esto|su\s+respuesta|"
    r"tu\s+respuesta|la\s+respuesta)"
)
_COPULA: Final = (
    r"(?:is|was|were|are|s|re|seems|seemed|sounds|sounded|looks|looked|feels|remains|"
    r"would\s+be|will\s+be|d\s+be|counts\s+as|qualifies\s+as|comes\s+across\s+as|"
    r"falls\s+(?:into|under)|sits\s+(?:at|in)|ist|war|wäre|klingt|wirkt|bleibt|es|fue|"
    r"sería|parece|está|resulta)"
)
_JUDGE: Final = (
    r"(?:call|calling|called|rate|rating|rated|mark|marking|marked|grade|grading|graded|"
    r"score|scoring|scored|class|classed|classify|classified|classifying|count|counted|"
    r"judge|judged|assess|assessed|put|place|placed|rank|ranked|describe|consider|"
    r"considered|regard|regarded|label|labelled|labeled|bewerte|bewerten|einstufen|"
    r"califico|calificaría|calificar|considero|consideraría)"
)
_OBJECT: Final = r"(?:(?:that|this|it|your\s+\w+|the\s+answer|you|das|es|eso|esto)\s+)?"
_PREP: Final = r"(?:(?:as|at|in|into|under|als|como|de)\s+)?"
_DET: Final = r"(?:(?:a|an|the|rather|quite|very|fairly|pretty|still|only|somewhat|more|"
_DET2: Final = r"largely|mainly|basically|essentially|just|eher|ziemlich|noch|un|una|algo)\s+)*"
_KIND: Final = r"(?:level|band|grade|mark|rating|category|outcome|stufe|nivel)"
_ENDS: Final = (
    r"(?=\s*(?:[.,;:!?)\"']|$|(?:and|but|though|so\s+far|overall|for\s+now|at\s+best|"
    r"at\s+this\s+point|i\s+think|i\s+d\s+say|y|pero|und|aber)(?![^\W_])|"
    r"(?:answer|explanation|response|reply|one|attempt|account|description|picture|"
    r"level|band|grade|work|coverage|antwort|respuesta)(?![^\W_])))"
)
_FILLERS: Final = frozenset(
    words("I'd say, I would say, overall, so far, honestly, that's, for now, then, well, hmm, ok")
)
"""Words that may stand around a label that is a sentence of its own ("Overall: fragmentary.")."""


def _alternatives(labels: Iterable[str]) -> str:
    bodies = sorted({_WS.join(map(re.escape, words(label))) for label in labels}, key=len)
    return "|".join(reversed(bodies))


@dataclass(frozen=True, slots=True)
class LabelIndex:
    """The verdict patterns of one node's labels (built once per set of rubric texts)."""

    statement: re.Pattern[str] | None
    """Frames that are verdicts in a statement (subject and copula)."""
    anywhere: re.Pattern[str] | None
    """Frames that are verdicts even in a question (judging verb, a level named)."""
    targets: dict[str, str]
    """Label words (space-joined) -> the target they belong to (:data:`OUTCOME` for names)."""
    first_words: tuple[str, ...] | None = None
    """The first word of every label when all are ASCII (else None): a pattern can only match
    a sentence that contains one of them, so an ASCII sentence without any is not searched."""


@lru_cache(maxsize=256)
def label_index(rubric_texts: tuple[RubricText, ...]) -> LabelIndex:
    """The node's labels (short rubric texts) and the outcome names as verdict patterns."""
    targets: dict[str, str] = {name: OUTCOME for name in OUTCOME_NAMES}
    for item in rubric_texts:
        tokens = words(item.text)
        if 0 < len(tokens) <= MAX_LABEL_WORDS:
            targets[" ".join(tokens)] = item.target_id
    alternatives = _alternatives(targets)
    det = _DET + _DET2

    def label(n: int) -> str:
        return rf"(?P<l{n}>{alternatives})"

    statement = (
        rf"(?<![^\W_]){_SUBJECT}{_WS}{_COPULA}{_WS}{det}{label(1)}{_ENDS}|"
        rf"[,:;\u2013-]\s*{det}{label(2)}\s*[.!]?\s*$"
    )
    anywhere = (
        rf"(?<![^\W_])(?:{_JUDGE}{_WS}{_OBJECT}{_PREP}{det}{label(3)}{_ENDS}|"
        rf"{_KIND}\s*(?:is|was|would\s+be|:|ist|es)\s*{det}{label(4)}{_ENDS}|"
        rf"{_PREP}(?:the|a|an|der|die|el|la)\s+{label(5)}\s+{_KIND}(?![^\W_]))"
    )
    firsts = tuple(sorted({words(label)[0] for label in targets}))
    return LabelIndex(
        re.compile(statement, re.IGNORECASE),
        re.compile(anywhere, re.IGNORECASE),
        targets,
        firsts if all(first.isascii() for first in firsts) else None,
    )


_NOT_PLAIN: Final = re.compile(r"[^\w\s.,;:!?]")


def _plain(text: str) -> str:
    """``text`` as space-separated lower-case words, punctuation kept where it ends a clause."""
    return _NOT_PLAIN.sub(" ", normalise(text))


def _may_match(plain: str, index: LabelIndex) -> bool:
    """False when no pattern of ``index`` can match ``plain``: every pattern ends in a label,
    matched literally (case-insensitively, and ``plain`` is lower case), so a match contains
    a label's first word. Decided only for ASCII texts and labels (case folding of other
    scripts can match a different spelling); otherwise True."""
    firsts = index.first_words
    if firsts is None or not plain.isascii():
        return True
    return any(first in plain for first in firsts)


def verdict_label(sentence: str, index: LabelIndex) -> str | None:
    """The target (or :data:`OUTCOME`) of a label ``sentence`` uses as a verdict, else None."""
    tokens = words(sentence)
    if not tokens:
        return None
    plain = _plain(sentence)
    found = None
    if _may_match(plain, index):
        found = index.anywhere.search(plain) if index.anywhere else None
        if found is None and index.statement is not None and not sentence.rstrip().endswith("?"):
            found = index.statement.search(plain)
    if found is not None:
        matched = next(group for group in found.groups() if group)
        return index.targets.get(" ".join(words(matched)), OUTCOME)
    rest = [token for token in tokens if token not in _FILLERS]
    return index.targets.get(" ".join(rest)) if rest else None
