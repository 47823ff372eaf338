"""``manage.py relay_outbox [--loop SECONDS]``: deliver the outbox's due messages
(``sessions.outbox.relay_due``): after a broker outage, a crash between a commit and its
hand-over, or a handler's back-off. Run it every few seconds (cron, a systemd timer) or as a
service with ``--loop``; running several at once is safe (a message is locked while it runs)."""

from __future__ import annotations

import logging
import time
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from sessions.outbox import relay_due

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Deliver the outbox's due messages (side effects of stored facts); --loop to repeat."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--loop",
            type=float,
            default=0.0,
            metavar="SECONDS",
            help="repeat every SECONDS until stopped (0: one pass)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        every = float(options["loop"])
        if every < 0:
            raise CommandError("--loop takes a number of seconds of 0 or more")
        while True:
            try:
                done = relay_due()
            except Exception:  # a pass that failed (the database or broker away): the next one
                if every == 0:
                    raise
                logger.exception("relay pass failed; the next pass in %s s", every)
                time.sleep(every)
                continue
            if done.swept or done.outcomes:
                parts = [f"{n} {what}" for what, n in sorted(done.outcomes.items())]
                self.stdout.write(f"swept {done.swept}; " + (", ".join(parts) or "nothing due"))
            if every == 0:
                return
            time.sleep(every)
