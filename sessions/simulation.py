"""The session simulator: drive the runtime controller from a script and store its events.

``python manage.py simulate_session PACKAGE SCRIPT --session-id ID`` (see
``sessions/management/commands/simulate_session.py``) validates the package, creates (or
finds) the simulated session, feeds the script to the controller through a stand-in for the
bot, persists every event through the event store (``sessions.event_store.append_events``) and
prints the stored envelopes in seq order.

The script is JSON Lines, one input per line (blank lines and lines starting with ``#`` are
skipped). Every line has ``at`` (seconds since the start, non-decreasing) and ``kind``:

=============  ==============================================================================
``start``      the candidate is ready: the exam enters its initial node
``transcript`` ``speaker`` (``candidate``/``examiner``, default candidate), ``text``,
               ``confidence`` (0-1); optional ``durationSec``, ``language``
``observation`` ``args``: a ``report_observation`` call, arguments as in chapter 07 §3
``command``    ``type`` (a chapter 05 command type), ``source`` (default ``candidate``),
               ``commandId`` (default ``line-N``), ``payload`` (default ``{}``)
``instruction`` ``mode`` (``queued``/``immediate``), ``text``; optional ``proctorId``,
               ``instructionId``
``tick``       only time passes (timers fire at their deadlines up to ``at``)
``proctor``    ``action`` (``pause``/``resume``/``extend_time``/``terminate``); optional
               ``seconds``, ``scope`` (``exam``/``node``), ``reason``, ``proctorId``
``fault``      ``component``, ``severity`` (``transient``/``fatal``); optional ``detail``
``fault_cleared`` optional ``component``
=============  ==============================================================================

Time: the script's ``at`` drives the injected clock from a fixed start (``DEFAULT_START``
unless given), so the events are the same on every run. Before each line the stand-in brings
the session up to that time the way a live bot would: it delivers the end of every utterance
that finishes by then (an utterance lasts :data:`MS_PER_WORD` per word) and sends a ``Tick`` at
every controller deadline (budgets, beats, silence) on the way; an utterance still being spoken
when the next line comes is cut short there.

The session id may be any string: it maps to the stored session's UUID with
:func:`session_uuid` (UUIDv5), and the controller's pool RNG is seeded from that UUID.
Re-running is safe. Stored events are immutable, so a simulated session is never replaced in
place: the same inputs find the stored session with exactly the events this run produces and
print them without writing; different inputs (another script, package, start time, or a
changed runtime) leave the earlier session untouched and store this run as the next revision
of the id (``ID``, ``ID#2``, ``ID#3``... each its own UUIDv5). The command says which.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TypeGuard

from django.db import transaction

from accounts.models import User
from authoring.models import DraftPackage
from ioa.canonical import checksum
from ioa.events import EventEnvelope
from ioa.output_filters.text import words
from ioa.runtime import (
    BotReady,
    CandidateReady,
    Command,
    Decision,
    EndSession,
    Fault,
    FaultCleared,
    ManualClock,
    Observation,
    ProctorAction,
    ProctorInstruction,
    RuntimeController,
    RuntimeInput,
    Speak,
    Tick,
    TranscriptSegment,
    UtteranceFinished,
    UtteranceStarted,
    to_ms,
)
from ioa.schema import AssessmentPackage, load_package
from publishing.models import PublishedVersion
from publishing.services import version_publish

if TYPE_CHECKING:
    from sessions.models import ExamSession

SIMULATION_NAMESPACE: Final = uuid.UUID("6f6a0c52-5d1e-5b0e-9a41-0e5c1d7a3b10")
"""UUIDv5 namespace of simulated session ids."""

DEFAULT_START: Final = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
"""When a simulated session starts unless the caller says otherwise (fixed: reproducible)."""

MS_PER_WORD: Final = 400
"""How long the stand-in takes to speak one word (150 words a minute)."""
MIN_UTTERANCE_MS: Final = 600
MAX_STEPS: Final = 100_000
"""Safety bound on stand-in steps per script line (timers always make progress)."""

KINDS: Final[Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "start": (frozenset(), frozenset()),
    "transcript": (
        frozenset({"text", "confidence"}),
        frozenset({"speaker", "durationSec", "language"}),
    ),
    "observation": (frozenset({"args"}), frozenset()),
    "command": (frozenset({"type"}), frozenset({"source", "commandId", "payload"})),
    "instruction": (frozenset({"mode", "text"}), frozenset({"proctorId", "instructionId"})),
    "tick": (frozenset(), frozenset()),
    "proctor": (frozenset({"action"}), frozenset({"seconds", "scope", "reason", "proctorId"})),
    "fault": (frozenset({"component", "severity"}), frozenset({"detail"})),
    "fault_cleared": (frozenset(), frozenset({"component"})),
}
"""Script kinds: (required fields, optional fields) besides ``at`` and ``kind``."""


class ScriptError(ValueError):
    """The script is malformed; ``line`` is the 1-based line number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


