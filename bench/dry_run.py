"""Benchmark: the dry run of each example package (target: under 5 s for cs201).

Run from the project root:  .venv/bin/python bench/dry_run.py [--runs N]

For every package in ``examples/`` it measures, interleaved in the same run:

* ``dry run``: ``ioa.dry_run.dry_run`` (every persona, every pool variant, plus the report);
* ``baseline``: one scripted session of the same package through the same controller (the
  ``strong`` persona, variant 0) — what a single simulated session costs, so the dry run's
  figure reads as "N sessions' worth".

Prints median, p95 and p99 wall-clock milliseconds, process CPU, the number of simulated
sessions, and whether cs201 met the target. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.stats import percentile  # noqa: E402
from ioa.dry_run import PERSONAS, dry_run  # noqa: E402
from ioa.dry_run.driver import run_persona  # noqa: E402
from ioa.schema import load_package  # noqa: E402

TARGET_MS = 5_000.0
TARGET_PACKAGE = "cs201-graph-algorithms.json"


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unavailable"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def measure(path: Path, runs: int) -> tuple[dict[str, list[float]], int]:
    package = load_package(json.loads(path.read_text(encoding="utf-8")))
    wall: dict[str, list[float]] = {"dry run": [], "baseline": [], "cpu": []}
    sessions = 0
    for _ in range(runs):
        started = time.perf_counter()
        run_persona(package, "strong", PERSONAS["strong"])
        wall["baseline"].append((time.perf_counter() - started) * 1000)
        started, cpu = time.perf_counter(), time.process_time()
        report = dry_run(package)
        wall["dry run"].append((time.perf_counter() - started) * 1000)
        wall["cpu"].append((time.process_time() - cpu) * 1000)
        sessions = report["runCount"]
    return wall, sessions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(load_average())
    met = True
    for path in sorted((ROOT / "examples").glob("*.json")):
        figures, sessions = measure(path, args.runs)
        print(f"\n{path.name}: {sessions} simulated sessions, {args.runs} runs")
        for name, values in figures.items():
            label = "dry run CPU" if name == "cpu" else name
            print(
                f"  {label:<12} median {percentile(values, 0.5):8.1f} ms"
                f"  p95 {percentile(values, 0.95):8.1f} ms  p99 {percentile(values, 0.99):8.1f} ms"
            )
        if path.name == TARGET_PACKAGE:
            worst = percentile(figures["dry run"], 0.99)
            met = worst < TARGET_MS
            print(f"  target: p99 under {TARGET_MS:.0f} ms: {'met' if met else 'NOT MET'}")
    print("\n" + load_average())
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
