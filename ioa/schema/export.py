"""Export the package JSON Schema to ``docs/spec/package.schema.json``.

Run ``python -m ioa.schema.export`` to (re)write the file, or ``python -m ioa.schema.export
--check`` to exit with status 1 if the committed file differs from the models. A test does the
same check, so the file cannot drift from the code.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from ioa.schema.package import AssessmentPackage
from ioa.schema.transitions import EvidenceSufficientCondition
from ioa.versioning import CURRENT

SCHEMA_PATH: Final = Path(__file__).resolve().parents[2] / "docs" / "spec" / "package.schema.json"
"""Where the committed JSON Schema lives."""

SCHEMA_ID: Final = f"https://ioa-orm.dev/schema/{CURRENT}/package.schema.json"


def _add_deprecated_condition(schema: dict[str, Any]) -> None:
    """Declare the deprecated ``evidence_sufficient`` condition, which the loader accepts."""
    alias = EvidenceSufficientCondition.model_json_schema()
    alias["deprecated"] = True
    alias["description"] = (
        "Deprecated spelling of EvidenceSatisfiedCondition (TRN-005); converted on load: "
        "type becomes evidence_satisfied and targetIds = requiredEvidence (or [])."
    )
    definitions = schema["$defs"]
    definitions["EvidenceSufficientCondition"] = alias
    condition = definitions["Transition"]["properties"]["condition"]
    condition["oneOf"].append({"$ref": "#/$defs/EvidenceSufficientCondition"})
    condition["discriminator"]["mapping"]["evidence_sufficient"] = (
        "#/$defs/EvidenceSufficientCondition"
    )


def build_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an assessment package, as a dict."""
    schema = AssessmentPackage.model_json_schema(mode="validation")
    _add_deprecated_condition(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


def render_json_schema() -> str:
    """The exact text of ``docs/spec/package.schema.json``."""
    return json.dumps(build_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the schema file, or with ``--check`` report whether it is up to date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    parser.add_argument("--output", type=Path, default=SCHEMA_PATH)
    args = parser.parse_args(argv)
    text = render_json_schema()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; run python -m ioa.schema.export", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
