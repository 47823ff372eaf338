"""The figures of a chaos run (tests/support/chaos.py) and its invariants, read from what the
run left: the event store, the marks and their audit, the LTI platform's gradebook and the
webhook receiver's log.

Invariants (each failure is one line of :attr:`Report.failures`, naming the session and what
its log ends with): every exam ended normally (``all_nodes_visited``), resumed or not; every
completed exam was marked exactly once; every locked mark reached the platform (one score, by
its content and ``timestamp``: a post sent again after a crash between the post and its record
is the same score, stamped when the tool changed it, and counts once; ``lti.grades``) and the
receiver (one ``marks.locked`` and one ``exam.completed`` delivery, by its webhook-id: the
receiver is idempotent, a delivery sent again after a crash counts once) exactly once; no event
is duplicated (unique ids, gap-free seqs, one candidate transcript per answer the examiner
processed and no answer left unprocessed before a later one, one ``exam_completed``); every
chain verifies; no side effect is left pending or dead."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.chaos_candidates import Exam
from tests.support.chaos_faults import Fault
from tests.support.webhook_receiver import Receiver

NORMAL_END = "all_nodes_visited"
SILENT_AFTER_TURN_FAULT = (
    "the examiner says nothing after an LLM turn fault: the controller's fallback (the current "
    "question again) never reaches the log and the exam waits for ever"
)
DUMPS = Path(__file__).resolve().parents[2] / "test-artifacts" / "chaos"
AFTER_FAULT_SECONDS = 10.0
"""Answers sent up to this long after the last fault is back count as "during" the faults."""


@dataclass
class Report:
    """What to print and what failed."""

    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)
    """Exams that did not end normally because of :data:`SILENT_AFTER_TURN_FAULT` (issue #33's
    chaos run found it; an invariant failure all the same)."""
    figures: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        lines = list(self.lines)
        if self.known:
            lines.append("KNOWN DEFECT, exams that did not end normally:")
            lines += [f"  - {k}" for k in self.known]
        lines.append("INVARIANTS FAILED:" if self.failures else "every other invariant holds")
        return "\n".join(lines + [f"  - {f}" for f in self.failures])


@dataclass
class Seen:
    """One session as the run left it."""

    exam: Exam
    user: str
    events: list[dict[str, Any]]
    marks: int
    marked_entries: int
    scores: int
    """Distinct scores the platform received for the candidate (a post sent again counts once)."""
    score_posts: list[dict[str, Any]]
    """Every score post the platform received for the candidate, as received."""
    hooks: Counter[str]
    """webhook type -> distinct deliveries (webhook-id) received."""
    raw_hooks: Counter[str]
    chain: list[str]
    inputs: list[dict[str, Any]]
    """The answers the candidate sent (acknowledged), as the inbox stored them."""
    ended_at: Any
    """When the exam's last question was left (its last ``node_exited``) if it completed, else
    ``None`` (shown with the inbox when answers do not add up)."""

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    def end(self) -> str:
        ends = self.of("exam_completed")
        return str(ends[-1]["payload"].get("reason")) if ends else "not ended"

    def tail(self) -> str:
        return ", ".join(f"{e['seq']}:{e['type']}" for e in self.events[-8:])


def report(
    setup: Any, receiver: Receiver, schedule: list[Fault], timeline: Any, wall: float
) -> Report:
    """Read everything back and build the report."""
    out = Report()
    hooks = received_hooks(receiver)
    scores: dict[str, list[dict[str, Any]]] = {}
    for score in setup.lms.scores(setup.sitting):
        scores.setdefault(str(score["userId"]), []).append(score)
    seen = [observe(exam, setup.users[exam.key], scores, hooks) for exam in setup.exams]
    schedule_lines(out, schedule, timeline)
    outcome_lines(out, seen)
    side_effect_lines(out, seen, timeline)
    integrity_lines(out, seen)
    latency_lines(out, setup.exams, timeline)
    out.lines.append(f"wall time: {wall:.1f} s (exams done at {timeline.exams_done or 0:.1f} s)")
    out.figures["wall"] = wall
    leftovers(out)
    return out


def received_hooks(receiver: Receiver) -> dict[str, tuple[Counter[str], Counter[str]]]:
    """session id -> (distinct deliveries by type, raw requests by type)."""
    distinct: dict[str, set[tuple[str, str]]] = {}
    raw: dict[str, Counter[str]] = {}
    for request in receiver.received:
        body = json.loads(request.body)
        key = str(body.get("data", {}).get("sessionId"))
        distinct.setdefault(key, set()).add((str(body["type"]), request.headers["webhook-id"]))
        raw.setdefault(key, Counter())[str(body["type"])] += 1
    return {key: (Counter(t for t, _ in pairs), raw[key]) for key, pairs in distinct.items()}


def distinct_scores(posts: list[dict[str, Any]]) -> int:
    """Scores by what they say (content and timestamp): one sent again counts once."""
    return len({json.dumps(post, sort_keys=True) for post in posts})


def observe(
    exam: Exam, user: str, scores: dict[str, list[dict[str, Any]]], hooks: dict[str, Any]
) -> Seen:
    from marking.models import MarkingAuditEntry, SessionMark
    from sessions.models import CandidateInput, SessionEvent
    from sessions.selectors import verify_log

    rows = SessionEvent.objects.filter(session_id=exam.session_id).order_by("seq")
    events = [
        {"seq": r.seq, "type": r.type, "payload": r.payload, "eventId": str(r.event_id)}
        for r in rows
    ]
    marks = SessionMark.objects.filter(session_id=exam.session_id)
    entries = MarkingAuditEntry.objects.filter(mark__session_id=exam.session_id, action="marked")
    distinct, raw = hooks.get(exam.key, (Counter(), Counter()))
    end = (
        rows.filter(type="node_exited").order_by("-seq").values_list("timestamp", flat=True).first()
        if rows.filter(type="exam_completed").exists()
        else None
    )
    inputs = CandidateInput.objects.filter(session_id=exam.session_id, input_id__in=exam.acked)
    return Seen(
        exam=exam,
        user=user,
        events=events,
        marks=marks.count(),
        marked_entries=entries.count(),
        scores=distinct_scores(scores.get(user, [])),
        score_posts=scores.get(user, []),
        hooks=distinct,
        raw_hooks=raw,
        chain=[str(p) for p in verify_log(session_id=exam.session_id)],
        inputs=list(inputs.values("input_id", "payload", "received_at", "processed_at")),
        ended_at=end,
    )


def schedule_lines(out: Report, schedule: list[Fault], timeline: Any) -> None:
    out.lines.append(f"faults planned: {len(schedule)}")
    for done in timeline.injected:
        out.lines.append(
            f"  {done.began:6.1f} s  {done.fault.describe():<28} back at {done.back:6.1f} s"
            f"  ({done.detail})"
        )
    out.figures["faults"] = [(d.began, d.fault.kind) for d in timeline.injected]
    if len(timeline.injected) != len(schedule):
        out.failures.append(f"only {len(timeline.injected)} of {len(schedule)} faults injected")


def resumed(seen: Seen) -> bool:
    """A bot took the exam over after a kill (a fault resume) or a drain (a handover)."""
    crashed = any(e["payload"].get("code") == "bot_fault" for e in seen.of("system_error"))
    handed = any(e["payload"].get("phase") == "resumed" for e in seen.of("bot_handover"))
    return crashed or handed


def dump(seen: Seen) -> Path:
    """Write the session's whole log, inbox and lease to ``test-artifacts/chaos/<id>.json``."""
    from bot.models import BotLease
    from sessions.models import CandidateInput

    DUMPS.mkdir(parents=True, exist_ok=True)
    path = DUMPS / f"{seen.exam.key}.json"
    inbox = CandidateInput.objects.filter(session_id=seen.exam.session_id).values(
        "input_id", "kind", "payload", "received_at", "processed_at"
    )
    lease = BotLease.objects.filter(pk=seen.exam.session_id).values().first()
    state = {
        "events": seen.events,
        "inbox": list(inbox),
        "lease": lease,
        "stalls": seen.exam.stalls,
    }
    path.write_text(json.dumps(state, indent=1, default=str))
    return path


