"""``manage.py simulate_session PACKAGE SCRIPT --session-id ID [--format jsonl|text]``.

Validates the package, creates the simulated session, feeds the script (JSON Lines, see
``sessions.simulation``) to the runtime controller, persists every event through the event
store and prints the stored envelopes one per line in seq order.

Exit status: 0 on success; 1 when the package is rejected (the validation report is printed);
2 when a file cannot be read or the script is malformed (the message names the line).

Runs on the embedded default (SQLite) with no services: an un-migrated SQLite database is
migrated first. Re-running with the same session id is safe: the same inputs print the stored
session again without writing; different inputs keep the earlier session (stored events are
immutable) and store this run as the id's next revision (``ID#2``...), said on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

from ioa.events import parse_timestamp
from ioa.validation import validate_package
from publishing.package_files import load_package_file, unreadable_report
from sessions.simulation import (
    DEFAULT_START,
    ScriptError,
    SessionConflict,
    parse_script,
    simulate_session,
)


def _pending_migrations() -> bool:
    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def _text_line(event: Mapping[str, object]) -> str:
    payload = event["payload"]
    if not isinstance(payload, Mapping):
        raise TypeError(f"an envelope's payload is an object, not {payload!r}")
    detail = payload.get("nodeId") or payload.get("toState") or payload.get("text") or ""
    return f"{event['seq']:>4} {event['timestamp']} {event['type']:<28} {str(detail)[:80]}"


class Command(BaseCommand):
    help = "Run a scripted exam session through the runtime controller and store its events."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("package", metavar="PACKAGE")
        parser.add_argument("script", metavar="SCRIPT")
        parser.add_argument("--session-id", required=True, help="any string; maps to a UUIDv5")
        parser.add_argument("--format", choices=["jsonl", "text"], default="jsonl")
        parser.add_argument(
            "--start-time",
            default=None,
            help=f"ISO 8601 start of the session (default {DEFAULT_START:%Y-%m-%dT%H:%MZ})",
        )

    def handle(self, *args: Any, **options: Any) -> None:  # Any: BaseCommand.handle's type
        loaded = load_package_file(options["package"])
        if loaded.problem is not None:
            self.stdout.write(json.dumps(unreadable_report(loaded), ensure_ascii=False))
            raise SystemExit(2)
        report = validate_package(loaded.document)
        if not report.passed:
            self.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False))
            self.stderr.write(f"{options['package']}: the package is rejected (see the report)")
            raise SystemExit(1)
        script_path = options["script"]
        try:
            text = Path(script_path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.stderr.write(f"{script_path}: cannot be read ({exc})")
            raise SystemExit(2) from exc
        try:
            lines = parse_script(text)
        except ScriptError as exc:
            self.stderr.write(f"{script_path}:{exc.line}: {exc.message}")
            raise SystemExit(2) from exc
        start = DEFAULT_START
        if options["start_time"]:
            try:
                start = parse_timestamp(options["start_time"])
            except ValueError as exc:
                self.stderr.write(f"--start-time: {exc}")
                raise SystemExit(2) from exc
        self._ensure_schema()
        try:
            result = simulate_session(
                document=loaded.document,
                lines=lines,
                session_key=options["session_id"],
                start=start,
            )
        except SessionConflict as exc:
            self.stderr.write(str(exc))
            raise SystemExit(1) from exc
        label = options["session_id"]
        if result.revision > 1:
            label = f"{label}#{result.revision}"
            self.stderr.write(
                f"session id {options['session_id']!r} already holds other simulations (kept, "
                f"immutable); this run is revision {result.revision}: {result.session_id}"
            )
        if result.reused:
            self.stderr.write(
                f"session {label!r} ({result.session_id}) was already simulated with these "
                "inputs; printing its stored events"
            )
        for event in result.events:
            if options["format"] == "jsonl":
                self.stdout.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
            else:
                self.stdout.write(_text_line(event))

    def _ensure_schema(self) -> None:
        """Migrate an embedded SQLite database on first use; refuse otherwise."""
        if not _pending_migrations():
            return
        if connections[DEFAULT_DB_ALIAS].vendor == "sqlite":
            call_command("migrate", interactive=False, verbosity=0)
            return
        self.stderr.write("the database has unapplied migrations: run `manage.py migrate` first")
        raise SystemExit(1)
