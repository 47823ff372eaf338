"""Fixtures for the examiner bot tests: a published example package, an exam session, and a
candidate that drives a running bot through the channel layer and reads the stored log."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from sessions import services
from sessions.bot_channel import send_to_bot
from sessions.models import CandidateMaterial, ExamSession, SessionEvent, Sitting
from tests.factories import CandidateFactory, DraftPackageFactory
from tests.sessions.material_files import docx_bytes
from tests.support.candidate_answers import ANSWERS  # noqa: F401 (re-exported)

TIMEOUT = 60.0
"""Seconds any wait for the bot may take (generous: a loaded machine must not fail a test)."""


def publish_example(name: str = "cs201-graph-algorithms") -> Any:
    """Publish an example package through the real publication gate."""
    from publishing.services import version_publish
    from tests.factories import example_document

    draft = DraftPackageFactory(document=example_document(name))
    return version_publish(draft=draft, user=draft.owner).version


def new_session(version: Any) -> ExamSession:
    sitting = Sitting.objects.create(
        version=version, title="Bot test", created_by=version.published_by
    )
    return ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())


def upload_report(session: ExamSession) -> CandidateMaterial:
    """The candidate's own report (``tests.sessions.material_files.docx_bytes``), uploaded by
    them for ``session`` as before a grounded exam."""
    return services.material_upload(
        session=session,
        kind="report",
        filename="report.docx",
        data=docx_bytes(),
        uploaded_by=session.candidate,
        source="candidate",
    )


@pytest.fixture
def published(db: Any) -> Any:
    return publish_example()


@pytest.fixture
def exam_session(published: Any) -> ExamSession:
    return new_session(published)


@pytest.fixture
def bot_settings(settings: Any) -> Any:
    """Fast, deterministic bot settings for tests."""
    settings.VIVA_BOT_HEARTBEAT_SECONDS = 0.5
    settings.VIVA_BOT_LEASE_SECONDS = 5
    settings.VIVA_BOT_FAULT_RETRY_SECONDS = 0.5
    settings.VIVA_PIPECAT_LOG_LEVEL = "WARNING"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = True
    settings.VIVA_LLM_PROVIDER = "offline"
    settings.VIVA_PRICING = {
        "currency": "USD",
        "llm": {"offline:*": {"input_per_million": 1.0, "output_per_million": 2.0}},
    }
    return settings


def stored(session_id: uuid.UUID | str) -> list[dict[str, Any]]:
    """The session's stored events (seq order) as ``{seq, type, payload, eventId}``."""
    return [
        {
            "seq": r.seq,
            "type": r.type,
            "payload": r.payload,
            "eventId": str(r.event_id),
            "source": r.source,
        }
        for r in SessionEvent.objects.filter(session_id=session_id).order_by("seq")
    ]


@dataclass
class Watcher:
    """Collects the wire form of every event batch the bot stores (``BotOptions.on_stored``)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Event | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, batch: Sequence[Mapping[str, Any]]) -> None:
        self.events.extend(dict(e) for e in batch)
        if self.loop is not None and self.changed is not None:
            self.loop.call_soon_threadsafe(self.changed.set)

    def bind(self) -> Watcher:
        self.loop = asyncio.get_running_loop()
        self.changed = asyncio.Event()
        return self

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    def count(self, type_: str) -> int:
        return len(self.of(type_))

    async def until(
        self, predicate: Callable[[Watcher], bool], timeout: float = TIMEOUT, what: str = ""
    ) -> None:
        assert self.changed is not None
        deadline = time.monotonic() + timeout
        while not predicate(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                types = [e["type"] for e in self.events][-25:]
                raise TimeoutError(f"waited {timeout}s for {what or predicate}; last: {types}")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=min(remaining, 0.5))

    async def until_count(self, type_: str, n: int, timeout: float = TIMEOUT) -> None:
        await self.until(lambda w: w.count(type_) >= n, timeout, f"{n} x {type_}")

    def spoken(self) -> list[str]:
        return [e["payload"]["text"] for e in self.of("examiner_utterance_final")]

    def nodes(self) -> list[str]:
        return [e["payload"]["nodeId"] for e in self.of("node_entered")]


@dataclass
class Candidate:
    """Sends what a candidate's exam room sends, through the channel layer."""

    session_id: uuid.UUID
    watcher: Watcher

    async def ready(self) -> None:
        await send_to_bot(self.session_id, "candidate_ready")

    async def says(self, text: str) -> None:
        await send_to_bot(self.session_id, "candidate_text", text=text)

    async def answer(self, text: str, timeout: float = TIMEOUT) -> None:
        """Say ``text`` and wait until the examiner has finished its next turn (an utterance
        that is not just a bridge, or the end)."""
        before = self.watcher.count("examiner_utterance_final")
        await self.says(text)
        await self.watcher.until(
            lambda w: (
                w.count("exam_completed") > 0
                or any(
                    e["payload"]["purpose"] != "bridge"
                    for e in w.of("examiner_utterance_final")[before:]
                )
            ),
            timeout,
            f"the examiner's answer to {text!r}",
        )
        await asyncio.sleep(0.05)


async def drive(
    candidate: Candidate,
    watcher: Watcher,
    answers: Mapping[str, Sequence[str]],
    *,
    max_turns: int = 40,
) -> list[str]:
    """Run a whole exam: ready, then at each examiner turn the next answer for the node the
    session is at (the last one repeats). Returns what the candidate said."""
    await candidate.ready()
    await watcher.until_count("examiner_utterance_final", 1)
    said: list[str] = []
    used: dict[str, int] = {}
    while not watcher.count("exam_completed"):
        node = watcher.nodes()[-1]
        options = answers[node]
        text = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        said.append(text)
        await candidate.answer(text)
        assert len(said) < max_turns, f"the exam did not end after {max_turns} turns"
    return said


"""A good candidate's answers for the example package, by node."""


@pytest.fixture
def watcher() -> Watcher:
    return Watcher()


def check_log(events: Sequence[Mapping[str, Any]]) -> None:
    """A stored log is gap-free, duplicate-free and in order."""
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    ids = [e["eventId"] for e in events]
    assert len(ids) == len(set(ids))


async def start_exam(
    session_id: uuid.UUID, watcher: Watcher
) -> tuple[asyncio.Task[Any], Candidate]:
    """Run the session's bot inline (its stored events go to ``watcher``), say the candidate is
    ready and wait for the examiner's opening; returns the bot's task and the candidate."""
    from bot.runners import run_bot
    from bot.session_runner import BotOptions

    watcher.bind()
    bot = asyncio.create_task(run_bot(session_id, options=BotOptions(on_stored=watcher)))
    await watcher.until_count("bot_ready", 1)
    candidate = Candidate(session_id, watcher)
    await candidate.ready()
    await watcher.until_count("examiner_utterance_final", 1)
    return bot, candidate
