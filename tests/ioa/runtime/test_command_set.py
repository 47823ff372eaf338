"""The rule-based command classifier on the labelled command set (issue #31).

``command_set/<language>*.jsonl``: commands in the candidate's own words and exam answers that
mention "skip", "finish", "pause"... without asking (the set the rules were tuned on, and the
held-out sets written after tuning). Read as the runtime reads them
(:func:`ioa.runtime.agent_boundary.candidate_command`). ``python bench/commands.py`` prints the
figures per set and against the classifier before this work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa.runtime.agent_boundary import candidate_command

SET_DIR = Path(__file__).parent / "command_set"
LANGUAGES = ("en", "de", "es")


def cases(language: str) -> list[tuple[str, str | None]]:
    rows = [
        json.loads(line)
        for path in sorted(SET_DIR.glob(f"{language}*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [(row["text"], row["command"]) for row in rows]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_set_is_big_enough(language: str) -> None:
    main = (SET_DIR / f"{language}.jsonl").read_text(encoding="utf-8").splitlines()
    holdout = (SET_DIR / f"{language}_holdout.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(main) >= 150 and len(holdout) >= 50
    labelled = cases(language)
    assert len({text for text, _ in labelled}) == len(labelled)  # no case counted twice


@pytest.mark.parametrize("language", LANGUAGES)
def test_recall_and_false_positives(language: str) -> None:
    commands = [(text, command) for text, command in cases(language) if command is not None]
    answers = [text for text, command in cases(language) if command is None]
    found = {text: candidate_command(text, language) for text, _ in commands}
    missed = [(text, command, found[text]) for text, command in commands if found[text] != command]
    false = [(text, candidate_command(text, language)) for text in answers]
    false = [(text, command) for text, command in false if command is not None]
    assert 1 - len(missed) / len(commands) >= 0.95, missed
    assert len(false) / len(answers) <= 0.01, false
