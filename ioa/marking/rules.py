"""The level rules: from a target's ledger entries to one rubric level, with the reasons.

``docs/spec/marking.md`` §3 is the normative text; every rule has an id that appears in the
decision it shaped, so a teacher or an appeals panel can follow each step:

=========  =======================================================================================
MRK-L01    no signal for the target → absent
MRK-L02    ``positive`` → excellent
MRK-L03    ``self_correction`` → satisfactory (corrected understanding, but not unaided)
MRK-L04    ``partial`` → partial
MRK-L05    ``flawed_reasoning`` → partial (right answer, wrong justification)
MRK-L06    ``misconception`` → absent (and the cap MRK-C04)
MRK-L07    ``absent`` → absent
MRK-L08    only process signals: ``process_positive`` → satisfactory (excellent when strong and
           never contradicted), ``process_negative`` → partial; the latest one decides
MRK-L09    process signals next to content signals: ``process_positive`` corroborates;
           an unanswered ``process_negative`` caps at satisfactory
MRK-L10    the node was never reached → absent (flagged)
MRK-A01    the level is the highest level any content signal supports, after its own caps
MRK-C01    confidence: moderate (< strong) caps a signal at satisfactory, weak (< min) at partial;
           a weak *negative* signal caps nothing and is flagged for review
MRK-C02    STT: a signal resting on a turn heard below ``sttMarginal`` caps at satisfactory
           (flagged for review)
MRK-C03    scaffolding: reported intensity ≥ 3 caps at partial, ≥ 2 at satisfactory; without a
           report, ``scaffoldedFollowUps`` evidence-gap follow-ups before the signal count as 2
MRK-C04    an unresolved misconception caps the target at partial
MRK-C05    a misconception later resolved (a positive or self-correction after it) caps at
           satisfactory
MRK-N01    hesitations never change a level (cited as context only)
=========  =======================================================================================

Pure: the same log and configuration always give the same decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ioa.marking.config import RuleParameters, TargetScheme
from ioa.marking.levels import Level
from ioa.marking.log import Misconception, SessionLog, Signal

CONTENT_LEVEL: Final = {
    "positive": (Level.EXCELLENT, "MRK-L02"),
    "self_correction": (Level.SATISFACTORY, "MRK-L03"),
    "partial": (Level.PARTIAL, "MRK-L04"),
    "flawed_reasoning": (Level.PARTIAL, "MRK-L05"),
    "misconception": (Level.ABSENT, "MRK-L06"),
    "absent": (Level.ABSENT, "MRK-L07"),
}
PROCESS_KINDS: Final = frozenset({"process_positive", "process_negative"})
COVERING_KINDS: Final = frozenset({"positive", "self_correction"})
KIND_PHRASES: Final = {
    "positive": "positive evidence",
    "self_correction": "a self-correction",
    "partial": "partial evidence",
    "flawed_reasoning": "flawed reasoning",
    "misconception": "a misconception",
    "absent": "no evidence",
    "process_positive": "a sound reasoning process",
    "process_negative": "a weak reasoning process",
}

REVIEW_LOW_STT: Final = "low_stt_evidence"
REVIEW_WEAK_NEGATIVE: Final = "weak_negative_signal"


@dataclass(frozen=True, slots=True)
class RuleHit:
    """One rule that shaped a decision, with what it did in words."""

    rule_id: str
    text: str


@dataclass(frozen=True, slots=True)
class SignalUse:
    """How one ledger entry was used."""

    signal_id: str
    kind: str
    confidence: float
    stt_min: float
    scaffolding: int | None
    turn_ids: tuple[str, ...]
    seq: int
    level: Level | None
    """The level this signal supports after its own caps (None: it only caps or corroborates)."""
    role: str
    """``decides`` (gave the level), ``supports`` (a lower level), ``caps``, ``corroborates``,
    ``not_applied`` (a weak negative), ``context``."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LevelDecision:
    """The level of one target and everything it rests on."""

    level: Level
    rules: tuple[RuleHit, ...]
    signals: tuple[SignalUse, ...]
    turn_ids: tuple[str, ...]
    misconception_ids: tuple[str, ...]
    hesitation_turn_ids: tuple[str, ...]
    review: tuple[str, ...]
    """Review reasons raised by the rules (``low_stt_evidence``, ``weak_negative_signal``)."""
    rationale: str


