"""Chromium for the browser benches (``bench/start_time.py``, ``bench/reply_latency.py``):
Debian's browser with a fake microphone playing a WAV, and the scratch database's URL for the
servers they start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

CHROMIUM = "/usr/bin/chromium"


def launch(playwright: Any, wav: Path) -> Any:
    """Chromium whose microphone plays ``wav`` (``%noloop`` at its end: once), media allowed
    without prompts, audio without a gesture."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--use-fake-device-for-media-stream",
            "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-audio-capture={wav}",
            "--autoplay-policy=no-user-gesture-required",
        ],
    )


def database_url() -> str:
    """The current (scratch) database as a URL for a server process."""
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER'] or 'postgres'}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
