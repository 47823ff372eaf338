"""``manage.py lti_resync_grades``: send sessions' grades to their courses' gradebooks again
(``lti.grades``: ``PendingManual`` while locked, the released score and feedback once
released), e.g. after the LMS refused them more often than the tool retries, or after an LMS
outage. ``--session`` / ``--sitting`` choose (default: every session that came through an
LMS link); ``--failed`` only those whose last attempt was refused; ``--dry-run`` lists."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lti.selectors import resync_sessions
from lti.tasks import post_grade


class Command(BaseCommand):
    help = "Send sessions' grades to their LMS gradebooks again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--session", action="append", default=[], help="exam session id")
        parser.add_argument("--sitting", action="append", default=[], help="sitting id")
        parser.add_argument("--failed", action="store_true", help="only refused ones")
        parser.add_argument("--dry-run", action="store_true")

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        sessions = resync_sessions(
            session_ids=options["session"],
            sitting_ids=options["sitting"],
            failed_only=options["failed"],
        )
        for session_id in sessions:
            if not options["dry_run"]:
                post_grade.delay(str(session_id))
            self.stdout.write(str(session_id))
        verb = "would be sent" if options["dry_run"] else "sent"
        self.stdout.write(f"{len(sessions)} session(s) {verb} again.")
