"""Counters the examiner's roles keep for tests and benchmarks (no Pipecat here)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CoreStats:
    """Counters for tests and benchmarks (one per :class:`~bot.examiner.ExaminerCore`)."""

    inputs: int = 0
    observations: int = 0
    persist_retries: int = 0
    resyncs: int = 0
    handler_errors: int = 0
    faults: int = 0
    text_without_tool: int = 0
    turn_faults: int = 0
    late_observations: int = 0
    observation_ms: list[float] = field(default_factory=list)
