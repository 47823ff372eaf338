#!/usr/bin/env python
"""Start time in the browser (issue #30): how long after the exam room starts loading the
candidate can press **Start the exam** (``bot_ready`` stored and the voice connected).

Measured where the candidate is: Chromium (Debian's, fake microphone) goes through the journey
to the voice exam room; the time is the room page's ``performance.now()`` when the Start button
is first seen enabled (polled every 50 ms), i.e. from the start of the room's navigation.

Each round starts a fresh daphne (inline bots, offline voice: the embedded default) and opens
``--sessions`` (3) exam rooms one after another: the first is "the first session after
start-up", the others show the warm state. Two configurations run in the same script, with the
same rounds: **warm-up** (the product: ``bot.warmup`` loads the voice stack when the process
starts) and the **baseline** ``VIVA_VOICE_WARMUP=false`` (everything loads on the first offer).
Prints per configuration and position the median and p95 (s) and each run. Target: the first
session's Start within 2 s.

Needs Postgres (``DATABASE_URL``; a throw-away ``test_<name>_start`` database) and Chromium.
Usage: ``DATABASE_URL=postgres://... python bench/start_time.py [--rounds 3] [--sessions 3]``
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM beside sync Playwright

import django  # noqa: E402

django.setup()

from django.db import connections  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from bench.chromium import database_url, launch  # noqa: E402
from bench.scratch import scratch_database  # noqa: E402
from bench.stats import percentile  # noqa: E402
from tests.browser.exam_journey import VOICE_MODE, choose_answer_mode, schedule_exam  # noqa: E402
from tests.support.processes import asgi_server  # noqa: E402

TARGET_SECS = 2.0
CONFIGS = {"warm-up": {}, "baseline (no warm-up)": {"VIVA_VOICE_WARMUP": "false"}}


def silence_wav(path: Path, secs: float = 30.0) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(bytes(2 * int(16000 * secs)))
    return path


def start_seconds(browser: object, base: str, wav: Path) -> float:
    """One candidate: journey to the voice room, then seconds until Start is enabled."""
    context = browser.new_context(base_url=base)  # type: ignore[attr-defined]
    context.grant_permissions(["microphone"])
    page = context.new_page()
    try:
        exam = schedule_exam()
        choose_answer_mode(page, exam, VOICE_MODE)
        page.get_by_role("checkbox", name=re.compile("My microphone moved")).check()
        page.get_by_role("button", name="Go to the exam room").click()
        start = page.get_by_role("button", name="Start the exam")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if start.is_visible() and start.is_enabled():
                return float(page.evaluate("performance.now()")) / 1000
            time.sleep(0.05)
        return float("inf")
    finally:
        context.close()


def run(rounds: int, sessions: int) -> dict[str, list[list[float]]]:
    results: dict[str, list[list[float]]] = {name: [] for name in CONFIGS}
    url = database_url()
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        wav = silence_wav(Path(tmp) / "silence.wav")
        browser = launch(pw, wav)
        for index in range(rounds):
            for name, env in CONFIGS.items():
                with asgi_server(
                    DATABASE_URL=url, VIVA_BOT_RUNNER="inline", DJANGO_ALLOW_ASYNC_UNSAFE="", **env
                ) as address:
                    times = [
                        start_seconds(browser, f"http://{address}", wav) for _ in range(sessions)
                    ]
                results[name].append(times)
                print(f"round {index + 1} {name:22} " + " ".join(f"{t:5.2f}" for t in times))
        browser.close()
    return results


def report(results: dict[str, list[list[float]]]) -> bool:
    ok = True
    print("\nStart enabled, seconds after the room began loading (median / p95 over rounds)")
    for name, rounds in results.items():
        for position in range(len(rounds[0])):
            values = sorted(r[position] for r in rounds)
            label = "first session after start-up" if position == 0 else f"session {position + 1}"
            median, p95 = percentile(values, 0.5), percentile(values, 0.95)
            print(f"  {name:22} {label:30} median {median:5.2f}  p95 {p95:5.2f}")
            if name == "warm-up" and position == 0:
                ok = p95 <= TARGET_SECS
    verdict = "met" if ok else "NOT met"
    print(f"target: the first session's Start within {TARGET_SECS:.0f} s: {verdict}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=3)
    args = parser.parse_args()
    with scratch_database("start"):
        results = run(args.rounds, args.sessions)
        ok = report(results)  # before the teardown: the figures stand even if it fails
        connections.close_all()
        time.sleep(1.0)  # the servers' backends close after their processes
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
