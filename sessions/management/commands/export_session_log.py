"""``manage.py export_session_log SESSION_ID [--output FILE]``: the session's stored event log
as JSON Lines (one envelope per line with ``hash`` and ``prevHash``, in seq order)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions.models import ExamSession
from sessions.selectors import export_lines


class Command(BaseCommand):
    help = "Export a session's event log as JSON Lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("session_id", help="the exam session's UUID")
        parser.add_argument("--output", type=Path, help="write to this file (default: stdout)")

    def handle(self, *args: Any, **options: Any) -> None:  # Any: BaseCommand.handle's type
        try:
            session_id = uuid.UUID(options["session_id"])
        except ValueError as exc:
            raise CommandError(f"not a session id: {options['session_id']}") from exc
        if not ExamSession.objects.filter(pk=session_id).exists():
            raise CommandError(f"no exam session {session_id}")
        output = options["output"]
        if output is None:
            for line in export_lines(session_id=session_id):
                self.stdout.write(line)
            return
        count = 0
        with output.open("w", encoding="utf-8") as handle:
            for line in export_lines(session_id=session_id):
                handle.write(line + "\n")
                count += 1
        self.stderr.write(f"wrote {count} event(s) to {output}")