def outcome_lines(out: Report, seen: list[Seen]) -> None:
    normal = [s for s in seen if s.end() == NORMAL_END]
    after_kill = [s for s in normal if resumed(s)]
    aborted = [s for s in seen if s.end() != NORMAL_END]
    out.figures.update(started=len(seen), normal=len(normal), resumed=len(after_kill))
    out.lines.append(
        f"exams started {len(seen)}; completed normally {len(normal)} "
        f"(of which resumed after a kill or a drain {len(after_kill)}); "
        f"not completed normally {len(aborted)}"
    )
    crashes = sum(
        1 for s in seen for e in s.of("system_error") if e["payload"].get("code") == "bot_fault"
    )
    handovers = sum(
        1 for s in seen for e in s.of("bot_handover") if e["payload"].get("phase") == "resumed"
    )
    reconnects = sum(s.exam.reconnects for s in seen)
    reloads = sum(s.exam.reloads for s in seen)
    stalled = sum(1 for s in seen if s.exam.stalls)
    again = sum(s.exam.ready_again for s in seen)
    out.lines.append(
        f"  resumes after a crash {crashes}, silent handovers {handovers}; candidate socket "
        f"reconnects {reconnects}, room reloads after a 30 s stall {reloads} ({stalled} exams), "
        f"Start pressed again {again}"
    )
    for s in aborted:
        path = dump(s)
        why = s.exam.failure or "the candidate saw nothing wrong"
        out.lines.append(f"  aborted {s.exam.key}: end {s.end()}; {why}; last: {s.tail()}")
        message = (
            f"exam {s.exam.key} did not end normally (end: {s.end()}; candidate: {why}); "
            f"last events {s.tail()}; log, inbox and lease in {path.relative_to(DUMPS.parents[1])}"
        )
        if silent_after_turn_fault(s):
            out.known.append(f"{message} [{SILENT_AFTER_TURN_FAULT}]")
        else:
            out.failures.append(message)


