#!/usr/bin/env python
"""Train the command classifier's learned stage (``ioa.runtime.command_model``) and measure how
it reads phrasings it was not trained on (issue #31).

For each language: a multinomial logistic regression (the commands the sets hold and
``none``) over the counts of the features of :func:`ioa.runtime.command_model.features` that
occur in at least two training utterances, L2-regularised, fitted by full-batch Adam from zero
(deterministic: no random start, no shuffling), then pruned (weights under :data:`PRUNE`
dropped, the rest rounded) and measured *as pruned*, through the pure-Python model the runtime
uses.

* ``--leave-out``: for each blind set (``holdout3`` ... the newest), train without it and read
  it with the rules alone, the model alone and both (rules, cue scorer, then the model). The
  rules were tuned on these sets since they were first measured, so only the model's columns
  are phrasings it was not fitted on.
  ``--only NAME`` leaves out that set alone.
* ``--exclude NAME``: leave a set out of the training (a blind set not yet measured).
* ``--write``: train on every set (minus ``--exclude``) and write
  ``ioa/runtime/data/command_model_<language>.json``.

Usage: ``python bench/train_command_model.py [--leave-out] [--exclude holdout6] [--write]``
(needs numpy, which the bot's requirements install).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ioa.runtime.agent_boundary import candidate_command  # noqa: E402
from ioa.runtime.classifier import command_sized, learned_reading, rules_command  # noqa: E402
from ioa.runtime.command_model import NONE_CLASS, CommandModel, features  # noqa: E402
from ioa.schema import CandidateCommandType  # noqa: E402

SET_DIR = ROOT / "tests" / "ioa" / "runtime" / "command_set"
TRAINING_DIR = SET_DIR / "training"
"""Utterances written to train this stage (``<language>_train<N>.jsonl``), not to measure the
classifier: ``tests/ioa/runtime/test_command_set.py`` and ``bench/commands.py`` read only the
sets beside it."""
DATA_DIR = ROOT / "ioa" / "runtime" / "data"
LANGUAGES = ("en", "de", "es")
MIN_COUNT = 2
L2 = 3e-3
EPOCHS = 400
LEARNING_RATE = 0.05
PRUNE = 0.02
Row = tuple[str, str | None]


def load(language: str, exclude: set[str]) -> dict[str, list[Row]]:
    """The labelled sets of ``language`` by name (``main``, ``holdout``, ``holdout2``...), and
    the training sets (``train1``...)."""
    sets: dict[str, list[Row]] = {}
    paths = [
        *sorted(SET_DIR.glob(f"{language}*.jsonl")),
        *sorted(TRAINING_DIR.glob(f"{language}*.jsonl")),
    ]
    for path in paths:
        name = path.stem.removeprefix(language).removeprefix("_") or "main"
        if name in exclude:
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        sets[name] = [(row["text"], row["command"]) for row in rows if row]
    return sets


def train(rows: list[Row]) -> CommandModel:
    """The pruned model fitted on ``rows``."""
    classes = (NONE_CLASS, *sorted(c.value for c in CandidateCommandType))
    present = sorted({command or NONE_CLASS for _, command in rows})
    classes = tuple(name for name in classes if name in present)
    counts: dict[str, int] = {}
    featured = [features(text) for text, _ in rows]
    for found in featured:
        for feature in set(found):
            counts[feature] = counts.get(feature, 0) + 1
    vocabulary = {
        f: i for i, f in enumerate(sorted(f for f, n in counts.items() if n >= MIN_COUNT))
    }
    x = np.zeros((len(rows), len(vocabulary)), dtype=np.float64)
    for row, found in enumerate(featured):
        for feature in found:
            if feature in vocabulary:
                x[row, vocabulary[feature]] += 1.0
    y = np.zeros((len(rows), len(classes)))
    for row, (_, command) in enumerate(rows):
        y[row, classes.index(command or NONE_CLASS)] = 1.0
    w = np.zeros((len(vocabulary), len(classes)))
    b = np.zeros(len(classes))
    moments = [np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)]
    for step in range(1, EPOCHS + 1):
        logits = x @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        error = (p - y) / len(rows)
        grads = (x.T @ error + L2 * w, error.sum(axis=0))
        for index, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m, v = moments[2 * index], moments[2 * index + 1]
            m[:] = 0.9 * m + 0.1 * grad
            v[:] = 0.999 * v + 0.001 * grad * grad
            m_hat = m / (1 - 0.9**step)
            v_hat = v / (1 - 0.999**step)
            param -= LEARNING_RATE * m_hat / (np.sqrt(v_hat) + 1e-8)
    weights: dict[str, list[list[float]]] = {}
    for feature, column in vocabulary.items():
        kept = [
            [index, round(float(value), 3)]
            for index, value in enumerate(w[column])
            if abs(value) >= PRUNE
        ]
        if kept:
            weights[feature] = kept
    document = {
        "classes": list(classes),
        "bias": [round(float(value), 3) for value in b],
        "weights": weights,
    }
    return CommandModel.from_json(document)


def document(model: CommandModel) -> dict[str, object]:
    return {
        "classes": list(model.classes),
        "bias": list(model.bias),
        "weights": {f: [list(pair) for pair in pairs] for f, pairs in model.weights.items()},
    }


def figures(
    rows: list[Row], language: str, model: CommandModel | None, *, rules: bool = True
) -> tuple[float, float]:
    """(recall, false positives) of the classifier on ``rows``: rules and cue scorer, then
    ``model`` (None: the rules alone; ``rules`` false: the model alone), its reading taken as
    the runtime takes it (:func:`ioa.runtime.classifier.learned_reading`)."""

    def detect(text: str, lang: str) -> CandidateCommandType | None:
        ruled = rules_command(text, lang) if rules else None
        if ruled is not None or model is None or not command_sized(text, lang):
            return ruled
        return learned_reading(text, lang, model.command(text), model)

    commands = [(text, command) for text, command in rows if command is not None]
    answers = [text for text, command in rows if command is None]
    hits = sum(candidate_command(t, language, detect=detect) == c for t, c in commands)
    false = sum(candidate_command(t, language, detect=detect) is not None for t in answers)
    return hits / max(1, len(commands)), false / max(1, len(answers))


def leave_out(language: str, sets: dict[str, list[Row]], only: str | None = None) -> None:
    blind = [name for name in sets if name.startswith("holdout") and name[7:].isdigit()]
    if only is not None:
        blind = [name for name in blind if name == only]
    for name in sorted(blind, key=lambda n: int(n[7:])):
        rows = [row for other, rows in sets.items() if other != name for row in rows]
        model = train(rows)
        rules = figures(sets[name], language, None)
        alone = figures(sets[name], language, model, rules=False)
        both = figures(sets[name], language, model)
        print(
            f"{language} {name:9} rules alone: recall {rules[0]:6.1%} FP {rules[1]:5.1%}"
            f"   model alone: recall {alone[0]:6.1%} FP {alone[1]:5.1%}"
            f"   both: recall {both[0]:6.1%} FP {both[1]:5.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leave-out", action="store_true")
    parser.add_argument("--only", help="with --leave-out: this blind set alone")
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    for language in LANGUAGES:
        sets = load(language, set(args.exclude))
        if args.leave_out:
            leave_out(language, sets, args.only)
        if args.write:
            started = time.perf_counter()
            model = train([row for rows in sets.values() for row in rows])
            path = DATA_DIR / f"command_model_{language}.json"
            text = json.dumps(document(model), ensure_ascii=False, separators=(",", ":"))
            path.write_text(text + "\n", encoding="utf-8")
            took = time.perf_counter() - started
            print(
                f"{language}: {len(model.weights)} features, {len(text) / 1000:.0f} kB,"
                f" trained in {took:.1f} s -> {path.relative_to(ROOT)}"
            )


if __name__ == "__main__":
    main()
