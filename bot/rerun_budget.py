"""How often the LLM may run again without a new candidate turn (no Pipecat here).

A run the bot asks for itself (a controller ``PromptLlm``, a rejected report, an unusable reply
retried) spends one re-run; a candidate turn resets the count. At most
``VIVA_BOT_MAX_LLM_RERUNS`` re-runs, and never beyond the owed turn's request budget
(``bot.turn_deadline``).
"""

from __future__ import annotations

from bot.turn_deadline import TurnWatch


class RerunBudget:
    """See the module docstring."""

    def __init__(self, limit: int, turns: TurnWatch) -> None:
        self._limit = limit
        self._turns = turns
        self._spent = 0

    def reset(self) -> None:
        """A new candidate turn: the count starts again."""
        self._spent = 0

    def spend(self) -> None:
        """The bot made the LLM run again (it was allowed to, or it had to)."""
        self._spent += 1

    def may_rerun(self) -> bool:
        """Whether the LLM may run again now; if so, the re-run is counted."""
        turns = self._turns
        if self._spent >= self._limit or (
            turns.owed and turns.requests >= turns.limits.max_requests
        ):
            return False
        self._spent += 1
        return True