def silent_after_turn_fault(seen: Seen) -> bool:
    """The exam stopped at an LLM turn fault: in what the candidate had seen when they gave up,
    a ``system_error`` ``llm_*`` after the examiner's last utterance (what the bots stored
    after, when the run's workers were stopped, does not count), and no end."""
    shown = [e for e in seen.events if e["seq"] <= seen.exam.seen_seq]
    faults = [
        e["seq"]
        for e in shown
        if e["type"] == "system_error" and str(e["payload"].get("code", "")).startswith("llm_")
    ]
    said = [e["seq"] for e in shown if e["type"] == "examiner_utterance_final"]
    return bool(faults) and not seen.of("exam_completed") and (not said or said[-1] < faults[-1])


def side_effect_lines(out: Report, seen: list[Seen], timeline: Any) -> None:
    """Marks per completed exam, grades at the platform and deliveries at the receiver."""
    ended = [s for s in seen if s.of("exam_completed")]
    marks = Counter(s.marks for s in ended)
    marked = Counter(s.marked_entries for s in ended)
    locked = [s for s in ended if s.exam.key in timeline.locked]
    scores = Counter(s.scores for s in locked)
    posts = sum(len(s.score_posts) for s in seen)
    grades = sum(s.scores for s in seen)
    completed_hooks = Counter(s.hooks["exam.completed"] for s in ended)
    locked_hooks = Counter(s.hooks["marks.locked"] for s in locked)
    raw = sum(sum(s.raw_hooks.values()) for s in seen)
    distinct = sum(sum(s.hooks.values()) for s in seen)
    out.lines += [
        f"marks per completed exam: {per(marks)}; 'marked' audit entries: {per(marked)}",
        f"marks locked through the API: {len(locked)} of {len(ended)} completed",
        f"grades received by the LMS per locked exam: {per(scores)} ({posts} posts received "
        f"for {grades} grades: one sent again is the same score and counts once)",
        f"webhooks per exam: exam.completed {per(completed_hooks)}, marks.locked "
        f"{per(locked_hooks)}; {raw} requests received for {distinct} deliveries (one sent "
        f"again has the same webhook-id: the receiver counts it once)",
    ]
    out.figures.update(locked=len(locked), redelivered=raw - distinct, grades_resent=posts - grades)
    for s in ended:
        expect(out, s, "marks", s.marks, 1)
        expect(out, s, "'marked' audit entries", s.marked_entries, 1)
        expect(out, s, "exam.completed deliveries", s.hooks["exam.completed"], 1)
        if s.exam.key not in timeline.locked:
            out.failures.append(f"exam {s.exam.key}: completed but its marks were never locked")
            continue
        if s.scores != 1:
            posts_seen = [
                {k: p.get(k) for k in ("timestamp", "gradingProgress", "scoreGiven", "context")}
                for p in s.score_posts
            ]
            out.failures.append(
                f"exam {s.exam.key}: {s.scores} grades at the LMS, expected 1: {posts_seen}; "
                f"attempts recorded: {grade_attempts(s.exam.session_id)}"
            )
        expect(out, s, "marks.locked deliveries", s.hooks["marks.locked"], 1)


def grade_attempts(session_id: Any) -> list[tuple[Any, ...]]:
    """The tool's record of its grade posts for a session (``lti.models.GradePassback``)."""
    from lti.models import GradePassback

    rows = GradePassback.objects.filter(session_id=session_id).order_by("id")
    return list(rows.values_list("link_id", "cycle", "kind", "attempt", "status", "http_status"))


def per(counts: Counter[int]) -> str:
    """``{1: 49, 0: 1}`` as ``1 x49, 0 x1``."""
    return ", ".join(f"{value} x{n}" for value, n in sorted(counts.items(), reverse=True)) or "-"


def expect(out: Report, seen: Seen, what: str, got: int, want: int) -> None:
    if got != want:
        out.failures.append(
            f"exam {seen.exam.key} ({seen.user}): {got} {what}, expected {want}; "
            f"last events {seen.tail()}"
        )


