"""What an exam of a draft will cost, estimated from its dry run before it is published (issue
#35, "the dry run estimates the cost of a sitting before it runs"). Pure: no Django, no I/O.

:func:`measure` turns a dry-run report (``ioa.dry_run``) and the compiled package into the
usage of one typical exam (:class:`ExamMeasures`):

* **LLM requests**: the median, over the simulated sessions, of the examiner's LLM requests
  (one per candidate answer, one per runtime instruction; the report's ``llmRequests``);
* **prompt tokens a request**: the compiled instructions of the node the request is made at
  (role message, task messages and the tool definitions offered there, at
  :data:`CHARS_PER_TOKEN` characters a token), weighted by where the dry run's requests fall,
  plus :data:`CONVERSATION_TOKENS` for the conversation at the node so far;
* **reply tokens a request**: :data:`REPLY_TOKENS` (a ``report_observation`` call with a
  spoken line);
* **speech recognition** (voice only): the exam's planned duration (streaming recognisers
  hear the whole exam), or the dry run's median duration when the package plans none;
* **synthesised speech** (voice only): the median of what the examiner said in the dry run
  (the package's questions and the examiner's lines), in characters; its minutes at the dry
  run's :data:`SECONDS_PER_WORD`.

:func:`estimate` prices that usage with the bot's price table (``VIVA_PRICING``, keys
``provider:model`` with ``provider:*`` and ``*`` fallbacks, as ``bot.usage`` prices live
usage) for the configured providers, per exam and for a sitting of ``candidates``. A component
without a price is flagged *not priced* and counts as zero, so a total is then a lower bound,
as on the cost pages (``sessions.costs``). See docs/studio.md, "Dry run".
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from statistics import median
from typing import Final

CHARS_PER_TOKEN: Final = 4
CONVERSATION_TOKENS: Final = 400
"""Prompt tokens added to every request for the conversation at the node so far (a candidate
answer of about 100 words and the examiner's reply, about two exchanges on average)."""
REPLY_TOKENS: Final = 100
SECONDS_PER_WORD: Final = Decimal("0.4")
"""The dry run's speaking rate (``ioa.dry_run.driver.MS_PER_WORD``)."""
DEFAULT_CANDIDATES: Final = 100
MAX_CANDIDATES: Final = 100_000
PLACES: Final = Decimal("0.0001")
MILLION: Final = Decimal(1_000_000)
COMPONENTS: Final = ("llm", "stt", "tts")

Providers = Mapping[str, tuple[str, str]]
"""``component → (provider, model)`` of the examiner's services, as usage records name them."""


@dataclass(frozen=True, slots=True)
class ExamMeasures:
    """The usage of one typical exam (module docstring)."""

    simulated: int
    """Simulated sessions the medians are taken over."""
    llm_requests: Decimal
    prompt_tokens: int
    """A request's prompt tokens."""
    reply_tokens: int
    stt_minutes: Decimal
    planned: bool
    """True when ``stt_minutes`` is the exam's planned duration, False: the dry run's median."""
    tts_characters: int
    tts_minutes: Decimal


def _tokens(characters: int) -> int:
    return math.ceil(characters / CHARS_PER_TOKEN)


def node_prompt_tokens(flow: Mapping[str, object]) -> dict[str, int]:
    """Per compiled node, the tokens of its instructions: role message, task messages and the
    definitions of the functions offered there (``ioa.compiler.CompiledFlow``)."""
    functions = flow.get("functions")
    schemas = functions if isinstance(functions, Mapping) else {}
    nodes = flow.get("nodes")
    found: dict[str, int] = {}
    for node in nodes if isinstance(nodes, list) else []:
        if not isinstance(node, Mapping):
            continue
        tasks = node.get("task_messages")
        offered = node.get("functions")
        characters = len(str(node.get("role_message", "")))
        characters += sum(
            len(str(t.get("content", ""))) for t in (tasks if isinstance(tasks, list) else [])
        )
        characters += sum(
            len(json.dumps(schemas.get(name), sort_keys=True))
            for name in (offered if isinstance(offered, list) else [])
        )
        found[str(node.get("name", ""))] = _tokens(characters)
    return found


def _number(value: object) -> Decimal:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return Decimal(0)


def _median(values: Sequence[Decimal]) -> Decimal:
    return Decimal(str(median(values))) if values else Decimal(0)


def measure(
    report: Mapping[str, object],
    prompt_tokens: Mapping[str, int],
    planned_sec: float | None,
) -> ExamMeasures:
    """The usage of a typical exam from the dry-run ``report``, the tokens of each node's
    instructions (:func:`node_prompt_tokens`) and the exam's planned duration in seconds
    (``metadata.totalTimeBudgetSec``; None: use the dry run's median duration)."""
    raw = report.get("runs")
    runs = [r for r in (raw if isinstance(raw, list) else []) if isinstance(r, Mapping)]
    totals: list[Decimal] = []
    requests = weighted = 0
    for run in runs:
        by_node = run.get("llmRequests")
        counts = by_node if isinstance(by_node, Mapping) else {}
        run_total = sum(int(_number(n)) for n in counts.values())
        totals.append(Decimal(run_total))
        requests += run_total
        weighted += sum(int(_number(n)) * prompt_tokens.get(str(k), 0) for k, n in counts.items())
    if planned_sec:
        stt_minutes = _number(planned_sec) / 60
    else:
        stt_minutes = _median([_number(r.get("durationSec")) for r in runs]) / 60
    words = _median([_number(r.get("examinerWords")) for r in runs])
    return ExamMeasures(
        simulated=len(runs),
        llm_requests=_median(totals),
        prompt_tokens=(round(weighted / requests) if requests else 0) + CONVERSATION_TOKENS,
        reply_tokens=REPLY_TOKENS,
        stt_minutes=stt_minutes,
        planned=bool(planned_sec),
        tts_characters=round(_median([_number(r.get("examinerChars")) for r in runs])),
        tts_minutes=words * SECONDS_PER_WORD / 60,
    )


@dataclass(frozen=True, slots=True)
class EstimateLine:
    """One component of the estimate: its provider and model, and its cost per exam."""

    component: str
    provider: str
    model: str
    per_exam: Decimal
    priced: bool
    """False when the price table has no price for it (its cost counts as zero)."""

    @property
    def key(self) -> str:
        return f"{self.component}:{self.provider}:{self.model}"


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """The estimated cost of an exam and of a sitting of ``candidates``, in ``currency``; a text
    exam uses the LLM only, a voice exam the LLM, speech recognition and synthesised speech."""

    currency: str
    candidates: int
    lines: tuple[EstimateLine, ...]
    assumptions: tuple[str, ...]
    """The usage priced, in plain words."""

    def _total(self, voice: bool) -> Decimal:
        return sum(
            (line.per_exam for line in self.lines if voice or line.component == "llm"), Decimal(0)
        )

    def _unpriced(self, voice: bool) -> tuple[str, ...]:
        return tuple(
            line.key
            for line in self.lines
            if not line.priced and (voice or line.component == "llm")
        )

    @property
    def text_per_exam(self) -> Decimal:
        return self._total(voice=False)

    @property
    def voice_per_exam(self) -> Decimal:
        return self._total(voice=True)

    @property
    def text_sitting(self) -> Decimal:
        return self.text_per_exam * self.candidates

    @property
    def voice_sitting(self) -> Decimal:
        return self.voice_per_exam * self.candidates

    @property
    def unpriced(self) -> tuple[str, ...]:
        """``component:provider:model`` keys without a price (their cost counts as zero)."""
        return self._unpriced(voice=True)

    def as_json(self) -> dict[str, object]:
        """The API's form: amounts as decimal strings (4 places), ``complete`` per mode."""

        def amount(value: Decimal) -> str:
            return str(value.quantize(PLACES))

        return {
            "currency": self.currency,
            "candidates": self.candidates,
            "perExam": {"text": amount(self.text_per_exam), "voice": amount(self.voice_per_exam)},
            "sitting": {"text": amount(self.text_sitting), "voice": amount(self.voice_sitting)},
            "byComponent": [
                {
                    "component": line.component,
                    "provider": line.provider,
                    "model": line.model,
                    "perExam": amount(line.per_exam),
                    "priced": line.priced,
                }
                for line in self.lines
            ],
            "unpriced": list(self.unpriced),
            "complete": {"text": not self._unpriced(False), "voice": not self.unpriced},
            "assumptions": list(self.assumptions),
        }


def price_entry(
    pricing: Mapping[str, object], component: str, provider: str, model: str
) -> Mapping[str, object] | None:
    """The price of ``provider:model`` in ``pricing[component]``, trying ``provider:*`` and
    ``*`` next (as ``bot.usage`` does); None when there is none or it is not an object."""
    table = pricing.get(component)
    if not isinstance(table, Mapping):
        return None
    for key in (f"{provider}:{model}", f"{provider}:*", "*"):
        if key in table:
            entry = table[key]
            return entry if isinstance(entry, Mapping) else None
    return None


def _rate(entry: Mapping[str, object], name: str) -> Decimal:
    return _number(entry.get(name) or 0)


def _cost(component: str, entry: Mapping[str, object], usage: ExamMeasures) -> Decimal:
    if component == "llm":
        per_request = (
            _rate(entry, "input_per_million") * usage.prompt_tokens
            + _rate(entry, "output_per_million") * usage.reply_tokens
        ) / MILLION
        return usage.llm_requests * per_request
    if component == "stt":
        return _rate(entry, "per_minute") * usage.stt_minutes
    return _rate(entry, "per_million_characters") * usage.tts_characters / MILLION


def estimate(
    usage: ExamMeasures,
    pricing: Mapping[str, object],
    providers: Providers,
    candidates: int = DEFAULT_CANDIDATES,
) -> CostEstimate:
    """Price ``usage`` with ``pricing`` (``VIVA_PRICING``) for ``providers`` (a component not
    named there is ``unknown:unknown``), per exam and for ``candidates`` exams."""
    lines = []
    for component in COMPONENTS:
        provider, model = providers.get(component, ("unknown", "unknown"))
        entry = price_entry(pricing, component, provider, model)
        cost = _cost(component, entry, usage) if entry is not None else Decimal(0)
        lines.append(EstimateLine(component, provider, model, cost, entry is not None))
    return CostEstimate(
        currency=str(pricing.get("currency") or "USD"),
        candidates=candidates,
        lines=tuple(lines),
        assumptions=assumptions(usage, providers),
    )


def _minutes(value: Decimal) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def assumptions(usage: ExamMeasures, providers: Providers) -> tuple[str, str]:
    """The usage :func:`estimate` prices, in plain words: the LLM's, then the voice's."""

    def named(component: str) -> str:
        provider, model = providers.get(component, ("unknown", "unknown"))
        return f"{provider} {model}"

    duration = (
        "the exam's planned duration" if usage.planned else "the dry run's median exam duration"
    )
    return (
        f"About {usage.llm_requests:g} examiner turns an exam (the median of "
        f"{usage.simulated} simulated exams), each an LLM request of ~{usage.prompt_tokens:,} "
        f"prompt tokens (the node's instructions and tool, and ~{CONVERSATION_TOKENS} tokens of "
        f"conversation) and ~{usage.reply_tokens} reply tokens, with {named('llm')}.",
        f"Voice only: {_minutes(usage.stt_minutes)} min of speech recognition ({duration}) "
        f"with {named('stt')}, and ~{usage.tts_characters:,} characters "
        f"(~{_minutes(usage.tts_minutes)} min) of synthesised speech (what the examiner said in "
        f"the dry run) with {named('tts')}.",
    )


def candidates_from(value: object) -> int:
    """The sitting size an author entered: a whole number from 1 to :data:`MAX_CANDIDATES`;
    anything else (empty, not a number) is :data:`DEFAULT_CANDIDATES`."""
    try:
        number = int(str(value).strip())
    except ValueError:
        return DEFAULT_CANDIDATES
    return min(max(number, 1), MAX_CANDIDATES)
