"""No silent turn, no runaway turn (our chapter 04 §6, ``docs/spec/agent-boundary.md``).

:class:`TurnWatch` follows the examiner's reply to one candidate turn. A turn is *owed* from
the moment the candidate's turn is handed to the LLM (or the LLM is asked to speak by the
runtime) until the controller has handled a valid ``report_observation`` for it. While a turn is
owed:

* every LLM request of the turn is counted against one budget
  (``VIVA_BOT_MAX_LLM_REQUESTS_PER_TURN``), whatever caused it: the turn itself, re-runs after
  unusable replies, unknown tools, rejected arguments, runtime instructions. A request over the
  budget is not sent;
* an unusable reply (neither text nor a tool call: an empty stream, tool arguments that are not
  JSON) is retried once more with a developer note while the budget and half the deadline
  allow;
* the turn fails (:meth:`TurnWatch.fail`) when the budget is used up, 80 % of the deadline
  (``VIVA_BOT_TURN_DEADLINE_SECONDS``) has passed, or the provider fails; the core then reports a
  :class:`~ioa.runtime.inputs.TurnFault` and the controller answers with the current question.
  A failed turn is closed: exactly one answer per turn.

The deadline counts the examiner's silence, never the candidate's speech: while the candidate
speaks, an expired deadline waits (the fallback would be said over them), and when they have
spoken during an owed turn, the turn runs again from their next request with a full deadline and
budget (:meth:`TurnWatch.candidate_speaking`): a reply cut by their going on is not the
model's lateness (seen in Chromium: the fallback repeated the question while the candidate was
still answering).

Provider failures are counted over consecutive turns: after
``VIVA_BOT_PROVIDER_FAILURES_TO_PAUSE`` of them the core reports a transient ``Fault(llm)``
instead, which pauses the exam (technical recovery) until the fault is cleared.

No Pipecat and no Django here: the watch only keeps time and counts; the core acts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

UNUSABLE_RETRY_NOTE: Final = (
    "Your last reply could not be used: it had no report_observation call with valid JSON "
    "arguments. Call report_observation now."
)
"""The developer note sent with the one re-run after an unusable reply (never spoken)."""


UNUSABLE_GRACE_SECONDS: Final = 0.3
"""How long after an empty response the core waits for a provider error before judging the
reply unusable (the error frame travels upstream and arrives a moment later)."""
GIVE_UP_AT: Final = 0.8
"""The watch gives up waiting for the LLM at this fraction of the deadline, so that the
fallback is decided, stored and spoken within the deadline."""


@dataclass(frozen=True, slots=True)
class TurnLimits:
    """The watch's settings."""

    deadline_seconds: float = 10.0
    max_requests: int = 4
    provider_failures_to_pause: int = 3


