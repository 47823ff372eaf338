"""The independent LTI 1.3 platform of the tests (``server.py``, on ``lti1p3platform``), run as a
separate process on 127.0.0.1 (:func:`running_platform`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.processes import ROOT, _stop, _wait_port, free_port


@contextmanager
def running_platform() -> Iterator[str]:
    """Start the platform; yields its base URL (also its issuer)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.lti_platform.server", str(port)],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_port(port, process, timeout=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)
