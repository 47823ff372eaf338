"""What the pipeline's processors report, turned into controller inputs (the ``PipelineCore``).

:class:`PipelineAdapter` is the :class:`~bot.pipeline.PipelineCore` the processors of
``bot.pipeline`` call:

* **Candidate turns.** A typed turn (text mode) is recorded, added to the LLM context and, if the
  exam is in progress and the runtime did not answer it itself, the LLM runs (as soon as the
  transcript is decided, while its events are being stored). A final voice transcript is
  recorded; the user aggregator's turn strategies decide when the LLM runs. Interim transcripts
  become the live caption (``transcript_delta``, never stored).
* **Speech and activity.** Utterance start/end, a barge-in, the candidate typing or speaking:
  each a controller input.
* **The LLM.** It may run only while the exam is in progress at a node that offers the tool
  (:meth:`~PipelineAdapter.llm_allowed`), within the owed turn's request budget
  (``bot.turn_deadline``). A response with neither text nor a tool call is retried once when the
  budget allows, else the turn fails; a text-only response is such a reply (never spoken).
  Every faulty reply of an owed turn (arguments that are not JSON, an unknown function, an empty
  reply, text alone) is stored as it happens (``bot.examiner_faults.record_model_fault``), even
  when the retry then succeeds.
* **Usage.** LLM usage belongs to the node the request was made at.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Protocol

from pipecat.frames.frames import Frame, LLMRunFrame

from bot.activity import Activity
from bot.candidate_inbox import CandidateInbox
from bot.effects import MessageRole
from bot.examiner_faults import record_model_fault
from bot.examiner_inbox import Decisions, log_failure
from bot.examiner_stats import CoreStats
from bot.journal import Journal
from bot.journal_writer import JournalWriter
from bot.rerun_budget import RerunBudget
from bot.spoken_text import Interruption
from bot.turn_deadline import UNUSABLE_GRACE_SECONDS, UNUSABLE_RETRY_NOTE, TurnWatch
from bot.usage import Component, Counter, UsageLedger
from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import (
    CandidateActivity,
    CandidateInterrupted,
    Decision,
    Speak,
    SpeechUnheard,
    TranscriptSegment,
    UtteranceFinished,
    UtterancesDropped,
    UtteranceStarted,
)

logger = logging.getLogger(__name__)


class Frames(Protocol):
    """What the adapter needs of the effect applier (``bot.effects.EffectApplier``)."""

    @property
    def node_has_tool(self) -> bool: ...

    async def push(self, frame: Frame) -> None: ...

    async def append_message(self, role: MessageRole, text: str, *, run_llm: bool) -> None: ...


class PipelineAdapter:
    """See the module docstring."""

    def __init__(
        self,
        *,
        decisions: Decisions,
        frames: Frames,
        writer: JournalWriter,
        turns: TurnWatch,
        reruns: RerunBudget,
        stats: CoreStats,
        usage: UsageLedger,
        inbox: CandidateInbox,
        known_tools: frozenset[str],
        provider_worked: Callable[[str], None] = lambda component: None,
        provider_failed: Callable[[str, str], None] = lambda component, detail: None,
    ) -> None:
        self._decisions = decisions
        self._frames = frames
        self._writer = writer
        self._journal: Journal = writer.journal
        self._session_id: uuid.UUID = writer.session_id
        self._turns = turns
        self._reruns = reruns
        self._stats = stats
        self._usage = usage
        self._inbox = inbox
        self._known_tools = known_tools or frozenset({"report_observation"})
        self._provider_worked = provider_worked
        """Told when a provider is seen working (``FaultWatch.provider_worked``)."""
        self._provider_failed = provider_failed
        """Told when a provider failed without an error (``FaultWatch.provider_failed``)."""
        self._llm_node: str | None = None
        self._unparsed = False
        """The current response had a tool call whose arguments were not JSON."""
        self._interruptions = 0
        """Interruptions that have passed the LLM (:meth:`llm_interrupted`)."""
        self._interruptions_at_request = 0
        """:attr:`_interruptions` when the latest LLM request was made."""

    def llm_allowed(self) -> bool:
        """The LLM runs only while the exam is in progress, at a node that offers the tool."""
        state = self._journal.controller.state
        return (
            state.exam_state is ExamState.IN_PROGRESS
            and not state.completed
            and self._frames.node_has_tool
        )

    async def candidate_turn(
        self,
        text: str,
        confidence: float,
        *,
        input_id: str | None = None,
        sent_at: float | None = None,
    ) -> None:
        """A complete candidate turn (text mode): record it, add it to the context, and run the
        LLM if the exam is in progress and the runtime did not answer the turn itself. When the
        transcript's decision has no effects, the LLM starts as soon as it is decided, while
        its events are being stored (the observation is only handled after they are).
        ``sent_at``: when the server stored the answer (wall-clock seconds), so no timer that
        came due while it waited for this bot fires before it."""
        self._reruns.reset()
        awaiting = self._turns.owed
        await self._frames.append_message("user", text, run_llm=False)
        decided: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def early(decision: Decision) -> None:
            if not decided.done():
                decided.set_result(decision)

        stored = asyncio.ensure_future(
            self._decisions.submit(
                TranscriptSegment(
                    "candidate",
                    text,
                    confidence,
                    awaiting_examiner=awaiting,
                    sent_ms=self._session_ms(sent_at),
                ),
                on_decided=early,
                input_ids=(input_id,) if input_id else (),
            )
        )
        stored.add_done_callback(log_failure)
        await asyncio.wait({decided, stored}, return_when=asyncio.FIRST_COMPLETED)
        self._inbox.delivered(input_id)
        if not decided.done():
            return  # it failed before the controller decided (logged)
        decision = decided.result()
        if decision.effects:
            await asyncio.wait({stored})  # its effects (a context warning...) come first
            if stored.exception() is not None:
                return
        spoke = any(isinstance(e, Speak) for e in decision.effects)
        if decision.status == "recorded" and not spoke and self.llm_allowed():
            self._turns.open()
            await self._frames.push(LLMRunFrame())

    def candidate_transcript(
        self,
        text: str,
        confidence: float,
        *,
        input_id: str | None = None,
        spoken: tuple[float, float] | None = None,
        sent_at: float | None = None,
    ) -> None:
        """A final transcript in voice mode (the turn strategies decide when the LLM runs).
        ``spoken``: when its speech started and ended (wall-clock seconds, by the VAD), so the
        stored times and the hesitation before it are the audio's, not the recogniser's. A
        recognised transcript is the recogniser working: an open fault of it clears at once."""
        if input_id is None:
            self._provider_worked("stt")
        self._reruns.reset()
        start_ms = end_ms = None
        if spoken is not None:
            start_ms, end_ms = self._session_ms(spoken[0]), self._session_ms(spoken[1])
        self._decisions.post(
            TranscriptSegment(
                "candidate",
                text,
                confidence,
                start_ms=start_ms,
                end_ms=end_ms,
                awaiting_examiner=self._turns.owed,
                sent_ms=self._session_ms(sent_at),
            ),
            input_ids=(input_id,) if input_id else (),
        )
        self._inbox.delivered(input_id)

    def candidate_unheard(self, duration_ms: int) -> None:
        """The candidate spoke and the recogniser gave no words (``bot.pipeline.UnheardSpeech``):
        the controller has the examiner say it did not catch that."""
        self._decisions.post(SpeechUnheard(duration_ms))

    def candidate_activity(self, activity: Activity, active: bool, when: float | None) -> None:
        """The candidate started or stopped typing or speaking (``bot.activity``): the
        silence clock follows them. ``when`` (wall-clock seconds) becomes the event's ``atMs``,
        ms since the session opened. Speech also reaches the turn watch: its deadline never
        runs out while the candidate speaks (``bot.turn_deadline``)."""
        if activity == "speaking":
            self._turns.candidate_speaking(active)
        self._decisions.post(CandidateActivity(activity, active, self._session_ms(when)))

    def _session_ms(self, when: float | None) -> int | None:
        """A wall-clock instant (seconds) as ms since the session opened (``None`` if unknown)."""
        opened = self._journal.controller.state.opened_ms
        if when is None or opened is None:
            return None
        return max(0, round(when * 1000) - opened)

    def candidate_partial(self, text: str, stability: float) -> None:
        """A streaming STT's interim transcript: the candidate's live caption, published to the
        candidate and the proctors as ``transcript_delta`` (never stored; the final replaces it)."""
        if self._decisions.closed:
            return
        delta = p.TranscriptDelta(speaker="candidate", text=text[:2000], stability=stability)
        published = asyncio.ensure_future(self._writer.publish([delta]))
        published.add_done_callback(log_failure)

    def utterance_started(self, utterance_id: str, when: float | None = None) -> None:
        """The utterance's first audio played (text: it went out) at ``when`` (wall-clock
        seconds): the event's ``atMs``. The voice is working: an open fault of it clears."""
        self._provider_worked("tts")
        self._decisions.post(UtteranceStarted(utterance_id, at_ms=self._session_ms(when)))

    def utterance_unplayed(self, utterance_id: str) -> None:
        """The voice gave no audio for the utterance (its TTS request failed): a fault of the
        voice (the exam pauses, then the question is asked again; a long outage switches to
        the offline voice). The utterance itself ends as cut with nothing heard."""
        self._provider_failed("tts", f"no audio for utterance {utterance_id}")

    def utterances_dropped(self, utterance_ids: tuple[str, ...]) -> None:
        """An interruption dropped these queued utterances before any of their audio played."""
        self._decisions.post(UtterancesDropped(utterance_ids))

    def utterance_finished(
        self, utterance_id: str, duration_ms: int, *, interruption: Interruption | None = None
    ) -> None:
        """The utterance's audio ended, or a barge-in cut it (``interruption``: when, and the
        text heard until then)."""
        if interruption is None:
            self._decisions.post(UtteranceFinished(utterance_id, max(0, duration_ms)))
            return
        self._decisions.post(
            UtteranceFinished(
                utterance_id,
                max(0, duration_ms),
                interrupted=True,
                interrupted_at_ms=self._session_ms(interruption.at),
                spoken_text=interruption.spoken_text,
            )
        )

    def candidate_interrupted(self, utterance_id: str) -> None:
        """The candidate barged in while ``utterance_id`` was being spoken."""
        self._decisions.post(CandidateInterrupted(utterance_id))

    def text_without_tool(self, text: str) -> None:
        """The LLM answered in text without calling the tool. Its text is never spoken (only
        the controller's validated output is): the reply is unusable, judged with the
        response's end (:meth:`llm_response_ended`: one re-run, then the turn's fault)."""
        if not self.llm_allowed() or not self._turns.owed:
            return
        self._stats.text_without_tool += 1
        self._turns.note("text_without_tool")
        self._model_fault("model_text_without_tool", textChars=len(text))

    def tool_call_unparsed(self, name: str, error: str, chars: int) -> None:
        """The LLM called ``name`` with arguments that are not JSON (Pipecat dropped the call,
        ``bot.tool_call_check``): stored at once; the response's end then judges the reply
        (:meth:`llm_response_ended`)."""
        if not self._turns.owed:
            return
        self._unparsed = True
        self._turns.note(f"unparsable_tool_call:{name[:80]}")
        self._model_fault(
            "model_unparsable_tool_call", tool=name[:80], error=error[:200], argumentsChars=chars
        )

    def _model_fault(self, code: str, **details: object) -> None:
        """Store a faulty reply of the owed turn (``bot.examiner_faults.MODEL_FAULTS``), with
        the node it happened at and the number of the turn's request."""
        node = self._llm_node or self._journal.controller.state.current_node_id
        record_model_fault(
            self._decisions, code, nodeId=node, request=self._turns.requests, **details
        )

    def llm_started(self) -> bool:
        """An LLM request is on its way: its usage belongs to the node it was made at. False
        when the turn's request budget is used up (the request is dropped, the turn fails)."""
        self._llm_node = self._journal.controller.state.current_node_id
        self._interruptions_at_request = self._interruptions
        return self._turns.request()

    def llm_rerun_started(self) -> bool:
        """A re-run after a tool result is on its way: only within the turn it belongs to
        (a turn already answered, by its fallback say, is not re-opened by a leftover
        re-run), and within its budget."""
        if not self._turns.owed:
            return False
        self._llm_node = self._journal.controller.state.current_node_id
        self._interruptions_at_request = self._interruptions
        return self._turns.request()

    def llm_interrupted(self) -> None:
        """An interruption passed the LLM (the candidate spoke, or the exam stopped its words):
        a response on its way then is cut, not the model's fault (:meth:`_unusable_reply`)."""
        self._interruptions += 1

    def llm_response_ended(self, text: str, calls: Sequence[str]) -> None:
        """An LLM response ended. Unknown tools are noted (Pipecat answers them and the LLM
        runs again, within the turn's budget); a response without a tool call (an empty
        stream, arguments that are not JSON, text alone) is retried once if the budget and the
        deadline allow, else the turn fails."""
        self._turns.response_ended()
        unparsed, self._unparsed = self._unparsed, False
        if calls:
            self._provider_worked("llm")
        if not self._turns.owed:
            return
        for name in calls:
            if name not in self._known_tools:
                self._turns.note(f"unknown_tool:{name[:80]}")
                self._model_fault("model_unknown_tool", tool=name[:80])
        if calls:
            return
        # A provider error ends its response the same way; it is reported a moment later
        # (upstream), so judge after a short grace.
        empty = not text and not unparsed
        asyncio.get_running_loop().call_later(
            UNUSABLE_GRACE_SECONDS,
            self._unusable_reply,
            self._turns.generation,
            empty,
            self._interruptions_at_request,
        )

    def _unusable_reply(self, generation: int, empty: bool, interruptions: int) -> None:
        """Judge a response without a tool call once the grace is over (no provider error
        failed the turn meanwhile): an ``empty`` one is stored as ``model_empty_reply``; the
        reply is retried once if allowed, else the turn fails. A response cut by an
        interruption since its request (``interruptions`` then) is nobody's fault and is not
        judged: Pipecat ends a cancelled response empty, and the candidate's next turn (or the
        turn's deadline) answers the turn."""
        turns = self._turns
        if not turns.owed or turns.generation != generation or self._decisions.closed:
            return
        if self._interruptions != interruptions:
            turns.note("reply_cut")
            return
        if empty:
            self._model_fault("model_empty_reply")
        turns.note("no_usable_reply")
        if turns.may_retry() and self.llm_allowed():
            self._reruns.spend()
            asyncio.get_running_loop().create_task(
                self._frames.append_message("developer", UNUSABLE_RETRY_NOTE, run_llm=True)
            )
            return
        turns.fail(
            "llm_no_usable_reply",
            "the LLM's reply had no report_observation call with valid JSON arguments",
        )

    def usage(self, component: Component, counter: Counter, model: str | None) -> None:
        node = (
            self._llm_node if component == "llm" else self._journal.controller.state.current_node_id
        )
        self._usage.add(component, node, counter, model)