@dataclass
class TurnWatch:
    """See the module docstring. ``on_fail(code, detail, problems)`` is called once per failed
    turn, from the event loop."""

    limits: TurnLimits
    on_fail: Callable[[str, str, tuple[str, ...]], None]
    owed: bool = False
    requests: int = 0
    problems: list[str] = field(default_factory=list)
    provider_failures: int = 0
    """Consecutive turns failed by the provider."""
    in_flight: bool = False
    """An LLM request of the owed turn has been sent and its response has not ended."""
    opened_at: float | None = None
    answered_in: list[float] = field(default_factory=list)
    """Seconds from opening to the answer, per closed turn (for the bench)."""
    generation: int = 0
    """Counts the turns opened (a delayed judgement checks it is still about the same turn)."""
    speaking: bool = False
    """The candidate is speaking (the VAD's start and stop)."""
    went_on: bool = False
    """The candidate spoke while the turn was owed: its next request starts afresh."""
    sent: int = 0
    """Counts every LLM request sent, never reset: with ``generation``, a request's identity
    (:attr:`request_id`). ``requests`` is the turn's budget count, which starts again when the
    candidate goes on, so it cannot tell two responses apart."""
    _timer: asyncio.TimerHandle | None = None

    # --- opening and closing ---------------------------------------------------------------

    def open(self) -> None:
        """A reply is owed from now (a second candidate turn while one is owed joins it: same
        deadline, same budget)."""
        if self.owed:
            return
        self.generation += 1
        self.owed = True
        self.went_on = False
        self.requests = 0
        self.problems = []
        self.opened_at = time.monotonic()
        self._arm()

    def _arm(self) -> None:
        """(Re)start the deadline from now."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(
            self.limits.deadline_seconds * GIVE_UP_AT, self._expired
        )

    def answered(self) -> None:
        """The controller handled a valid observation for the turn: it is answered."""
        if self.owed:
            self.provider_failures = 0
        self._close()

    def _close(self) -> None:
        if self.owed and self.opened_at is not None:
            self.answered_in.append(time.monotonic() - self.opened_at)
        self.owed = False
        self.in_flight = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def stop(self) -> None:
        """The bot stops: no more timers."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.owed = False

    # --- what happens during the turn ------------------------------------------------------

    def candidate_speaking(self, active: bool) -> None:
        """The candidate started (``active``) or stopped speaking. Speech during an owed turn
        makes its next request start afresh (a full deadline and budget: the answer grew); when
        the speech stops the deadline restarts, so the examiner is never silent longer than it
        after the candidate's last words, even if no request follows."""
        self.speaking = active
        if not self.owed:
            return
        if active:
            self.went_on = True
        else:
            self._arm()

    def request(self) -> bool:
        """An LLM request is about to be sent. Opens a turn if none is owed (the runtime asked
        the LLM to speak), or starts it afresh if the candidate went on speaking since it was
        opened; False when the turn's budget is used up (the request is dropped and the turn
        fails)."""
        if not self.owed:
            self.open()
        elif self.went_on:
            self.went_on = False
            self.requests = 0
            self.opened_at = time.monotonic()
            self.note("candidate_went_on")
            self._arm()
        if self.requests >= self.limits.max_requests:
            self.problems.append("budget_exhausted")
            self.fail(
                "llm_budget_exhausted",
                f"{self.requests} LLM requests in this turn without a usable reply",
            )
            return False
        self.requests += 1
        self.sent += 1
        self.in_flight = True
        return True

    @property
    def request_id(self) -> tuple[int, int]:
        """The latest request's identity, unique for the watch's life: (turn, request sent)."""
        return (self.generation, self.sent)

    def response_ended(self) -> None:
        self.in_flight = False

    def note(self, problem: str) -> None:
        """Something went wrong in the turn that does not fail it by itself."""
        if self.owed:
            self.problems.append(problem[:200])

    def may_retry(self) -> bool:
        """Whether an unusable reply may be retried: budget left and at least half the
        deadline."""
        if not self.owed or self.opened_at is None:
            return False
        elapsed = time.monotonic() - self.opened_at
        return (
            self.requests < self.limits.max_requests and elapsed < self.limits.deadline_seconds / 2
        )

    def provider_failed(self, detail: str) -> bool:
        """The provider failed the owed turn. Returns True when the failures have repeated
        enough to pause the exam (the turn is closed without a fallback: the pause answers)."""
        self.problems.append("provider_error")
        self.provider_failures += 1
        if self.provider_failures >= self.limits.provider_failures_to_pause:
            self.provider_failures = 0
            self._close()
            return True
        self.fail("llm_provider_error", detail)
        return False

    def fail(self, code: str, detail: str) -> None:
        """The turn failed: close it and report (once)."""
        if not self.owed:
            return
        problems = tuple(self.problems)
        self._close()
        self.on_fail(code, detail, problems)

    def _expired(self) -> None:
        self._timer = None
        if self.owed and self.speaking:
            self._arm()  # never said over the candidate: it waits for their next request
            return
        if self.owed:
            self.problems.append("deadline")
            self.fail(
                "llm_timeout",
                f"no usable LLM reply within {self.limits.deadline_seconds:g} s",
            )