class SessionConflict(Exception):
    """Every revision of the session id up to :data:`MAX_REVISIONS` is taken."""


MAX_REVISIONS: Final = 1000


@dataclass(frozen=True, slots=True)
class ScriptLine:
    """One parsed script line."""

    line: int
    at_ms: int
    kind: str
    fields: Mapping[str, Any]


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_fields(line: int, kind: str, item: Mapping[str, Any]) -> None:
    required, optional = KINDS[kind]
    missing = sorted(required - item.keys())
    if missing:
        raise ScriptError(line, f"'{kind}' needs {', '.join(missing)}")
    unknown = sorted(item.keys() - required - optional - {"at", "kind", "comment"})
    if unknown:
        raise ScriptError(line, f"unknown field(s) for '{kind}': {', '.join(unknown)}")
    if kind == "transcript":
        if not isinstance(item["text"], str) or not item["text"].strip():
            raise ScriptError(line, "transcript text must be a non-empty string")
        confidence = item["confidence"]
        if not _number(confidence) or not 0 <= confidence <= 1:
            raise ScriptError(line, "transcript confidence must be a number between 0 and 1")
        if item.get("speaker", "candidate") not in ("candidate", "examiner"):
            raise ScriptError(line, "speaker must be 'candidate' or 'examiner'")
        if "durationSec" in item and (not _number(item["durationSec"]) or item["durationSec"] < 0):
            raise ScriptError(line, "durationSec must be a non-negative number")
        if "language" in item and not isinstance(item["language"], str):
            raise ScriptError(line, "language must be a string")
    elif kind == "observation":
        if not isinstance(item["args"], dict):
            raise ScriptError(line, "observation args must be an object")
    elif kind == "command":
        for key in ("type", "source", "commandId"):
            if key in item and (not isinstance(item[key], str) or not item[key]):
                raise ScriptError(line, f"command {key} must be a non-empty string")
        if "payload" in item and not isinstance(item["payload"], dict):
            raise ScriptError(line, "command payload must be an object")
    elif kind == "instruction":
        if item["mode"] not in ("queued", "immediate"):
            raise ScriptError(line, "instruction mode must be 'queued' or 'immediate'")
        if not isinstance(item["text"], str) or not item["text"].strip():
            raise ScriptError(line, "instruction text must be a non-empty string")
    elif kind == "proctor":
        if item["action"] not in ("pause", "resume", "extend_time", "terminate"):
            raise ScriptError(
                line, "proctor action must be pause, resume, extend_time or terminate"
            )
        if item["action"] == "extend_time" and (
            not _number(item.get("seconds")) or item["seconds"] <= 0
        ):
            raise ScriptError(line, "extend_time needs a positive number of seconds")
        if item.get("scope", "exam") not in ("exam", "node"):
            raise ScriptError(line, "scope must be 'exam' or 'node'")
    elif kind == "fault" and item["severity"] not in ("transient", "fatal"):
        raise ScriptError(line, "fault severity must be 'transient' or 'fatal'")


