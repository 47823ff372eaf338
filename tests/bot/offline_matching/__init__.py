"""Labelled answers for the offline examiner's matcher (issue #31), and how they are scored.

One JSON Lines file per example package and set: ``<package>.main.jsonl`` (the set the matcher
was tuned on) and ``<package>.heldout.jsonl`` (written after tuning, never tuned on), where
``<package>`` is the package's file name in ``examples/`` without ``.json`` (so the German
package ``cs201-graph-algorithms.de.json`` has ``cs201-graph-algorithms.de.main.jsonl``). Each line
is ``{"target": id, "text": answer, "covers": bool}``: a paraphrased correct answer in a
candidate's own words (``covers`` true) or an incorrect or vague one that reuses the target's
words without showing the understanding (``covers`` false).

An answer is scored as the offline examiner meets it: against all evidence targets of its node
(id, label and description as the compiled task message lists them), with the node's opening
question as context, in the package's language (``metadata.language``; English without one). It
counts as credited when its own target is among the matched ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
EXAMPLES: Final = HERE.parents[2] / "examples"
PACKAGES: Final = (
    "cs201-graph-algorithms",
    "hosp210-hotel-breakfast-scenario",
    "med305-chest-pain-station",
)
"""The English example packages."""
TRANSLATED_PACKAGES: Final = ("cs201-graph-algorithms.de", "cs201-graph-algorithms.es")
"""The German and Spanish versions of CS201 (labelled by hand in their languages, not
translated from the English sets)."""
ALL_PACKAGES: Final = PACKAGES + TRANSLATED_PACKAGES
SETS: Final = ("main", "heldout")

Matcher = Callable[[str, Sequence[Any], str, str], Sequence[str]]
"""``(answer, node targets, opening question, language) -> ids of the matched targets``."""


@dataclass(frozen=True, slots=True)
class NodeTargets:
    """The evidence targets of one node, as ``(id, label, description)``, its opening and the
    package's language."""

    targets: tuple[tuple[str, str, str], ...]
    opening: str
    language: str = "en"


@dataclass(frozen=True, slots=True)
class Item:
    """One labelled answer."""

    package: str
    target: str
    text: str
    covers: bool


@dataclass(frozen=True, slots=True)
class Score:
    """Recall on correct answers and false-positive rate on incorrect ones."""

    correct: int
    credited: int
    incorrect: int
    false_positives: int

    @property
    def recall(self) -> float:
        return self.credited / self.correct if self.correct else 1.0

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.incorrect if self.incorrect else 0.0


def _document(package: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EXAMPLES / f"{package}.json").read_text("utf-8"))
    return document


def language(package: str) -> str:
    """The package's language (``metadata.language``; English without one)."""
    return str((_document(package).get("metadata") or {}).get("language") or "en")


def node_targets(package: str) -> dict[str, NodeTargets]:
    """For each target id of ``package``: its node's targets, opening question and language."""
    document = _document(package)
    lang = language(package)
    found: dict[str, NodeTargets] = {}
    for node in document["nodes"]:
        targets = tuple(
            (t["id"], t.get("label", ""), t.get("description", ""))
            for t in node.get("evidenceTargets") or []
        )
        opening = str((node.get("prompt") or {}).get("opening", ""))
        for target_id, _, _ in targets:
            found[target_id] = NodeTargets(targets, opening, lang)
    return found


def items(package: str, which: str) -> Iterator[Item]:
    """The labelled answers of one package and set (``main`` or ``heldout``)."""
    path = HERE / f"{package}.{which}.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            yield Item(package, str(row["target"]), str(row["text"]), bool(row["covers"]))


def score(package: str, which: str, matcher: Matcher) -> tuple[Score, list[Item]]:
    """``matcher`` scored on one package and set, with the items it got wrong."""
    nodes = node_targets(package)
    counts = {"correct": 0, "credited": 0, "incorrect": 0, "false_positives": 0}
    wrong: list[Item] = []
    for item in items(package, which):
        node = nodes[item.target]
        credited = item.target in matcher(item.text, node.targets, node.opening, node.language)
        if item.covers:
            counts["correct"] += 1
            counts["credited"] += credited
        else:
            counts["incorrect"] += 1
            counts["false_positives"] += credited
        if credited != item.covers:
            wrong.append(item)
    return Score(**counts), wrong


def total(scores: Sequence[Score]) -> Score:
    """The scores summed."""
    return Score(
        sum(s.correct for s in scores),
        sum(s.credited for s in scores),
        sum(s.incorrect for s in scores),
        sum(s.false_positives for s in scores),
    )