def _strength(confidence: float, rules: RuleParameters) -> str:
    if confidence >= rules.strong_confidence:
        return "strong"
    if confidence >= rules.min_confidence:
        return "moderate"
    return "weak"


def _scaffolding_before(log: SessionLog, signal: Signal) -> int:
    return sum(
        1
        for f in log.follow_ups
        if f.node_id == signal.node_id and f.reason == "evidence_gap" and f.seq < signal.first_seq
    )


def _capped(
    signal: Signal, base: Level, rules: RuleParameters, log: SessionLog
) -> tuple[Level, list[RuleHit], list[str], bool]:
    """The level a level-raising signal supports after MRK-C01..C03, the caps' hits, notes,
    and whether the STT cap fired."""
    level = base
    hits: list[RuleHit] = []
    notes: list[str] = []
    low_stt = False
    if base <= Level.PARTIAL:
        return level, hits, notes, low_stt
    strength = _strength(signal.confidence, rules)
    if strength != "strong":
        cap = Level.SATISFACTORY if strength == "moderate" else Level.PARTIAL
        level = min(level, cap)
        hits.append(
            RuleHit(
                "MRK-C01",
                f"{signal.signal_id} has {strength} confidence ({signal.confidence:.2f}): "
                f"at most {cap.label}",
            )
        )
        notes.append(f"{strength} confidence")
    if signal.stt_min < rules.stt_marginal:
        low_stt = True
        level = min(level, Level.SATISFACTORY)
        hits.append(
            RuleHit(
                "MRK-C02",
                f"{signal.signal_id} rests on speech heard with STT confidence "
                f"{signal.stt_min:.2f} (< {rules.stt_marginal}): at most satisfactory",
            )
        )
        notes.append(f"STT confidence {signal.stt_min:.2f}")
    intensity = signal.scaffolding
    detail = f"reported scaffolding intensity {intensity}"
    if intensity is None:
        prompts = _scaffolding_before(log, signal)
        if prompts >= rules.scaffolded_follow_ups:
            intensity = rules.scaffolding_satisfactory
            detail = (
                f"{prompts} evidence-gap follow-ups before it (counted as scaffolding "
                f"intensity {intensity})"
            )
    if intensity is not None:
        scaffold_cap: Level | None = None
        if intensity >= rules.scaffolding_partial:
            scaffold_cap = Level.PARTIAL
        elif intensity >= rules.scaffolding_satisfactory:
            scaffold_cap = Level.SATISFACTORY
        if scaffold_cap is not None and scaffold_cap < base:
            level = min(level, scaffold_cap)
            hits.append(
                RuleHit(
                    "MRK-C03",
                    f"{signal.signal_id} was reached with {detail}: at most {scaffold_cap.label}",
                )
            )
            notes.append(f"scaffolding {intensity}")
    return level, hits, notes, low_stt


def _signal_phrase(signal: Signal) -> str:
    phrase = KIND_PHRASES.get(signal.kind, signal.kind)
    quote = f' "{signal.excerpt}"' if signal.excerpt else ""
    return f"{phrase}{quote} ({signal.signal_id}, confidence {signal.confidence:.2f})"


def _misconceptions_for(target: TargetScheme, log: SessionLog) -> list[Misconception]:
    return [
        m
        for m in log.misconceptions
        if m.node_id == target.node_id and target.target_id in m.target_ids
    ]


def _order(log: SessionLog, turn_ids: Sequence[str]) -> tuple[str, ...]:
    wanted = set(turn_ids)
    ordered = [t for t in log.turn_order if t in wanted]
    ordered += sorted(wanted - set(ordered))
    return tuple(ordered)


