"""A real PgBouncer (Debian's ``pgbouncer``, installed by .ci/run) in transaction pooling mode in
front of the test's Postgres, with a pool of two server connections so that consecutive
transactions of one client land on different server connections."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import free_port, output_log, wait_port

CONFIG = """\
[databases]
* = host={host} port={port} user={user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
auth_type = any
pool_mode = transaction
default_pool_size = 2
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
logfile = {log}
pidfile = {pid}
"""


@contextmanager
def pgbouncer(*, host: str, port: int, user: str) -> Iterator[int]:
    """Run PgBouncer until the block ends; yields the port it listens on."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    listen = free_port()
    # PgBouncer refuses to run as root: it runs as postgres, which must reach every file it
    # opens, so they all live in a fresh world-writable folder (a checkout may sit under a
    # private directory); the log is copied to test-artifacts afterwards.
    folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    folder.chmod(0o777)
    log = folder / "pgbouncer.log"
    log.touch(mode=0o666)
    log.chmod(0o666)
    config = folder / "pgbouncer.ini"
    config.write_text(
        CONFIG.format(
            host=host, port=port, user=user, listen=listen, log=log, pid=folder / "pgbouncer.pid"
        )
    )
    config.chmod(0o644)
    argv = [binary, "-u", "postgres", str(config)] if os.geteuid() == 0 else [binary, str(config)]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_port(listen, process, timeout=15, log=log)
        yield listen
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.copyfile(log, output_log("pgbouncer", listen))
        shutil.rmtree(folder, ignore_errors=True)
