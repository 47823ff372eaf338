#!/usr/bin/env python
"""The rule-based command classifier on the labelled command set (issue #31).

Reads ``tests/ioa/runtime/command_set/<language>.jsonl`` (the set the rules were tuned on),
``<language>_holdout.jsonl`` (phrasings written after tuning, measured before the fixes it led
to), ``<language>_holdout2.jsonl`` (fresh phrasings written after those fixes),
``<language>_holdout3.jsonl`` (written blind: by someone who never read the classifier or the
other sets; first measured at 58.6 / 44.3 / 37.1 % recall, 0 % FP, en / de / es) and
``<language>_holdout4.jsonl`` (blind again, written while the rules were reworked on the
others into the cue scorer, measured once after: 86.2 / 73.8 / 73.8 % recall, 0.0 / 0.0 / 1.7 %
false positives, en / de / es; holdout3, tuned on by then, 97.1 / 98.6 / 100 %) and
``<language>_holdout5.jsonl`` (blind a third time, many kinds of candidate, first measured after
the rules were tuned on set 4: 78.3 / 68.3 / 78.3 % recall, 0 % FP; then tuned on) and
``<language>_holdout6.jsonl`` (blind a fourth time, measured once with the learned stage trained
without it: rules 77.4 / 64.5 / 73.0 %, with the model 80.6 / 74.2 / 79.4 % recall, 3.1 / 1.5 /
1.5 % FP; then trained and tuned on) and ``<language>_holdout7.jsonl`` (blind a fifth time,
every command of the vocabulary, written from the command names alone, measured once before
any change: 65.9 / 63.4 / 61.0 % recall, 0 % FP; the six commands the classifier had no cues
for were a third of its commands; then tuned and trained on: 100 / 100 / 100 %),
``<language>_holdout8.jsonl`` (blind a sixth time, measured once before any change: 67.1 / 67.1
/ 63.2 % recall, 1.4 / 1.4 / 0 % FP; then used to choose the learned stage's threshold with its
first training set, ``training/<language>_train1.jsonl``, and trained on) and
``<language>_holdout9.jsonl`` (blind a seventh time, by personas; measured once after that:
76.3 / 82.9 / 89.5 % recall, 1.4 / 0 / 0 % FP, where the code before read 60.5 / 69.7 / 72.4 %;
then trained on), ``<language>_holdout10.jsonl`` (blind an eighth time, by situation; measured
once before any change: 57.9 / 67.1 / 60.5 % recall, 0 / 0 / 1.4 % FP; then the long-turn
sentence reading was added and it was trained on), ``<language>_holdout11.jsonl`` (blind a
ninth time, 5 per command, hard answers; measured once before any change: 77.2 / 73.9 / 73.3 %
recall, 0 % FP; with the third training set and the model trained without it 83.7 / 80.7 /
77.9 %; then trained on), ``<language>_holdout12.jsonl`` (blind a tenth time, 5 per command
and about 80 answers with innocent command words, written without reading the classifier;
measured once before any change: 72.6 / 71.6 / 67.4 % recall, 0 / 1.3 / 0 % FP; then its rule
misreadings were fixed as mechanisms (an acute danger of the candidate's own is an emergency, a
wager on the answer is confidence, going on to another question is a skip and with the exam a
resume, "again" after a state is no repeat, rephrasing is asked of the examiner): 75.8 / 75.8 /
68.4 %, 0 % FP with the model of the time; with the fourth training set
(``training/<language>_train4.jsonl``) and the model trained without set 12, 78.9 / 75.8 /
72.6 %, 0 % FP; then trained on: 90.5 / 92.6 / 90.5 %, all sets together 95.1 / 95.6 / 95.6 %), one
``{"text", "command"}`` per line (``command`` null for an exam answer), and prints per language
and set:

* **recall**: commands read as the right command type;
* **false positives**: answers read as any command;

through :func:`ioa.runtime.agent_boundary.candidate_command` (what the runtime acts on: the
classifier, minus the turns that decline), for the current code and for the **baseline**: the
classifier and agent boundary as they were before the labelled set was added (the parent of the
commit that added it; the git ``HEAD`` version while it is not committed yet), loaded from git
into temporary modules. Nothing is hard-coded: both columns are computed.

Targets: recall >= 95 %, false positives <= 1 % per language on the combined set. The training
sets under ``command_set/training/`` (written to train the learned stage, never to tune the
rules) are not read here.

Usage: ``python bench/commands.py [--misses] [--baseline-ref REF]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ioa.runtime.agent_boundary import candidate_command  # noqa: E402

SET_DIR = ROOT / "tests" / "ioa" / "runtime" / "command_set"
LANGUAGES = ("en", "de", "es")
Classify = Callable[[str, str], object]


SETS = {
    "main": "",
    "holdout": "_holdout",
    "holdout2": "_holdout2",
    "holdout3": "_holdout3",
    "holdout4": "_holdout4",
    "holdout5": "_holdout5",
    "holdout6": "_holdout6",
    "holdout7": "_holdout7",
    "holdout8": "_holdout8",
    "holdout9": "_holdout9",
    "holdout10": "_holdout10",
    "holdout11": "_holdout11",
    "holdout12": "_holdout12",
}


def load(language: str, suffix: str) -> list[tuple[str, str | None]]:
    path = SET_DIR / f"{language}{suffix}.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(row["text"], row["command"]) for row in rows]


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def baseline_ref() -> str:
    """The parent of the commit that added the labelled set, else ``HEAD``."""
    added = git(
        "log", "--diff-filter=A", "--format=%H", "--", "tests/ioa/runtime/command_set/en.jsonl"
    ).split()
    return f"{added[-1]}^" if added else "HEAD"


def baseline_classifier(ref: str) -> Classify:
    """``candidate_command`` of the classifier and agent boundary at ``ref``."""
    modules = {}
    for name in ("classifier", "agent_boundary"):
        source = git("show", f"{ref}:ioa/runtime/{name}.py")
        source = source.replace("from ioa.runtime.classifier import", "from _bl_classifier import")
        module = types.ModuleType(f"_bl_{name}")
        sys.modules[module.__name__] = module
        exec(compile(source, f"{ref}:ioa/runtime/{name}.py", "exec"), module.__dict__)  # noqa: S102
        modules[name] = module
    found: Classify = modules["agent_boundary"].candidate_command
    return found


def measure(
    classify: Classify, cases: list[tuple[str, str | None]]
) -> tuple[int, int, int, int, list[str]]:
    """(commands right, commands, answers read as commands, answers, the misses)."""
    right = commands = false = answers = 0
    misses = []
    for text, expected in cases:
        found = classify(text, LANG[0])
        value = None if found is None else str(found)
        if expected is None:
            answers += 1
            if value is not None:
                false += 1
                misses.append(f"  FP  {value:<22} {text}")
        else:
            commands += 1
            if value == expected:
                right += 1
            else:
                misses.append(f"  MISS {expected:<15} got {value!s:<22} {text}")
    return right, commands, false, answers, misses


LANG = ["en"]


def figures(right: int, commands: int, false: int, answers: int) -> str:
    recall = 100 * right / commands if commands else float("nan")
    fp = 100 * false / answers if answers else float("nan")
    return f"recall {recall:5.1f}% ({right}/{commands})  FP {fp:4.1f}% ({false}/{answers})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list every miss (current code)")
    parser.add_argument("--baseline-ref", default=None, help="git ref of the baseline")
    args = parser.parse_args()
    ref = args.baseline_ref or baseline_ref()
    baseline = baseline_classifier(ref)
    print(f"baseline: the classifier at {ref} ({git('rev-parse', '--short', ref).strip()})")
    for language in LANGUAGES:
        LANG[0] = language
        sets = {name: load(language, suffix) for name, suffix in SETS.items()}
        sets["combined"] = [case for cases in list(sets.values()) for case in cases]
        for name, cases in sets.items():
            if not cases:
                continue
            now = measure(candidate_command, cases)
            before = measure(baseline, cases)
            print(
                f"{language} {name:<8}  now: {figures(*now[:4])}   baseline: {figures(*before[:4])}"
            )
            if args.misses and name != "combined":
                print("\n".join(now[4]))


if __name__ == "__main__":
    main()