@dataclass
class _Deciding:
    """One target's decision while the rules run: what each rule found for the next ones."""

    target: TargetScheme
    log: SessionLog
    rules: RuleParameters
    content: list[Signal]
    process: list[Signal]
    level: Level | None = None
    hits: list[RuleHit] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)
    misconception_ids: list[str] = field(default_factory=list)
    uses: dict[str, SignalUse] = field(default_factory=dict)

    def use(self, signal: Signal, level: Level | None, role: str, notes: Sequence[str]) -> None:
        """Record how ``signal`` was used and cite its turns."""
        self.uses[signal.signal_id] = _use(signal, level, role, notes)
        self.turn_ids.extend(signal.turn_ids)


def _target_signals(target: TargetScheme, log: SessionLog) -> list[Signal]:
    return sorted(
        (
            s
            for s in log.signals.values()
            if s.node_id == target.node_id and s.target_id == target.target_id
        ),
        key=lambda s: (s.first_seq, s.signal_id),
    )


def decide_level(target: TargetScheme, log: SessionLog, rules: RuleParameters) -> LevelDecision:
    """Decide the level of ``target`` from the session's ledger entries (see module docs):
    MRK-L10 and MRK-L01 decide alone; otherwise every rule of :data:`LEVEL_RULES` runs in
    order on the same decision."""
    signals = _target_signals(target, log)
    hesitations = tuple(h.turn_id for h in log.hesitations if h.node_id == target.node_id)
    if not log.visited(target.node_id):
        hit = RuleHit("MRK-L10", "the candidate never reached this question: absent")
        return LevelDecision(
            Level.ABSENT, (hit,), (), (), (), (), ("not_reached",), _rationale(Level.ABSENT, [hit])
        )
    if not signals and not _misconceptions_for(target, log):
        hits = [RuleHit("MRK-L01", "no evidence was recorded for this target: absent")]
        if hesitations:
            hits.append(_hesitation_hit(hesitations))
        return LevelDecision(
            Level.ABSENT, tuple(hits), (), (), (), hesitations, (), _rationale(Level.ABSENT, hits)
        )
    deciding = _Deciding(
        target=target,
        log=log,
        rules=rules,
        content=[s for s in signals if s.kind in CONTENT_LEVEL],
        process=[s for s in signals if s.kind in PROCESS_KINDS],
    )
    for rule in LEVEL_RULES:
        rule(deciding)
    if hesitations:
        deciding.hits.append(_hesitation_hit(hesitations))
    level = deciding.level if deciding.level is not None else Level.ABSENT
    return LevelDecision(
        level=level,
        rules=tuple(deciding.hits),
        signals=tuple(sorted(deciding.uses.values(), key=lambda u: (u.seq, u.signal_id))),
        turn_ids=_order(log, deciding.turn_ids),
        misconception_ids=tuple(deciding.misconception_ids),
        hesitation_turn_ids=hesitations,
        review=tuple(dict.fromkeys(deciding.review)),
        rationale=_rationale(level, deciding.hits),
    )


def _content_signals(d: _Deciding) -> None:
    """MRK-L02..L07 with the caps MRK-C01..C03, MRK-A01: the highest level any content signal
    supports after its own caps."""
    best: tuple[Level, Signal, list[RuleHit]] | None = None
    supports: list[tuple[Signal, Level, list[str]]] = []
    for signal in d.content:
        base, rule = CONTENT_LEVEL[signal.kind]
        caps: list[RuleHit]
        notes: list[str]
        if signal.kind == "misconception":
            level, caps, notes, low = base, [], [], False
        else:
            level, caps, notes, low = _capped(signal, base, d.rules, d.log)
        if low:
            d.review.append(REVIEW_LOW_STT)
        signal_hits = [RuleHit(rule, f"{_signal_phrase(signal)} supports {base.label}"), *caps]
        supports.append((signal, level, notes))
        if best is None or level > best[0]:
            best = (level, signal, signal_hits)
    for signal, level, notes in supports:
        if signal.kind != "misconception":
            d.use(signal, level, "decides" if best and signal is best[1] else "supports", notes)
    if best is None:
        return
    d.level = best[0]
    d.hits.extend(best[2])
    if len(d.content) > 1:
        d.hits.append(
            RuleHit(
                "MRK-A01",
                f"the highest level supported by the {len(d.content)} content signals is "
                f"{best[0].label}",
            )
        )


