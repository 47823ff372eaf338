#!/usr/bin/env python
"""Reply latency where the candidate is (issue #30): from the end of a spoken answer to the first
examiner audio the candidate hears, measured in Chromium on the two audio tracks.

Chromium (Debian's) takes the voice exam with its fake microphone playing spoken answers
(eSpeak NG, natural phrasing, 6-10 s each, ``ANSWERS``) separated by silences long enough for
the examiner's reply. An init script taps the page's microphone stream (``getUserMedia``) and
the examiner's remote WebRTC track with Web Audio analysers and logs, by the browser's clock,
when each turns loud or quiet (10-ms polls, an RMS threshold). For every answer the figure is
**end of the candidate's speech on the microphone track → first examiner audio on the examiner
track**, what a person would time with a stopwatch.

Per stage, from the session's log (same machine clock): the VAD's decision that speech stopped
(``candidate_activity`` recorded), the transcript in (``transcript_final`` recorded: the
recogniser and the end of the turn), the examiner's audio leaving the bot
(``examiner_utterance_started.atMs``: the examiner and the voice's first audio), heard in the
browser (the transport and the jitter buffer).

Configurations, each a fresh daphne with inline bots: **offline** (the embedded default:
PocketSphinx, eSpeak NG, the offline examiner) and **instant peers** (Deepgram's live protocol
and OpenAI's speech endpoint served by the local peer, answering at once; the offline
examiner), each with the product's end of turn and the baseline ``VIVA_VOICE_TURN_MODEL=off``
(the words and the package's pauses alone, no acoustic model), and the opt-in
``VIVA_VOICE_REPLY_PAUSE_SEC=0.7`` (an early end on the reply pause, off by default: runtime
semantics §18). Targets: instant peers p50 < 1.0
s and p95 < 1.5 s; offline p95 < 3 s. The issue's figures before any of this work: peers p50 4.3
s / p95 6.3 s, offline p50 3.8 s / p95 11.3 s.

Needs Postgres (``DATABASE_URL``; a throw-away ``test_<name>_reply`` database) and Chromium.
Usage: ``DATABASE_URL=postgres://... python bench/reply_latency.py [--rounds 1] [--only offline]``
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM beside sync Playwright

import django  # noqa: E402

django.setup()

from django.db import connections  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from bench.chromium import database_url, launch  # noqa: E402
from bench.scratch import scratch_database  # noqa: E402
from bench.stats import percentile  # noqa: E402
from sessions.models import SessionEvent  # noqa: E402
from tests.browser.exam_journey import VOICE_MODE, choose_answer_mode, schedule_exam  # noqa: E402
from tests.browser.microphone import microphone_wav  # noqa: E402
from tests.browser.test_voice_providers import HOSTED  # noqa: E402
from tests.support.processes import asgi_server  # noqa: E402
from tests.support.speech_server import SpeechServer  # noqa: E402

LEAD_SECS = 12.0
"""Silence before the first answer: the exam is started and the opening question asked."""
ANSWERS = [
    "Well, I think I enjoyed the graph algorithms most, especially shortest paths.",
    "So Dijkstra keeps a tentative distance for every vertex, and each time it takes the "
    "closest one that is not settled yet and relaxes the edges going out of it.",
    "With a binary heap it runs in about E log V, because every edge can cause a decrease key.",
    "Honestly, a negative edge could make a settled distance wrong, so it would not be safe.",
]
GAP_SECS = 15.0
"""Silence after each answer: the examiner's reply (up to ~12 s) ends before the next answer."""
QUIET_MS = 1200
"""A quieter stretch than this inside an answer (eSpeak's commas) does not end it."""
TARGETS = {"instant peers": (1.0, 1.5), "offline": (None, 3.0)}
BEFORE = {"instant peers": (4.3, 6.3), "offline": (3.8, 11.3)}
"""The issue's figures (p50, p95 in s) before the voice work."""

AUDIO_TAPS = """
(() => {
  const log = [];
  window.__vivaAudio = log;
  const Context = window.AudioContext || window.webkitAudioContext;
  const context = new Context();
  function tap(stream, source) {
    const analyser = context.createAnalyser();
    analyser.fftSize = 512;
    context.createMediaStreamSource(stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    let loud = false;
    setInterval(() => {
      if (context.state !== "running") context.resume();
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const value of samples) sum += value * value;
      const now = Math.sqrt(sum / samples.length) > 0.01;
      if (now !== loud) { loud = now; log.push([source, now, Date.now()]); }
    }, 10);
  }
  const devices = navigator.mediaDevices;
  const getUserMedia = devices.getUserMedia.bind(devices);
  devices.getUserMedia = async (constraints) => {
    const stream = await getUserMedia(constraints);
    if (constraints && constraints.audio) tap(stream, "mic");
    return stream;
  };
  const Original = window.RTCPeerConnection;
  function Tapped(...args) {
    const pc = new Original(...args);
    pc.addEventListener("track", (event) => {
      if (event.track.kind !== "audio") return;
      tap(event.streams[0] || new MediaStream([event.track]), "examiner");
    });
    return pc;
  }
  Tapped.prototype = Original.prototype;
  Object.setPrototypeOf(Tapped, Original);
  window.RTCPeerConnection = Tapped;
})();
"""


