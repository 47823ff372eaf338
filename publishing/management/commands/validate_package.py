"""``manage.py validate_package FILE [FILE ...] --format json|text``.

With json: one report object per file, one per line (JSON Lines), in argument order.
Exit 0 when every file passes, 1 when any is rejected, 2 when any file is unreadable or not JSON.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ioa.validation import validate_package
from publishing.package_files import load_package_file, unreadable_report


def _text(report: dict[str, Any], path: str) -> str:
    s = report["summary"]
    lines = [
        f"{path}: {report['result'].upper()} — {s['errors']} error(s), {s['warnings']} warning(s)"
        f", {s.get('info', 0)} note(s)"
    ]
    for kind in ("errors", "warnings", "info"):
        for f in report.get(kind, []):
            where = f" at {f['path']}" if f.get("path") else ""
            lines.append(f"  {f['severity']:<7} {f['ruleId']:<9}{where}: {f['message']}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Validate IOA-ORM package files against every publish-time rule (chapter 08)."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        worst = 0
        for path in options["files"]:
            loaded = load_package_file(path)
            if loaded.problem is not None:
                report = unreadable_report(loaded)
                worst = max(worst, 2)
            else:
                report = validate_package(loaded.document).to_dict()
                if report["result"] != "pass":
                    worst = max(worst, 1)
            if options["format"] == "json":
                self.stdout.write(json.dumps(report, ensure_ascii=False, sort_keys=False))
            else:
                self.stdout.write(_text(report, path))
        if worst:
            raise SystemExit(worst)