def _process_signals(d: _Deciding) -> None:
    """MRK-L08 when no content signal set a level, else MRK-L09."""
    if not d.process:
        return
    if d.level is None:
        _only_process_signals(d)
    else:
        for signal in d.process:
            _process_beside_content(d, signal)


def _only_process_signals(d: _Deciding) -> None:
    """MRK-L08: the latest process signal decides (excellent only when strong, never
    contradicted and uncapped)."""
    latest = max(d.process, key=lambda s: (s.last_seq, s.signal_id))
    if latest.kind == "process_positive":
        negatives = [s for s in d.process if s.kind == "process_negative"]
        strong = _strength(latest.confidence, d.rules) == "strong"
        level = Level.EXCELLENT if strong and not negatives else Level.SATISFACTORY
        text = f"only process signals; the latest is {_signal_phrase(latest)}: {level.label}"
        d.hits.append(RuleHit("MRK-L08", text))
        if level is Level.EXCELLENT:
            level, caps, _notes, low = _capped(latest, Level.EXCELLENT, d.rules, d.log)
            if low:
                d.review.append(REVIEW_LOW_STT)
            d.hits.extend(caps)
        d.level = level
    else:
        d.level = Level.PARTIAL
        d.hits.append(
            RuleHit(
                "MRK-L08", f"only process signals; the latest is {_signal_phrase(latest)}: partial"
            )
        )
    for signal in d.process:
        d.use(signal, None, "decides" if signal is latest else "context", ())


def _process_beside_content(d: _Deciding, signal: Signal) -> None:
    """MRK-L09: a sound process corroborates; a weak-process signal caps at satisfactory
    unless it is weak itself (MRK-C01, for review) or answered by a later sound process."""
    if signal.kind == "process_positive":
        d.use(signal, None, "corroborates", ())
        return
    answered = any(s.kind == "process_positive" and s.last_seq > signal.last_seq for s in d.process)
    phrase = _signal_phrase(signal)
    if _strength(signal.confidence, d.rules) == "weak":
        d.review.append(REVIEW_WEAK_NEGATIVE)
        d.use(signal, None, "not_applied", ("weak confidence",))
        d.hits.append(RuleHit("MRK-C01", f"{phrase} is too weak to lower the level (for review)"))
    elif answered:
        d.use(signal, None, "context", ("answered later",))
        d.hits.append(
            RuleHit("MRK-L09", f"{phrase} was followed by a sound reasoning process: no cap")
        )
    else:
        d.use(signal, None, "caps", ())
        if d.level is not None and d.level > Level.SATISFACTORY:
            d.level = Level.SATISFACTORY
            d.hits.append(RuleHit("MRK-L09", f"{phrase} caps the target at satisfactory"))
        else:
            d.hits.append(RuleHit("MRK-L09", f"{phrase} noted (no further effect)"))


_Recorded = tuple[int, str, float, tuple[str, ...], Signal | None]
"""(seq, id, confidence, turn ids, its signal or None) of one misconception."""