@dataclass
class Reply:
    """One answer's reply, in ms after the end of the answer on the microphone track."""

    heard: float
    vad: float | None = None
    transcript: float | None = None
    bot_audio: float | None = None


@dataclass
class Results:
    replies: dict[str, list[Reply]] = field(default_factory=dict)
    missed: dict[str, int] = field(default_factory=dict)


def stretches(log: list[list[Any]], source: str, quiet_ms: float) -> list[tuple[float, float]]:
    """Loud stretches of ``source`` (browser epoch ms), merged across quiet gaps < quiet_ms."""
    out: list[tuple[float, float]] = []
    start: float | None = None
    for name, loud, at in log:
        if name != source:
            continue
        if loud and start is None:
            start = float(at)
        elif not loud and start is not None:
            if out and start - out[-1][1] < quiet_ms:
                out[-1] = (out[-1][0], float(at))
            else:
                out.append((start, float(at)))
            start = None
    return out


def stages(session: Any, end_ms: float) -> tuple[float | None, float | None, float | None]:
    """The stages after an answer's end (epoch ms), from the session's log."""
    rows = list(SessionEvent.objects.filter(session=session).order_by("seq"))
    opened = next((r.timestamp.timestamp() * 1000 for r in rows if r.type == "bot_ready"), None)
    if opened is None:
        return None, None, None

    def recorded(row: Any) -> float:
        return float(row.timestamp.timestamp() * 1000)

    vad = next(
        (
            recorded(r) - end_ms
            for r in rows
            if r.type == "candidate_activity"
            and r.payload.get("state") == "stopped"
            and r.payload.get("atMs") is not None
            and abs(opened + r.payload["atMs"] - end_ms) < 1500
        ),
        None,
    )
    heard = next(
        (
            recorded(r) - end_ms
            for r in rows
            if r.type == "transcript_final"
            and r.payload.get("speaker") == "candidate"
            and recorded(r) > end_ms
        ),
        None,
    )
    audio = next(
        (
            opened + r.payload["atMs"] - end_ms
            for r in rows
            if r.type == "examiner_utterance_started"
            and r.payload.get("atMs") is not None
            and opened + r.payload["atMs"] > end_ms
        ),
        None,
    )
    return vad, heard, audio


def opening_heard(session: Any, examiner: list[tuple[float, float]]) -> None:
    """Print how much of the opening the browser heard beside what the log says was played."""
    final = (
        SessionEvent.objects.filter(session=session, type="examiner_utterance_final")
        .order_by("seq")
        .first()
    )
    if final is None or not examiner:
        print("    opening: not heard" if final is not None else "    opening: not spoken")
        return
    start, end = examiner[0]
    print(
        f"    opening: heard {(end - start) / 1000:4.1f} s in the browser; the log: "
        f"{final.payload['durationMs'] / 1000:4.1f} s"
        + (" (cut)" if final.payload.get("interrupted") else "")
    )


def one_exam(browser: Any, base: str, wav: Path, secs: float) -> tuple[list[Reply], int]:
    """Take the exam for ``secs`` with the microphone file; the replies to its answers."""
    context = browser.new_context(base_url=base)
    context.grant_permissions(["microphone"])
    context.add_init_script(AUDIO_TAPS)
    page = context.new_page()
    try:
        exam = schedule_exam()
        choose_answer_mode(page, exam, VOICE_MODE)
        page.get_by_role("checkbox", name=re.compile("My microphone moved")).check()
        page.get_by_role("button", name="Go to the exam room").click()
        start = page.get_by_role("button", name="Start the exam")
        expect(start).to_be_enabled(timeout=60_000)
        start.click()
        time.sleep(secs)
        log = page.evaluate("window.__vivaAudio || []")
    finally:
        context.close()
    answers = stretches(log, "mic", QUIET_MS)
    examiner = stretches(log, "examiner", 300)
    opening_heard(exam.session, stretches(log, "examiner", 900))
    replies, missed = [], 0
    for index, (_, end) in enumerate(answers):
        following = answers[index + 1][0] if index + 1 < len(answers) else float("inf")
        onset = next((s for s, _ in examiner if end < s < following), None)
        if onset is None:
            missed += 1
            continue
        vad, transcript, audio = stages(exam.session, end)
        replies.append(Reply(onset - end, vad, transcript, audio))
        print(
            f"    answer {index + 1}: heard {(onset - end) / 1000:4.2f} s; "
            + "; ".join(
                f"{label} {value / 1000:4.2f}"
                for label, value in (("VAD", vad), ("transcript", transcript), ("out", audio))
                if value is not None
            )
        )
    held = SessionEvent.objects.filter(session=exam.session, type="transition_held")
    print(f"    completions held: {', '.join(h.payload['phase'] for h in held) or 'none'}")
    for row in SessionEvent.objects.filter(session=exam.session, type="transcript_final"):
        if row.payload["speaker"] == "candidate":
            print(f"    heard ({row.payload['confidence']:.2f}): {row.payload['text']}")
    return replies, missed


