"""The byte form of a compiled flow: defined once, here (A-4: byte-identical for a package)."""

from __future__ import annotations

import json

from ioa.compiler.types import CompiledFlow


def serialise_compiled_flow(flow: CompiledFlow) -> str:
    """Pretty JSON with sorted keys, two-space indent, UTF-8 text kept as is, no trailing newline.

    Only the flow's content decides the text: no timestamps, no environment, no set iteration.
    """
    return json.dumps(flow, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