def _misconceptions(d: _Deciding) -> None:
    """MRK-L06 (only a misconception: absent), then MRK-C04/C05 for each misconception in
    order (a signal and its ``misconception_detected`` count once)."""
    items: list[_Recorded] = [
        (s.first_seq, s.signal_id, s.confidence, s.turn_ids, s)
        for s in d.content
        if s.kind == "misconception"
    ]
    cited = {s.signal_id for s in d.content if s.kind == "misconception"}
    for m in _misconceptions_for(d.target, d.log):
        if m.signal_id in cited:
            d.misconception_ids.append(m.misconception_id)  # the same one as its signal
            d.turn_ids.extend(m.turn_ids)
        else:
            items.append((m.seq, m.misconception_id, m.confidence, m.turn_ids, None))
    if d.level is None:
        d.level = Level.ABSENT
        d.hits.append(RuleHit("MRK-L06", "only a misconception was recorded: absent"))
    for item in sorted(items, key=lambda i: (i[0], i[1])):
        _misconception_cap(d, item)


def _misconception_cap(d: _Deciding, item: _Recorded) -> None:
    """MRK-C04 (unresolved: at most partial) or MRK-C05 (resolved later by a covering signal:
    at most satisfactory); a weak one caps nothing (MRK-C01, for review)."""
    seq, ident, confidence, turns, found = item
    d.turn_ids.extend(turns)
    if found is None:
        d.misconception_ids.append(ident)
    resolved = any(s.last_seq > seq for s in d.content if s.kind in COVERING_KINDS)
    if _strength(confidence, d.rules) == "weak":
        d.review.append(REVIEW_WEAK_NEGATIVE)
        if found is not None:
            d.uses[ident] = _use(found, Level.ABSENT, "not_applied", ("weak confidence",))
        d.hits.append(
            RuleHit(
                "MRK-C01",
                f"misconception {ident} (confidence {confidence:.2f}) is too weak to cap the "
                "level (for review)",
            )
        )
        return
    cap = Level.SATISFACTORY if resolved else Level.PARTIAL
    rule = "MRK-C05" if resolved else "MRK-C04"
    if found is not None:
        d.uses[ident] = _use(found, Level.ABSENT, "caps", ("resolved",) if resolved else ())
    if d.level is not None and d.level > cap:
        d.level = cap
        what = "later resolved" if resolved else "never resolved"
        d.hits.append(RuleHit(rule, f"misconception {ident} was {what}: at most {cap.label}"))
    elif not any(h.rule_id in {"MRK-C04", "MRK-C05"} and ident in h.text for h in d.hits):
        what = "later resolved" if resolved else "unresolved"
        d.hits.append(RuleHit(rule, f"misconception {ident} ({what}) noted"))


def _linked_self_corrections(d: _Deciding) -> None:
    """Self-corrections sharing a turn with the cited evidence are cited too (context only)."""
    own_turns = set(d.turn_ids)
    for correction in d.log.self_corrections:
        if correction.node_id == d.target.node_id and own_turns & set(correction.turn_ids):
            d.turn_ids.extend(correction.turn_ids)


LEVEL_RULES: Final[tuple[Callable[[_Deciding], None], ...]] = (
    _content_signals,
    _process_signals,
    _misconceptions,
    _linked_self_corrections,
)
"""The rules that shape a decision once the target has evidence, in the order they apply."""


def _use(signal: Signal, level: Level | None, role: str, notes: Sequence[str]) -> SignalUse:
    return SignalUse(
        signal_id=signal.signal_id,
        kind=signal.kind,
        confidence=signal.confidence,
        stt_min=signal.stt_min,
        scaffolding=signal.scaffolding,
        turn_ids=signal.turn_ids,
        seq=signal.first_seq,
        level=level,
        role=role,
        notes=tuple(notes),
    )


def _hesitation_hit(turns: tuple[str, ...]) -> RuleHit:
    return RuleHit(
        "MRK-N01",
        f"{len(turns)} hesitation(s) at this question; hesitations never change a level",
    )


def _rationale(level: Level, hits: Sequence[RuleHit]) -> str:
    reasons = [h.text for h in hits if h.rule_id != "MRK-N01"]
    return f"{level.title}: " + "; ".join(reasons) + "." if reasons else f"{level.title}."