def configs(only: str | None, baseline: bool = True) -> list[tuple[str, str, dict[str, str]]]:
    found = [
        ("offline", "end of turn", {}),
        ("offline", "baseline (turn model off)", {"VIVA_VOICE_TURN_MODEL": "off"}),
        ("instant peers", "end of turn", {}),
        ("instant peers", "baseline (turn model off)", {"VIVA_VOICE_TURN_MODEL": "off"}),
        ("instant peers", "reply pause 0.7 s (opt-in)", {"VIVA_VOICE_REPLY_PAUSE_SEC": "0.7"}),
        ("offline", "reply pause 0.7 s (opt-in)", {"VIVA_VOICE_REPLY_PAUSE_SEC": "0.7"}),
    ]
    return [
        c for c in found if (only is None or c[0] == only) and (baseline or "baseline" not in c[1])
    ]


def run(rounds: int, only: str | None, baseline: bool) -> Results:
    results = Results()
    url = database_url()
    secs = LEAD_SECS + sum(GAP_SECS + 10 for _ in ANSWERS)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        parts: list[str | float] = [LEAD_SECS]
        for answer in ANSWERS:
            parts += [answer, GAP_SECS]
        timeline = microphone_wav(Path(tmp) / "answers.wav", parts)
        wav = Path(f"{timeline.path}%noloop")
        browser = launch(pw, wav)
        for index in range(rounds):
            for kind, name, env in configs(only, baseline):
                key = f"{kind}: {name}"
                with SpeechServer(confidence=0.95) as peer:
                    extra = dict(env)
                    if kind == "instant peers":
                        extra |= HOSTED["deepgram"].environment(peer)
                        peer.script(*ANSWERS, *ANSWERS)  # a stretch split in two: still words
                    with asgi_server(
                        DATABASE_URL=url,
                        VIVA_BOT_RUNNER="inline",
                        DJANGO_ALLOW_ASYNC_UNSAFE="",
                        **extra,
                    ) as address:
                        replies, missed = one_exam(browser, f"http://{address}", wav, secs)
                results.replies.setdefault(key, []).extend(replies)
                results.missed[key] = results.missed.get(key, 0) + missed
                heard = " ".join(f"{r.heard / 1000:4.1f}" for r in replies)
                print(f"round {index + 1} {key:42} heard after (s): {heard}  missed {missed}")
        browser.close()
    return results


def _figures(values: list[float]) -> str:
    if not values:
        return "       -"
    ordered = sorted(v / 1000 for v in values)
    return f"p50 {percentile(ordered, 0.5):4.2f} p95 {percentile(ordered, 0.95):4.2f}"


def report(results: Results) -> None:
    print("\nEnd of the answer on the microphone track -> first examiner audio heard (s)")
    for key, replies in results.replies.items():
        kind = key.split(":")[0]
        print(f"  {key:42} n={len(replies):2}  {_figures([r.heard for r in replies])}")
        for label, values in (
            ("VAD decided speech stopped", [r.vad for r in replies]),
            ("transcript in (recogniser, end of turn)", [r.transcript for r in replies]),
            ("examiner audio out of the bot", [r.bot_audio for r in replies]),
        ):
            kept = [v for v in values if v is not None]
            print(f"      {label:40} {_figures(kept)}")
        if results.missed.get(key):
            print(f"      answers without a reply before the next answer: {results.missed[key]}")
        target, before = TARGETS[kind], BEFORE[kind]
        goal = " and ".join(
            f"{name} < {value:.1f}"
            for name, value in zip(("p50", "p95"), target, strict=True)
            if value is not None
        )
        print(f"      target {goal}; before: p50 {before[0]:.1f} p95 {before[1]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=["offline", "instant peers"])
    parser.add_argument("--no-baseline", action="store_true", help="the product's turn end only")
    args = parser.parse_args()
    with scratch_database("reply"):
        results = run(args.rounds, args.only, not args.no_baseline)
        report(results)  # before the teardown: the figures stand even if it fails
        connections.close_all()
        time.sleep(3.0)  # the servers' backends close after their processes
    return 0


if __name__ == "__main__":
    sys.exit(main())
