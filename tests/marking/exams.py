"""Realistic completed sessions for marking tests, the browser test and the benchmark.

:func:`drive` runs the real runtime controller (``ioa.runtime``) through the simulator's bot
stand-in (``sessions.simulation.BotStandIn``: utterances spoken at 400 ms a word, every timer
fired at its deadline) with a scripted candidate: at each turn it looks at the node the
controller is in and gives that node's next answer from a *profile* (what the candidate says,
how clearly the STT heard it, and the ``report_observation`` the examiner LLM would make). The
events are exactly what a live session stores; :func:`store_session` appends them through the
event store (so ``exam_completed`` enqueues marking, as in production).

Profiles cover both members of the cs201 scenario pool, so any session id works.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ioa.events import EventEnvelope
from ioa.runtime import (
    BotReady,
    CandidateReady,
    ManualClock,
    Observation,
    RuntimeController,
    TranscriptSegment,
    to_ms,
)
from ioa.schema import load_package
from sessions.simulation import DEFAULT_START, BotStandIn

Step = dict[str, Any]

GREEDY = (
    "It keeps a tentative distance for every vertex, repeatedly settles the unvisited vertex "
    "whose tentative distance is smallest, and then relaxes each outgoing edge of it."
)
COMPLEXITY = (
    "With a binary heap as the priority queue the running time is O((V+E) log V); with a plain "
    "array it becomes O(V^2)."
)
NEGATIVE = (
    "A negative edge could invalidate a distance that was already settled, so for negative "
    "weights I would use Bellman-Ford instead."
)


def sig(target: str, kind: str, excerpt: str, confidence: float = 0.9, **extra: Any) -> dict:
    return {
        "signalType": target,
        "signalKind": kind,
        "excerpt": excerpt,
        "confidence": confidence,
        **extra,
    }


def step(
    text: str,
    *signals: dict,
    spoken: str = "Thank you.",
    follow_up: bool = False,
    done: bool = False,
    stt: float = 0.93,
    after: float = 25.0,
    **args: Any,
) -> Step:
    return {
        "text": text,
        "stt": stt,
        "after": after,
        "args": {
            "signals": list(signals),
            "answerQuality": "substantive",
            "needsFollowUp": follow_up,
            "evidenceSufficient": done,
            "anxietyDetected": False,
            "spokenText": spoken,
            **args,
        },
    }


def _scenarios(model: str, choose: str, *, strong: bool) -> dict[str, list[Step]]:
    out: dict[str, list[Step]] = {}
    for node, thing, suffix in (
        ("scn-delivery-routes", "the depot and every shop", ""),
        ("scn-network-latency", "every office", "-net"),
    ):
        edge = "road" if suffix == "" else "network link"
        weight = "travel time" if suffix == "" else "latency"
        first = (
            f"I would model {thing} as vertices and each {edge} as a weighted edge whose "
            f"weight is its {weight}."
        )
        second = (
            f"The {weight}s are never negative, so a single-source shortest-path algorithm such as "
            "Dijkstra from the start gives the best path to every destination."
            if strong
            else f"I think I would just try every path and keep the shortest {weight}."
        )
        out[node] = [
            step(
                first,
                sig(f"tgt-model-graph{suffix}", model, f"each {edge} as a weighted edge"),
                spoken="Which algorithm would you use, and why?",
                follow_up=True,
            ),
            step(
                second,
                sig(
                    f"tgt-choose-algorithm{suffix}",
                    choose,
                    second.split(",")[0] if strong else "try every path",
                    0.85,
                ),
                spoken="Thank you.",
                done=True,
            ),
        ]
    return out


def strong_profile() -> dict[str, list[Step]]:
    """Everything right, unaided, clearly heard."""
    return {
        "warmup": [step("I enjoyed the graph algorithms part of the course most.", done=True)],
        "q-dijkstra": [
            step(
                GREEDY,
                sig("tgt-greedy-choice", "positive", "settles the unvisited vertex", 0.92),
                spoken="What is its running time with a binary heap?",
                follow_up=True,
            ),
            step(
                COMPLEXITY,
                sig("tgt-complexity", "positive", "running time is O((V+E) log V)", 0.88),
                spoken="And what happens when some edge weights are negative?",
                follow_up=True,
            ),
            step(
                NEGATIVE,
                sig("tgt-negative-weights", "positive", "would use Bellman-Ford", 0.85),
                sig("tgt-greedy-choice", "process_positive", "invalidate a distance", 0.8),
                spoken="Thank you, that is clear.",
                done=True,
            ),
        ],
        **_scenarios("positive", "positive", strong=True),
        "wrapup": [step("No, I have nothing to add. Thank you.", done=True)],
    }


def mixed_profile() -> dict[str, list[Step]]:
    """A realistic middling candidate: a misconception corrected, scaffolding, an answer heard
    unclearly, a flawed justification and a missing target."""
    return {
        "warmup": [step("I liked the part about graphs.", done=True)],
        "q-dijkstra": [
            step(
                "It always takes the vertex with the largest distance first and explores from it.",
                sig("tgt-greedy-choice", "misconception", "the largest distance first", 0.8),
                spoken="Which vertex does it settle next?",
                follow_up=True,
                misconceptions=[
                    {
                        "concept": "selection step",
                        "misconception": "picks the largest tentative distance",
                        "correction": "picks the smallest tentative distance",
                        "confidence": 0.8,
                    }
                ],
            ),
            step(
                "Sorry, I mean it settles the unvisited vertex with the smallest tentative "
                "distance and relaxes its outgoing edges.",
                sig(
                    "tgt-greedy-choice",
                    "self_correction",
                    "the smallest tentative distance",
                    0.85,
                ),
                spoken="How fast is it?",
                follow_up=True,
            ),
            step(
                "With a heap it is about log V for each edge, so roughly E log V.",
                sig(
                    "tgt-complexity",
                    "positive",
                    "roughly E log V",
                    0.75,
                    scaffoldingIntensity=2,
                    scaffoldingEffective=True,
                ),
                spoken="Thank you.",
                done=True,
                stt=0.56,
            ),
        ],
        **_scenarios("positive", "flawed_reasoning", strong=False),
        "wrapup": [step("Nothing more, thank you.", done=True)],
    }


def weak_profile() -> dict[str, list[Step]]:
    """Little evidence: partial answers, low confidence, nothing on two targets."""
    return {
        "warmup": [step("Probably the sorting algorithms.", done=True)],
        "q-dijkstra": [
            step(
                "It picks the nearest vertex I think.",
                sig("tgt-greedy-choice", "partial", "picks the nearest vertex", 0.6),
                spoken="Could you say more about what happens next?",
                follow_up=True,
            ),
            step(
                "I am not sure, maybe it visits all of them.",
                sig("tgt-complexity", "absent", "maybe it visits all of them", 0.7),
                spoken="Thank you.",
                done=True,
            ),
        ],
        **_scenarios("partial", "partial", strong=False),
        "wrapup": [step("No.", done=True)],
    }


PROFILES = {"strong": strong_profile, "mixed": mixed_profile, "weak": weak_profile}


def drive(
    document: Mapping[str, Any],
    session_id: str,
    profile: Mapping[str, Sequence[Step]],
    *,
    start: datetime = DEFAULT_START,
    max_turns: int = 200,
) -> list[EventEnvelope]:
    """Run a whole exam with the scripted candidate; returns every event in order."""
    package = load_package(dict(document))
    events: list[EventEnvelope] = []
    opened = to_ms(start)
    clock = ManualClock(opened)
    controller = RuntimeController(package, session_id=session_id, clock=clock)
    bot = BotStandIn(controller, clock, lambda decision: events.extend(decision.events))
    remaining = {node: list(steps) for node, steps in profile.items()}
    bot.handle(BotReady())
    bot.advance_to(clock.now_ms() + 2000)
    bot.handle(CandidateReady())
    now = clock.now_ms()
    for _ in range(max_turns):
        if controller.completed:
            break
        node = controller.state.current_node_id or ""
        queue = remaining.get(node) or []
        current = (
            queue.pop(0)
            if queue
            else step("That is all I can say about it.", spoken="Thank you.", done=True)
        )
        now += round(float(current["after"]) * 1000)
        bot.advance_to(now)
        bot.cut_short()
        if controller.completed:
            break
        bot.handle(
            TranscriptSegment(
                speaker="candidate",
                text=current["text"],
                confidence=float(current["stt"]),
                start_ms=None,
                end_ms=None,
                language="en",
            )
        )
        now += 1000
        bot.advance_to(now)
        bot.handle(Observation(copy.deepcopy(current["args"])))
        now = clock.now_ms()
    bot.drain()
    return events


def store_session(session: Any, events: Sequence[EventEnvelope]) -> None:
    """Append ``events`` (made for ``session``'s id) through the event store, in batches as the
    bot does."""
    from sessions.event_store import append_events

    batch: list[EventEnvelope] = []
    for event in events:
        batch.append(event)
        if len(batch) >= 20:
            append_events(session=session, events=batch)
            batch = []
    if batch:
        append_events(session=session, events=batch)


def completed_session(
    *, version: Any, candidate: Any, profile: str = "mixed", sitting: Any = None
) -> Any:
    """A stored, completed session of ``version`` for ``candidate`` (marking runs on commit)."""
    import json

    from sessions.models import ExamSession, Sitting

    if sitting is None:
        sitting, _ = Sitting.objects.get_or_create(
            version=version, title="Marking tests", defaults={"created_by": version.published_by}
        )
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    document = json.loads(version.canonical_json)
    events = drive(document, str(session.pk), PROFILES[profile]())
    store_session(session, events)
    return session


def complete(session: Any, profile: str = "mixed") -> Any:
    """Play a scripted exam in an existing ``session`` (e.g. a practice attempt) to its end and
    store it (marking, or a practice attempt's feedback, runs on commit)."""
    import json

    document = json.loads(session.sitting.version.canonical_json)
    store_session(session, drive(document, str(session.pk), PROFILES[profile]()))
    return session


def completed_session_with_report(
    *,
    version: Any,
    candidate: Any,
    category: str,
    reason: str,
    actor: str = "user:1",
    node: str = "q-dijkstra",
    profile: str = "strong",
) -> tuple[Any, EventEnvelope]:
    """A stored, completed session in which a proctor reported an irregularity at ``node``
    (two events after entering it, as the controller records it: ``nodeId`` set), marked on
    commit; returns the session and the report's envelope."""
    import json

    from ioa.events import EventFactory, EventSource
    from ioa.events import payloads as p
    from sessions.models import ExamSession, Sitting

    sitting, _ = Sitting.objects.get_or_create(
        version=version, title="Marking tests", defaults={"created_by": version.published_by}
    )
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    events = drive(json.loads(version.canonical_json), str(session.pk), PROFILES[profile]())
    at = next(
        i
        for i, e in enumerate(events)
        if e.type == "node_entered" and getattr(e.payload, "nodeId", None) == node
    )
    stamp = datetime.fromisoformat(events[at + 2].timestamp.replace("Z", "+00:00"))
    make = EventFactory(session_id=str(session.pk), source=EventSource.SYSTEM, clock=lambda: stamp)
    reported = make(
        p.ProctorActionTaken(
            actor=actor, action="flag_irregularity", category=category, reason=reason, nodeId=node
        )
    )
    store_session(session, [*events[: at + 3], reported, *events[at + 3 :]])
    return session, reported