def integrity_lines(out: Report, seen: list[Seen]) -> None:
    """Duplicated events and chain verification."""
    duplicated = 0
    for s in seen:
        problems = duplicates(s)
        duplicated += len(problems)
        out.failures += [f"exam {s.exam.key}: {p}" for p in problems]
        if s.chain:
            out.failures.append(f"exam {s.exam.key}: chain does not verify: {s.chain[:3]}")
    verified = sum(1 for s in seen if not s.chain)
    out.figures.update(duplicated=duplicated, verified=verified)
    late = sum(late_answers(s) for s in seen)
    out.lines.append(
        f"duplicated events: {duplicated}; chains verified {verified} of {len(seen)}; answers "
        f"sent as the exam ended, not processed: {late}"
    )


def duplicates(seen: Seen) -> list[str]:
    """What in the session's log is duplicated or out of order."""
    problems = []
    seqs = [e["seq"] for e in seen.events]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"seqs not gap-free: {seqs[:5]}...{seqs[-5:]}")
    ids = Counter(e["eventId"] for e in seen.events)
    problems += [f"event id {i} stored {n} times" for i, n in ids.items() if n > 1]
    if len(seen.of("exam_completed")) > 1:
        problems.append(f"{len(seen.of('exam_completed'))} exam_completed events")
    said = [e for e in seen.of("transcript_final") if e["payload"].get("speaker") == "candidate"]
    done = [i for i in seen.inputs if i["processed_at"] is not None]
    last = max((i["received_at"] for i in done), default=None)
    lost = [
        i for i in seen.inputs if i["processed_at"] is None and last and i["received_at"] < last
    ]
    if len(said) > len(done) or len(said) < len(done) - late_answers(seen) or lost:
        problems.append(
            f"{len(said)} candidate transcripts for {len(done)} answers processed "
            f"({late_answers(seen)} as the exam ended), {len(lost)} never processed though later "
            f"ones were; inbox: {inbox_lines(seen)}; last events {seen.tail()}"
        )
    return problems


def late_answers(seen: Seen) -> int:
    """Answers sent as the exam ended: processed only after its last question was left (the
    examiner was already closing on the answer before), or never processed and later than
    every processed one. They are not heard, and need not be."""
    done = [i["received_at"] for i in seen.inputs if i["processed_at"] is not None]
    last = max(done, default=None)
    end = seen.ended_at
    return sum(
        1
        for i in seen.inputs
        if (i["processed_at"] is not None and end is not None and i["processed_at"] > end)
        or (i["processed_at"] is None and (last is None or i["received_at"] > last))
    )


def inbox_lines(seen: Seen) -> str:
    """The candidate's answers as stored: id, when received and processed, the text's start."""
    return (
        "; ".join(
            f"{i['input_id'][:8]} received {i['received_at']:%H:%M:%S.%f} processed "
            f"{i['processed_at'] and format(i['processed_at'], '%H:%M:%S.%f')} "
            f"{str(i['payload'].get('text', ''))[:24]!r}"
            for i in sorted(seen.inputs, key=lambda i: i["received_at"])
        )
        + f"; last question left {seen.ended_at and format(seen.ended_at, '%H:%M:%S.%f')}"
    )


def latency_lines(out: Report, exams: list[Exam], timeline: Any) -> None:
    """Answer latency p50/p95 before, during and after the faults."""
    if not timeline.injected:
        return
    first = timeline.began + timeline.injected[0].began
    last = timeline.began + max(d.back for d in timeline.injected) + AFTER_FAULT_SECONDS
    phases: dict[str, list[float]] = {"before": [], "during": [], "after": []}
    for exam in exams:
        for sent, seconds in exam.answers:
            phase = "before" if sent < first else "during" if sent <= last else "after"
            phases[phase].append(seconds)
    out.lines.append(
        "answer latency (sent -> examiner's next turn stored, polled every 0.1 s): "
        + "; ".join(f"{name} {quantiles(values)}" for name, values in phases.items())
    )
    out.figures["latency"] = {k: quantiles(v) for k, v in phases.items()}


def quantiles(values: list[float]) -> str:
    if not values:
        return "n=0"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {statistics.median(ordered):.2f} s p95 {p95:.2f} s (n={len(ordered)})"


def leftovers(out: Report) -> None:
    """Side effects still pending, dead or failed at the end."""
    from sessions.models import OutboxMessage
    from webhooks.models import WebhookDelivery

    waiting = Counter(
        OutboxMessage.objects.exclude(status="delivered").values_list("status", flat=True)
    )
    hooks = Counter(
        WebhookDelivery.objects.exclude(status="delivered").values_list("status", flat=True)
    )
    out.lines.append(
        f"outbox messages not delivered: {dict(waiting) or 0}; "
        f"webhook deliveries not delivered: {dict(hooks) or 0}"
    )
    if waiting or hooks:
        out.failures.append(
            f"side effects left: outbox {dict(waiting)}, webhook deliveries {dict(hooks)}"
        )
