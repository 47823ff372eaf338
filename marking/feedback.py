"""What a candidate may see of their released result: the author's choice, in the package.

``metadata.extensions.results.candidateFeedback`` is one of

* ``none`` — only that the result was released (and the appeal form);
* ``score`` — the exam score (the default: an author who says nothing shows the score only);
* ``outcomes`` — the score and a score per learning outcome (the outcomes' own text);
* ``levels`` — the above and, per evidence target, its label and the level reached
  (Excellent, Satisfactory, Partial, Absent).

Never shown, whatever the choice: rubric descriptors, the marker's rules, signals, evidence,
transcripts, flags, panel or second-marker data, moderators' rationales (the candidate's
browser never receives rubric text or evidence).
"""

from __future__ import annotations

import functools
import json
from enum import StrEnum

from publishing.models import PublishedVersion


class Feedback(StrEnum):
    NONE = "none"
    SCORE = "score"
    OUTCOMES = "outcomes"
    LEVELS = "levels"

    @property
    def shows_score(self) -> bool:
        return self is not Feedback.NONE

    @property
    def shows_outcomes(self) -> bool:
        return self in (Feedback.OUTCOMES, Feedback.LEVELS)

    @property
    def shows_levels(self) -> bool:
        return self is Feedback.LEVELS


DEFAULT = Feedback.SCORE


@functools.lru_cache(maxsize=128)
def _from_document(checksum: str, canonical_json: str) -> Feedback:
    try:
        document = json.loads(canonical_json)
    except ValueError:
        return DEFAULT
    extensions = (document.get("metadata") or {}).get("extensions") or {}
    results = extensions.get("results") if isinstance(extensions, dict) else None
    value = results.get("candidateFeedback") if isinstance(results, dict) else None
    if value is None:
        return DEFAULT
    try:
        return Feedback(value)
    except ValueError:
        return Feedback.NONE  # fail closed: show less than the author may have meant


def feedback_for(version: PublishedVersion) -> Feedback:
    """The feedback the author of ``version`` (a ``PublishedVersion``) allows (module
    docstring). Absent: :data:`DEFAULT`; an unknown value: ``none`` (fail closed)."""
    return _from_document(version.checksum, version.canonical_json)
