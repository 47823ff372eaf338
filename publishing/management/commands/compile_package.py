"""``manage.py compile_package FILE``: print the compiled Pipecat flow as JSON.

Exit 0 and the flow on stdout when the package passes; exit 1 with the validation report on
stderr when it is rejected; exit 2 when the file is unreadable or not JSON.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ioa.compiler import compile_package, serialise_compiled_flow
from ioa.schema import load_package
from ioa.validation import validate_package
from publishing.package_files import load_package_file, unreadable_report


class Command(BaseCommand):
    help = "Compile an IOA-ORM package into the examiner's Pipecat flow (byte-stable JSON)."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE")

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        loaded = load_package_file(options["file"])
        if loaded.problem is not None:
            self.stderr.write(json.dumps(unreadable_report(loaded), indent=2))
            raise SystemExit(2)
        report = validate_package(loaded.document)
        if not report.passed:
            self.stderr.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
            raise SystemExit(1)
        flow = compile_package(load_package(loaded.document))
        self.stdout.write(serialise_compiled_flow(flow), ending="\n")
