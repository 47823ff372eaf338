"""``manage.py relay_outbox [--loop SECONDS]``: deliver the outbox's due messages
(``sessions.outbox.relay_due``): after a broker outage, a crash between a commit and its
hand-over, or a handler's back-off. Run it every few seconds (cron, a systemd timer) or as a
service with ``--loop``; running several at once is safe (a message is locked while it runs)."""

from __future__ import annotations

import time
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from sessions.outbox import relay_due


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
            done = relay_due()
            if done.swept or done.outcomes:
                parts = [f"{n} {what}" for what, n in sorted(done.outcomes.items())]
                self.stdout.write(f"swept {done.swept}; " + (", ".join(parts) or "nothing due"))
            if every == 0:
                return
            time.sleep(every)
