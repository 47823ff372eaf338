"""Several ``manage.py`` command lines in one fresh interpreter, each with its own exit and output.

A Django process costs seconds to start (most of it imports), while a command-line test often
needs only what one command line prints and its exit status. ``run_batch`` starts one interpreter
(``python -m tests.support.command_batch``) that runs every command line through Django's own
entry point, ``execute_from_command_line``, as ``manage.py`` does, and reports for each what a
separate ``manage.py`` process would have shown: its exit status (an uncaught exception is a
traceback on stderr and status 1, as the interpreter does) and everything written to file
descriptors 1 and 2, so output that bypasses ``sys.stdout`` (logging handlers, C code) is caught.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

from django.core.management import execute_from_command_line

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Outcome:
    """What one command line printed and how it exited (like ``subprocess.CompletedProcess``)."""

    returncode: int
    stdout: str
    stderr: str


def run_batch(
    command_lines: list[list[str]], env: dict[str, str] | None = None, timeout: float = 300
) -> list[Outcome]:
    """Runs the command lines (``manage.py``'s arguments) in order in one new interpreter.

    Raises AssertionError, with the batch's stderr, when the interpreter itself fails.
    """
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.command_batch"],
        cwd=ROOT,
        input=json.dumps(command_lines),
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return [Outcome(**outcome) for outcome in json.loads(done.stdout)]


def _exit_status(code: object) -> int:
    """The status ``SystemExit(code)`` gives a process; a message goes to stderr, as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _execute(argv: list[str]) -> int:
    """Runs one command line as ``manage.py`` would and returns the process status it would have."""
    try:
        execute_from_command_line(["manage.py", *argv])
    except SystemExit as exit_:
        return _exit_status(exit_.code)
    except Exception:  # uncaught: what the interpreter prints, and its status
        traceback.print_exc()
        return 1
    return 0


def _captured(argv: list[str]) -> dict[str, object]:
    """Runs one command line with file descriptors 1 and 2 sent to files, and reads them back."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            status = _execute(argv)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return {
            "returncode": status,
            "stdout": out.read().decode("utf-8", errors="replace"),
            "stderr": err.read().decode("utf-8", errors="replace"),
        }


def main() -> None:
    """Reads a JSON list of command lines on stdin; prints a JSON list of outcomes on stdout."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    command_lines = json.loads(sys.stdin.read())
    outcomes = [_captured(argv) for argv in command_lines]
    sys.stdout.write(json.dumps(outcomes))


if __name__ == "__main__":
    main()
