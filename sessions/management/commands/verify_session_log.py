"""``manage.py verify_session_log SESSION_ID``: check a session's event log against its hash
chain. Exit status 0 when intact, 1 on any altered, missing or reordered event, an erasure no
record accounts for, or an erased value that is not exactly the erasure marker (or an unknown
session). Each problem is written on its own line as ``session <id>: <kind>: seq <n>: ...``."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions.models import ExamSession
from sessions.selectors import verify_log


class Command(BaseCommand):
    help = "Verify the tamper-evident hash chain of a session's event log."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("session_id", help="the exam session's UUID")

    def handle(self, *args: Any, **options: Any) -> None:  # Any: BaseCommand.handle's type
        try:
            session_id = uuid.UUID(options["session_id"])
            problems = verify_log(session_id=session_id)
        except (ValueError, ExamSession.DoesNotExist) as exc:
            raise CommandError(f"no exam session {options['session_id']}", returncode=1) from exc
        session = ExamSession.objects.get(pk=session_id)
        if problems:
            for problem in problems:  # each names the session and the event's seq
                self.stderr.write(f"session {session_id}: {problem}")
            raise CommandError(
                f"session {session_id}: {len(problems)} problem(s) in the event log", returncode=1
            )
        self.stdout.write(
            f"session {session_id}: {session.last_seq} event(s), chain intact, "
            f"head {session.head_hash}"
        )
