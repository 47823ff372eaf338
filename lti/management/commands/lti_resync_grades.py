"""``manage.py lti_resync_grades``: send sessions' grades to their courses' gradebooks again
(``lti.grades``: ``PendingManual`` while locked, the released score and feedback once
released), e.g. after the LMS refused them more often than the tool retries, or after an LMS
outage. ``--session`` / ``--sitting`` choose (default: every session that came through an
LMS link); ``--failed`` only those whose last attempt was refused; ``--dry-run`` lists."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lti.selectors import resync_sessions
from lti.tasks import post_grade


class Command(BaseCommand):
    help = "Send sessions' grades to their LMS gradebooks again."

    def add_arguments(self, parser: CommandParser) -> None:
        for option, what in (("--session", "exam session id"), ("--sitting", "sitting id")):
            # type=uuid.UUID: a malformed id is the command's usage error, not a traceback
            parser.add_argument(option, action="append", default=[], type=uuid.UUID, help=what)
        parser.add_argument("--failed", action="store_true", help="only refused ones")
        parser.add_argument("--dry-run", action="store_true")

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        sessions = resync_sessions(
            session_ids=[str(s) for s in options["session"]],
            sitting_ids=[str(s) for s in options["sitting"]],
            failed_only=options["failed"],
        )
        for session_id in sessions:
            if not options["dry_run"]:
                post_grade.delay(str(session_id))
            self.stdout.write(str(session_id))
        verb = "would be sent" if options["dry_run"] else "sent"
        self.stdout.write(f"{len(sessions)} session(s) {verb} again.")
