"""``manage.py webhooks_resend_due [--grace-seconds 300]``: enqueue the next attempt of pending
webhook deliveries whose Celery task was lost (run it from cron every few minutes)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from webhooks.services import resend_due


class Command(BaseCommand):
    help = "Enqueue pending webhook deliveries that are overdue (their task was lost)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--grace-seconds",
            type=int,
            default=300,
            help="how late a delivery must be before it is enqueued again (default 300)",
        )

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        grace = timedelta(seconds=max(0, options["grace_seconds"]))
        enqueued = resend_due(now=timezone.now(), grace=grace)
        for delivery_id, number in enqueued:
            self.stdout.write(f"{delivery_id}: attempt {number} enqueued")
        self.stdout.write(f"{len(enqueued)} overdue deliveries enqueued")
