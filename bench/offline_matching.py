#!/usr/bin/env python
"""The offline examiner's matcher on labelled paraphrases (issue #31).

For each example package (the English ones, and the German and Spanish versions of CS201) and
each labelled set (``main``: tuned on; ``heldout``: never tuned on, written after tuning for
English and before the German and Spanish lexicons for those), prints the recall on correct
answers in the candidate's own words and the false-positive rate on incorrect or vague answers
that reuse the target's words, for:

* **now**: ``bot.offline_examiner.match_targets`` (the lexical-semantic matcher,
  ``bot/offline_matching.py``), in the package's language;
* **baseline**: the content-word overlap matcher it replaced, kept below verbatim and computed
  on the same sets (nothing hard-coded; it knew English only).

Each language's packages are followed by their total (``all en``, ``all de``, ``all es``);
the figures, before and after the German and Spanish lexicons, are in docs/bot.md. The sets and
their scoring are in ``tests/bot/offline_matching/``. Pure: no database, no network. Usage:
``python bench/offline_matching.py [--wrong]`` (``--wrong`` lists the misses).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.offline_examiner import STOPWORDS, Target, match_targets  # noqa: E402
from tests.bot.offline_matching import (  # noqa: E402
    ALL_PACKAGES,
    SETS,
    Item,
    Matcher,
    Score,
    language,
    score,
    total,
)

# --- the baseline: the matcher before issue #31 (content-word overlap) ----------------------------

_GENERIC: Final = frozenset(
    [
        "candidate",
        "says",
        "say",
        "explains",
        "explain",
        "states",
        "state",
        "identifies",
        "identify",
        "names",
        "name",
        "picks",
        "pick",
        "describes",
        "describe",
        "mentions",
        "mention",
        "justifies",
        "justify",
        "uses",
        "use",
        "using",
        "gives",
        "give",
        "shows",
        "show",
        "either",
        "such",
        "already",
    ]
)
_IRREGULAR: Final = {"vertices": "vertex", "indices": "index", "matrices": "matrix"}


def _baseline_stem(word: str) -> str:
    word = word.strip("'()/-").removesuffix("'s")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _baseline_words(text: str) -> set[str]:
    out = set()
    for token in re.findall(r"[^\W_][\w'+^()/-]*", text.lower()):
        stemmed = _baseline_stem(token)
        if len(stemmed) >= 2 and stemmed not in STOPWORDS and stemmed not in _GENERIC:
            out.add(stemmed)
    return out


def baseline(
    answer: str, targets: Sequence[tuple[str, str, str]], opening: str, language: str
) -> list[str]:
    """The pre-#31 ``match_targets``: >= 3 shared content words, or >= 2 and >= 30 % (English
    stemming and stop words whatever the language: it had no other)."""
    said = _baseline_words(answer)
    matched = []
    for target_id, label, description in targets:
        vocabulary = _baseline_words(f"{label} {description}")
        hits = len(vocabulary & said)
        if vocabulary and (hits >= 3 or (hits >= 2 and hits / len(vocabulary) >= 0.3)):
            matched.append(target_id)
    return matched


def now(
    answer: str, targets: Sequence[tuple[str, str, str]], opening: str, language: str
) -> list[str]:
    """Today's ``bot.offline_examiner.match_targets``, with the opening question as context, in
    the package's language."""
    found = match_targets(answer, [Target(*t) for t in targets], context=opening, language=language)
    return [target.id for target, _ in found]


MATCHERS: Final[dict[str, Matcher]] = {"now": now, "baseline": baseline}


def _line(name: str, which: str, matcher: str, result: Score) -> str:
    return (
        f"{name:34} {which:8} {matcher:9} recall {result.recall:6.1%} "
        f"({result.credited:3}/{result.correct:3})   false positives "
        f"{result.false_positive_rate:6.1%} ({result.false_positives:3}/{result.incorrect:3})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wrong", action="store_true", help="list the answers misjudged now")
    args = parser.parse_args(argv)
    wrong: list[Item] = []
    languages: dict[str, list[str]] = {}
    for package in ALL_PACKAGES:
        languages.setdefault(language(package), []).append(package)
    for which in SETS:
        for matcher_name, matcher in MATCHERS.items():
            for lang, packages in languages.items():
                results = []
                for package in packages:
                    result, missed = score(package, which, matcher)
                    results.append(result)
                    if matcher_name == "now":
                        wrong.extend(missed)
                    print(_line(package, which, matcher_name, result))
                print(_line(f"all {lang}", which, matcher_name, total(results)))
        print()
    if args.wrong:
        for item in wrong:
            kind = "missed" if item.covers else "false positive"
            name = item.package.split("-")[0] + item.package.removeprefix(
                item.package.split(".")[0]
            )
            print(f"{kind:15} {name:9} {item.target:26} {item.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
