"""``manage.py dry_run FILE [--format text|json]``: the dry run of a package file.

Simulated candidates (strong, partial, silent, off-topic, anxious, command-heavy, skipper) run
through the runtime controller; the report says which nodes and transitions they reached, how
much evidence they gave, how long they spent against the budgets, and where they were forced
on. Exit 0 with the report; 1 when the package does not pass validation (its validation report
is printed); 2 when the file cannot be read as JSON.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from publishing.dry_runs import DryRunRefused, document_dry_run, report_lines
from publishing.package_files import load_package_file


class Command(BaseCommand):
    help = "Run simulated candidates through a package and report how its flow behaves."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="PACKAGE", help="a package JSON file")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        loaded = load_package_file(options["file"])
        if loaded.problem is not None:
            self.stderr.write(loaded.problem)
            raise SystemExit(2)
        try:
            report = document_dry_run(document=loaded.document)
        except DryRunRefused as refused:
            self.stderr.write(f"{options['file']}: {refused}")
            for finding in refused.report.get("errors", []):
                where = f" at {finding['path']}" if finding.get("path") else ""
                self.stderr.write(f"  {finding['ruleId']}{where}: {finding['message']}")
            raise SystemExit(1) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(report_lines(report)))
