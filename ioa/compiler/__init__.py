"""The Pipecat adapter compiler (chapter 07): assessment package -> compiled Pipecat flow.

Pure core: no Django, no Pipecat. ``bot/`` hydrates the compiled flow into live
``pipecat.flows`` node configs. See ``docs/spec/adapter.md``.
"""

from ioa.compiler.compiler import (
    ADAPTER_VERSION,
    DATA_CHANNEL_TOPIC,
    RUNTIME_CONTROLLER_GUARD,
    ValidationCompile,
    compile_for_validation,
    compile_normalised,
    compile_package,
    compile_with_findings,
    package_document,
)
from ioa.compiler.errors import CompileError, CompileFinding
from ioa.compiler.report_observation import REPORT_OBSERVATION, report_observation_schema
from ioa.compiler.serialise import serialise_compiled_flow
from ioa.compiler.types import CompiledEdge, CompiledFlow, CompiledNode

__all__ = [
    "ADAPTER_VERSION",
    "DATA_CHANNEL_TOPIC",
    "REPORT_OBSERVATION",
    "RUNTIME_CONTROLLER_GUARD",
    "CompileError",
    "CompileFinding",
    "CompiledEdge",
    "CompiledFlow",
    "CompiledNode",
    "ValidationCompile",
    "compile_for_validation",
    "compile_normalised",
    "compile_package",
    "compile_with_findings",
    "package_document",
    "report_observation_schema",
    "serialise_compiled_flow",
]
