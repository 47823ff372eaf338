"""Export the event protocol's JSON Schema to ``docs/spec/events.schema.json``.

Run ``python -m ioa.events.export`` to (re)write the file, or with ``--check`` to exit 1 when
the committed file differs from the models. A test does the same check.

The document holds the event envelope (payload discriminated by ``type``), the command
envelope, and ``x-event-types`` / ``x-aliases`` / ``x-canonical-commands``: the registry's
audiences, candidate projections (with ``candidateOnlyWhen`` where only some payloads reach the
candidate) and alias tables, which JSON Schema itself cannot express.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from pydantic.json_schema import models_json_schema

from ioa.events.commands import CANONICAL_COMMANDS, LLM_COMMANDS, CommandEnvelope
from ioa.events.envelope import EventEnvelope
from ioa.events.hashchain import GENESIS_HASH
from ioa.events.registry import ALIASES, REGISTRY
from ioa.events.types import SCHEMA_VERSION, Audience, EventType

SCHEMA_PATH: Final = Path(__file__).resolve().parents[2] / "docs" / "spec" / "events.schema.json"
SCHEMA_ID: Final = f"https://ioa-orm.dev/schema/events/{SCHEMA_VERSION}/events.schema.json"


def _event_types() -> dict[str, Any]:
    table: dict[str, Any] = {}
    for event_type, spec in REGISTRY.items():
        candidate: Any
        if Audience.CANDIDATE not in spec.audiences:
            candidate = None
        elif spec.candidate_fields is None:
            candidate = "full"
        else:
            candidate = sorted(spec.candidate_fields)
        table[event_type.value] = {
            "summary": spec.summary,
            "audiences": sorted(a.value for a in spec.audiences),
            "persisted": spec.persisted,
            "marking": spec.marking,
            "liveOnly": spec.live_only,
            "candidateProjection": candidate,
            "payload": f"#/$defs/{spec.payload_model.__name__}",
        }
        if spec.candidate_condition is not None:
            key, values = spec.candidate_condition
            table[event_type.value]["candidateOnlyWhen"] = {key: sorted(values)}
    return table


def _aliases() -> dict[str, Any]:
    return {
        name: (
            target.value
            if isinstance(target, EventType)
            else [EventType.RECOVERY_STARTED.value, EventType.RECOVERY_RESOLVED.value]
        )
        for name, target in ALIASES.items()
    }


def build_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of events and commands, as a dict."""
    _, schema = models_json_schema(
        [(EventEnvelope, "validation"), (CommandEnvelope, "validation")],
        ref_template="#/$defs/{model}",
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "IOA-ORM event protocol",
        "oneOf": [{"$ref": "#/$defs/EventEnvelope"}, {"$ref": "#/$defs/CommandEnvelope"}],
        "$defs": schema["$defs"],
        "x-schema-version": SCHEMA_VERSION,
        "x-event-types": _event_types(),
        "x-aliases": _aliases(),
        "x-canonical-commands": {
            "commandEnvelope": {k.value: v.value for k, v in CANONICAL_COMMANDS.items()},
            "llmCommandDetected": {k: v.value for k, v in LLM_COMMANDS.items()},
        },
        "x-hash-chain": {
            "genesis": GENESIS_HASH,
            "digest": "sha256 hex of canonical JSON of the envelope without seq, hash, prevHash",
            "link": "'sha256:' + sha256 hex of (prevHash + '|' + seq + '|' + digest)",
        },
    }


def render_json_schema() -> str:
    """The exact text of ``docs/spec/events.schema.json``."""
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
            print(f"{args.output} is out of date; run python -m ioa.events.export", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
