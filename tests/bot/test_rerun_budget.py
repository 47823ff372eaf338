"""``bot.rerun_budget``: how often the LLM may run again without a new candidate turn."""

from __future__ import annotations

import asyncio

from bot.rerun_budget import RerunBudget
from bot.turn_deadline import TurnLimits, TurnWatch


def _watch() -> TurnWatch:
    limits = TurnLimits(deadline_seconds=60, max_requests=3, provider_failures_to_pause=2)
    return TurnWatch(limits, on_fail=lambda code, detail, problems: None)


def test_at_most_the_limit_until_a_new_turn_resets_it() -> None:
    budget = RerunBudget(2, _watch())
    assert [budget.may_rerun() for _ in range(3)] == [True, True, False]
    budget.reset()
    assert budget.may_rerun() is True


def test_a_run_the_bot_asked_for_is_spent_from_the_same_budget() -> None:
    budget = RerunBudget(2, _watch())
    budget.spend()
    budget.spend()
    assert budget.may_rerun() is False


def test_never_beyond_the_owed_turns_request_budget() -> None:
    async def scenario() -> list[bool]:
        turns = _watch()
        budget = RerunBudget(10, turns)
        turns.open()
        allowed = []
        for _ in range(3):
            turns.request()
            allowed.append(budget.may_rerun())
        turns.stop()
        return allowed

    # the third request uses up the turn's budget of 3: no re-run after it
    assert asyncio.run(scenario()) == [True, True, False]
