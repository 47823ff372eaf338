"""The independent LTI 1.3 platform of the tests (``server.py``, on ``lti1p3platform``), run as a
separate process on 127.0.0.1 (:func:`running_platform`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.processes import ROOT, free_port, listening_process, output_log


@contextmanager
def running_platform() -> Iterator[str]:
    """Start the platform; yields its base URL (also its issuer)."""
    port = free_port()
    argv = [sys.executable, "-m", "tests.support.lti_platform.server", str(port)]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    log = output_log("lti-platform", port)
    with listening_process(argv, port=port, env=env, log=log, timeout=60):
        yield f"http://127.0.0.1:{port}"
