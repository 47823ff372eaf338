"""A warm start (``bot.warmup``): the web process's ASGI entry loads the voice dependencies when
it starts (in the background) when it hosts the bots, and only checks them when Celery workers
do; a misconfigured speech provider stops it at start-up, and management commands load none of
it. Each case runs in a fresh Python process, as a server or
``manage.py`` starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ASGI_START = """
import json, sys, time
started = time.perf_counter()
import config.asgi
entry = time.perf_counter() - started
from bot import warmup
warmup._started.join(60)
from bot.voice.offline_stt import decoder_pool
pool = decoder_pool()
print(json.dumps({
    "entry_secs": entry,
    "loaded": {m: m in sys.modules for m in ("pipecat", "aiortc", "onnxruntime")},
    "decoders_loaded": pool.loaded(),
    "max_decoders": pool.max_decoders,
}))
"""

MANAGE_CHECK = """
import sys, django
django.setup()
from django.core.management import call_command
call_command("check")
print({m: m in sys.modules for m in ("pipecat", "aiortc", "pocketsphinx")})
"""


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    for name in (
        "VIVA_STT_PROVIDER",
        "VIVA_TTS_PROVIDER",
        "VIVA_VOICE_WARMUP",
        "VIVA_OFFLINE_STT",
        "VIVA_STT_DECODERS",
    ):
        if name not in env:
            environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_web_process_loads_voice_at_start() -> None:
    run = python(ASGI_START, VIVA_BOT_RUNNER="inline")
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["loaded"] == {"pipecat": True, "aiortc": True, "onnxruntime": True}
    # Every PocketSphinx decoder (each in its worker process) is ready before any offer.
    assert report["decoders_loaded"] == report["max_decoders"] >= 1
    assert "voice warm-up done" in run.stderr


ASGI_START_WHISPER = """
import json, multiprocessing, time
import config.asgi
from bot import warmup
warmup._started.join(60)
from bot.voice.whisper_stt import shared_decoder
print(json.dumps({
    "whisper_loaded": shared_decoder().loaded(),
    "children": len(multiprocessing.active_children()),
}))
"""


def test_the_web_process_loads_the_whisper_model_at_start_when_it_is_the_recogniser() -> None:
    """With ``VIVA_OFFLINE_STT=whisper`` the warm-up loads Whisper's model (about 1 s), sized by
    ``VIVA_STT_DECODERS`` as the sessions' service is, so the first exam does not load it; no
    PocketSphinx decoder process is started for nothing."""
    run = python(
        ASGI_START_WHISPER,
        VIVA_BOT_RUNNER="inline",
        VIVA_OFFLINE_STT="whisper",
        VIVA_STT_DECODERS="1",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report == {"whisper_loaded": 1, "children": 0}, run.stderr[-2000:]
    assert "voice warm-up done" in run.stderr
    assert "Whisper model" in run.stderr


def test_a_misconfigured_provider_stops_the_web_process_at_start() -> None:
    for runner in ("inline", "celery"):
        run = python(ASGI_START, VIVA_STT_PROVIDER="deepgram", VIVA_BOT_RUNNER=runner)
        assert run.returncode != 0, runner
        assert (
            "ImproperlyConfigured: VIVA_STT_PROVIDER=deepgram needs DEEPGRAM_API_KEY" in run.stderr
        ), runner


WEB_START_WITHOUT_BOTS = """
import json, sys, threading, time, multiprocessing
import config.asgi
from bot import warmup
time.sleep(1.0)  # a warm-up thread would be importing by now
print(json.dumps({
    "started": warmup._started is not None,
    "threads": sorted(t.name for t in threading.enumerate() if t.name == "voice-warmup"),
    "loaded": {m: m in sys.modules for m in ("pipecat", "aiortc", "onnxruntime", "pocketsphinx")},
    "children": len(multiprocessing.active_children()),
}))
"""


def test_the_web_process_loads_no_voice_when_celery_workers_host_the_bots() -> None:
    """With ``VIVA_BOT_RUNNER=celery`` no pipeline ever runs in the web process: loading voice
    there only took CPU from the first live events (and memory, and decoder processes)."""
    run = python(WEB_START_WITHOUT_BOTS, VIVA_BOT_RUNNER="celery")
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report == {
        "started": False,
        "threads": [],
        "loaded": {"pipecat": False, "aiortc": False, "onnxruntime": False, "pocketsphinx": False},
        "children": 0,
    }
    assert "voice warm-up done" not in run.stderr


def test_warm_up_can_be_turned_off() -> None:
    run = python(
        "import sys, config.asgi; from bot import warmup; "
        "print(warmup._started is None, 'aiortc' in sys.modules)",
        VIVA_VOICE_WARMUP="false",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "False"]


def test_management_commands_load_no_voice_dependency() -> None:
    run = python(MANAGE_CHECK)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == str(
        {"pipecat": False, "aiortc": False, "pocketsphinx": False}
    )