def parse_script(text: str) -> list[ScriptLine]:
    """Parse a JSON Lines script; raises :class:`ScriptError` naming the first bad line."""
    lines: list[ScriptLine] = []
    last_at = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            item = json.loads(stripped)
        except ValueError as exc:
            raise ScriptError(number, f"not JSON ({exc.args[0]})") from exc
        if not isinstance(item, dict):
            raise ScriptError(number, "each line must be a JSON object")
        at = item.get("at")
        if not _number(at) or at < 0:
            raise ScriptError(number, "'at' must be a number of seconds >= 0")
        at_ms = round(at * 1000)
        if at_ms < last_at:
            raise ScriptError(number, f"'at' goes back in time ({at} after {last_at / 1000:g})")
        last_at = at_ms
        kind = item.get("kind")
        if kind not in KINDS:
            raise ScriptError(number, f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        _check_fields(number, str(kind), item)
        lines.append(ScriptLine(number, at_ms, str(kind), item))
    return lines


def to_input(line: ScriptLine, opened_ms: int) -> RuntimeInput:
    """The controller input of one script line."""
    f = line.fields
    if line.kind == "start":
        return CandidateReady()
    if line.kind == "transcript":
        duration = f.get("durationSec")
        start_ms = None
        if duration is not None:
            start_ms = max(0, line.at_ms - round(duration * 1000))
        return TranscriptSegment(
            speaker=f.get("speaker", "candidate"),
            text=f["text"],
            confidence=float(f["confidence"]),
            start_ms=start_ms,
            end_ms=line.at_ms if duration is not None else None,
            language=f.get("language", "en"),
        )
    if line.kind == "observation":
        return Observation(f["args"])
    if line.kind == "command":
        return Command(
            command_id=f.get("commandId", f"line-{line.line}"),
            type=f["type"],
            source=f.get("source", "candidate"),
            payload=f.get("payload", {}),
        )
    if line.kind == "instruction":
        return ProctorInstruction(
            mode=f["mode"],
            text=f["text"],
            proctor_id=f.get("proctorId", "proctor"),
            instruction_id=f.get("instructionId"),
        )
    if line.kind == "proctor":
        return ProctorAction(
            action=f["action"],
            proctor_id=f.get("proctorId", "proctor"),
            seconds=f.get("seconds"),
            scope=f.get("scope", "exam"),
            reason=f.get("reason"),
        )
    if line.kind == "fault":
        return Fault(
            component=str(f["component"]), severity=f["severity"], detail=str(f.get("detail", ""))
        )
    if line.kind == "fault_cleared":
        return FaultCleared(component=str(f.get("component", "network")))
    return Tick()


def session_uuid(session_key: str, revision: int = 1) -> uuid.UUID:
    """The stored session's id for a ``--session-id`` string and revision (revision 1 of a
    UUID is that UUID)."""
    if revision == 1:
        try:
            return uuid.UUID(session_key)
        except ValueError:
            return uuid.uuid5(SIMULATION_NAMESPACE, session_key)
    return uuid.uuid5(SIMULATION_NAMESPACE, f"{session_key}#{revision}")


def utterance_ms(text: str) -> int:
    """How long the stand-in takes to say ``text``."""
    return max(MIN_UTTERANCE_MS, MS_PER_WORD * len(words(text)))


@dataclass
class _Speaking:
    utterance_id: str
    text: str
    started_ms: int = 0
    due_ms: int = 0


@dataclass
class BotStandIn:
    """Plays the bot: applies the controller's effects and reports back, on a manual clock.

    Utterances are spoken one after the other: each ``Speak`` is queued, started when the
    previous one has ended, and reported with ``UtteranceStarted``/``UtteranceFinished``.
    ``sink`` receives every decision (the simulator persists its events there)."""

    controller: RuntimeController
    clock: ManualClock
    sink: Callable[[Decision], None]
    queue: list[_Speaking] = field(default_factory=list)
    current: _Speaking | None = None
    ended: bool = False

    def handle(self, item: RuntimeInput) -> Decision:
        decision = self.controller.handle(item)
        self.sink(decision)
        for effect in decision.effects:
            if isinstance(effect, Speak):
                self.queue.append(_Speaking(effect.utterance_id, effect.text))
            elif isinstance(effect, EndSession):
                self.ended = True
        self._start_next()
        return decision

    def _start_next(self) -> None:
        if self.current is not None or not self.queue:
            return
        speaking = self.queue.pop(0)
        now = self.clock.now_ms()
        speaking.started_ms, speaking.due_ms = now, now + utterance_ms(speaking.text)
        self.current = speaking
        self.handle(UtteranceStarted(speaking.utterance_id))

    def _finish(self, at_ms: int) -> None:
        speaking = self.current
        if speaking is None:
            return
        self.current = None
        self.clock.set(max(self.clock.now_ms(), at_ms))
        duration = max(0, min(at_ms, speaking.due_ms) - speaking.started_ms)
        self.handle(UtteranceFinished(speaking.utterance_id, duration))

    def advance_to(self, target_ms: int) -> None:
        """Bring the session to ``target_ms``: utterances end and timers fire on the way."""
        for _ in range(MAX_STEPS):
            finish = self.current.due_ms if self.current is not None else None
            deadline = None if self.controller.completed else self.controller.next_deadline_ms()
            candidates = [t for t in (finish, deadline) if t is not None]
            upcoming = min(candidates) if candidates else None
            if upcoming is None or upcoming > target_ms:
                break
            if finish is not None and finish == upcoming:
                self._finish(upcoming)
            else:
                self.clock.set(max(self.clock.now_ms(), upcoming))
                self.handle(Tick())
        self.clock.set(max(self.clock.now_ms(), target_ms))

    def cut_short(self) -> None:
        """The next input interrupts the examiner: what is being said ends now, what is queued
        is still said (each cut short in turn)."""
        now = self.clock.now_ms()
        for _ in range(MAX_STEPS):
            if self.current is None:
                return
            self._finish(now)

    def drain(self) -> None:
        """Let the queued utterances be spoken to the end (no further timers)."""
        for _ in range(MAX_STEPS):
            if self.current is None:
                return
            self._finish(self.current.due_ms)


def run_script(
    package: AssessmentPackage,
    lines: Sequence[ScriptLine],
    *,
    session_id: str,
    start: datetime = DEFAULT_START,
    sink: Callable[[Decision], None] | None = None,
) -> list[EventEnvelope]:
    """Run a parsed script through a fresh controller (pure: no database). Returns every event
    in order; ``sink`` sees each decision as it happens (to persist it)."""
    events: list[EventEnvelope] = []

    def collect(decision: Decision) -> None:
        events.extend(decision.events)
        if sink is not None:
            sink(decision)

    opened = to_ms(start)
    clock = ManualClock(opened)
    controller = RuntimeController(package, session_id=session_id, clock=clock)
    bot = BotStandIn(controller, clock, collect)
    bot.handle(BotReady())
    for line in lines:
        bot.advance_to(opened + line.at_ms)
        bot.cut_short()
        bot.handle(to_input(line, opened))
    bot.drain()
    return events


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """What :func:`simulate_session` did."""

    session_id: uuid.UUID
    events: list[dict[str, object]]
    """The stored envelopes, in seq order."""
    reused: bool
    """True when the session was already stored with exactly these events."""
    revision: int = 1
    """1 for the session id itself; n > 1 when earlier revisions hold other simulations."""


def _comparable(wire: Mapping[str, object]) -> str:
    return json.dumps(wire, sort_keys=True, ensure_ascii=False)


def simulate_session(
    *,
    document: Mapping[str, object],
    lines: Sequence[ScriptLine],
    session_key: str,
    start: datetime = DEFAULT_START,
) -> SimulationResult:
    """Create the simulated session, run the script, persist every event, return the stored
    log. ``document`` must be a package that passed validation."""
    from sessions.event_store import append_events
    from sessions.models import ExamSession
    from sessions.selectors import iter_rows, wire_from_row

    package = load_package(dict(document))
    for revision in range(1, MAX_REVISIONS + 1):
        key = session_uuid(session_key, revision)
        if not ExamSession.objects.filter(pk=key).exists():
            break
        stored = [wire_from_row(row) for row in iter_rows(session_id=key)]
        fresh = [e.to_wire() for e in run_script(package, lines, session_id=str(key), start=start)]
        if [_comparable(e) for e in stored] == [_comparable(e) for e in fresh]:
            return SimulationResult(key, stored, reused=True, revision=revision)
    else:
        raise SessionConflict(
            f"session id {session_key!r} has {MAX_REVISIONS} stored simulations; choose another"
        )

    label = session_key if revision == 1 else f"{session_key}#{revision}"
    with transaction.atomic():
        session = _create_session(document, key, label)

        def persist(decision: Decision) -> None:
            if decision.events:
                expected = decision.events[0].seq
                append_events(
                    session=session,
                    events=list(decision.events),
                    expected_version=None if expected is None else expected - 1,
                )

        run_script(package, lines, session_id=str(key), start=start, sink=persist)
    stored = [wire_from_row(row) for row in iter_rows(session_id=key)]
    return SimulationResult(key, stored, reused=False, revision=revision)


def _create_session(document: Mapping[str, object], key: uuid.UUID, label: str) -> ExamSession:
    """The users, draft, published version and sitting a simulated session hangs on."""
    from sessions.models import ExamSession, Sitting

    author, _ = User.objects.get_or_create(
        username="simulator", defaults={"role": "author", "display_name": "Session simulator"}
    )
    candidate, _ = User.objects.get_or_create(
        username="simulated-candidate",
        defaults={"role": "candidate", "display_name": "Simulated candidate"},
    )
    digest = checksum(dict(document))
    version = (
        PublishedVersion.objects.filter(draft__owner=author, checksum=digest)
        .order_by("published_at")
        .first()
    )
    if version is None:
        metadata = document.get("metadata")
        default = "Simulated package"
        title = metadata.get("title", default) if isinstance(metadata, Mapping) else default
        draft = DraftPackage(owner=author, title=str(title)[:300])
        draft.document = dict(document)
        draft.save(force_insert=True)
        version = version_publish(draft=draft, user=author).version
    sitting, _ = Sitting.objects.get_or_create(
        version=version,
        title="Simulated sessions",
        defaults={"created_by": author},
    )
    return ExamSession.objects.create(id=key, sitting=sitting, candidate=candidate)
