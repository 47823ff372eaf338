"""Factories for sittings, sessions and events."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import factory

from ioa.events import EventEnvelope, EventFactory, Uuid7Generator
from ioa.events import payloads as p
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory


class PublishedVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PublishedVersion

    draft = factory.SubFactory(DraftPackageFactory)
    number = factory.Sequence(lambda n: n + 1)
    package_id = "00000000-0000-4000-8000-000000000001"
    title = "CS201 oral"
    ir_version = "ioa-orm/0.2"
    adapter_version = "test"
    canonical_json = "{}"
    checksum = "sha256:" + "0" * 64
    compiled_json = "{}"
    validation_report = factory.LazyFunction(dict)
    published_by = factory.SelfAttribute("draft.owner")


class SittingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Sitting
        skip_postgeneration_save = True

    version = factory.SubFactory(PublishedVersionFactory)
    title = factory.Sequence(lambda n: f"Sitting {n}")
    created_by = factory.SubFactory(AuthorFactory)

    @factory.post_generation
    def proctors(obj: Sitting, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create and extracted:
            obj.proctors.set(extracted)


class ExamSessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ExamSession

    sitting = factory.SubFactory(SittingFactory)
    candidate = factory.SubFactory(CandidateFactory)


def fixed_clock(start: datetime | None = None, step_ms: int = 10) -> Iterator[datetime]:
    begin = start or datetime(2026, 5, 6, 2, 0, tzinfo=UTC)
    return (begin + timedelta(milliseconds=step_ms * i) for i in itertools.count())


def event_factory(session: ExamSession | str, **kwargs: Any) -> EventFactory:
    """An EventFactory for ``session`` with the system clock and fresh UUIDv7 ids."""
    session_id = str(session.pk if isinstance(session, ExamSession) else session)
    return EventFactory(session_id=session_id, ids=Uuid7Generator(), **kwargs)


def exam_started(session: ExamSession) -> list[EventEnvelope]:
    """The three state changes that take ``session`` from scheduled to in progress."""
    make = event_factory(session)
    return [
        make(p.ExamStateChanged(fromState="scheduled", toState="scaffolding")),
        make(p.ExamStateChanged(fromState="scaffolding", toState="ready")),
        make(p.ExamStateChanged(fromState="ready", toState="in_progress")),
    ]


def node_entered(node_id: str = "q1", **overrides: Any) -> p.NodeEntered:
    fields: dict[str, Any] = {
        "nodeId": node_id,
        "nodeKind": "question",
        "rubricItemIds": ["rubric-1"],
        "maxFollowUps": 2,
        "timeBudgetSec": 120,
        "timeBudgetMs": 120_000,
    }
    return p.NodeEntered(**{**fields, **overrides})


def transcript_final(node_id: str = "q1", turn: int = 1, **overrides: Any) -> p.TranscriptFinal:
    fields: dict[str, Any] = {
        "turnId": f"turn-{turn}",
        "speaker": "candidate",
        "text": f"Answer number {turn}: relax every edge.",
        "startTimeMs": turn * 1000,
        "endTimeMs": turn * 1000 + 800,
        "nodeId": node_id,
        "confidence": 0.93,
        "language": "en",
    }
    return p.TranscriptFinal(**{**fields, **overrides})


def evidence_signal(
    node_id: str = "q1", signal: str = "sig-1", **overrides: Any
) -> p.EvidenceSignal:
    fields: dict[str, Any] = {
        "signalId": signal,
        "nodeId": node_id,
        "turnIds": ["turn-1"],
        "targetIds": ["tgt-1"],
        "evidenceDimension": "knowledge_understanding",
        "signalKind": "positive",
        "description": "Explained greedy selection correctly.",
        "confidence": 0.88,
        "sttConfidenceSummary": {"min": 0.9, "max": 0.95, "mean": 0.92, "turnCount": 1},
        "llmProposal": False,
    }
    return p.EvidenceSignal(**{**fields, **overrides})


def guardrail() -> p.GuardrailTriggered:
    return p.GuardrailTriggered(
        guardrailId="guard-1",
        guardrailType="max_follow_ups",
        severity="block",
        description="Follow-up limit reached.",
        actionTaken="forced_transition",
        contextNodeId="q1",
    )


def exam_completed() -> p.ExamCompleted:
    return p.ExamCompleted(
        reason="all_nodes_visited",
        totalTurns=4,
        totalElapsedMs=900_000,
        totalDurationSec=900,
        nodesVisited=["q1"],
        totalEvidenceSignals=1,
        totalFollowUps=0,
        guardrailTriggerCount=0,
    )


def transcripts(session: ExamSession, count: int, node_id: str = "q1") -> list[EventEnvelope]:
    make = event_factory(session)
    return [make(transcript_final(node_id, turn=i + 1)) for i in range(count)]
