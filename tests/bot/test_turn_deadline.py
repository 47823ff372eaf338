"""``bot.turn_deadline``: the turn's deadline counts the examiner's silence, never the
candidate's speech (issue #30).

Seen in Chromium: the candidate went on speaking after the end of their turn, their speech cut
the model's reply on its way, and the deadline, still counting from the first request, ran out
while they spoke; the fallback said the question again over them. Driven here through the
watch's public inputs on a real event loop, with a short deadline.
"""

from __future__ import annotations

import asyncio

from bot.turn_deadline import GIVE_UP_AT, TurnLimits, TurnWatch

DEADLINE = 0.5
GIVE_UP = DEADLINE * GIVE_UP_AT


def _watch(failed: list[str], max_requests: int = 2) -> TurnWatch:
    limits = TurnLimits(
        deadline_seconds=DEADLINE, max_requests=max_requests, provider_failures_to_pause=3
    )
    return TurnWatch(limits, on_fail=lambda code, detail, problems: failed.append(code))


def test_an_owed_turn_still_fails_at_its_deadline_when_nobody_speaks() -> None:
    async def scenario() -> list[str]:
        failed: list[str] = []
        turns = _watch(failed)
        turns.request()
        await asyncio.sleep(GIVE_UP + 0.15)
        return failed

    assert asyncio.run(scenario()) == ["llm_timeout"]


def test_the_deadline_never_runs_out_while_the_candidate_speaks() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        failed: list[str] = []
        turns = _watch(failed)
        turns.request()
        await asyncio.sleep(0.1)
        turns.candidate_speaking(True)  # they go on: the reply on its way is cut
        await asyncio.sleep(GIVE_UP * 2.5)  # a long continuation, past two deadlines
        while_speaking = list(failed)
        turns.candidate_speaking(False)
        await asyncio.sleep(GIVE_UP - 0.15)
        before_deadline = list(failed)
        turns.stop()
        return while_speaking, before_deadline

    while_speaking, after_stop = asyncio.run(scenario())
    assert while_speaking == [], "the turn failed while the candidate was speaking"
    assert after_stop == [], "the deadline did not restart from the end of their speech"


def test_silence_after_the_candidate_went_on_still_fails_the_turn() -> None:
    # No request follows their speech (nothing asked the model again): the examiner is silent
    # no longer than a deadline after their last words.
    async def scenario() -> list[str]:
        failed: list[str] = []
        turns = _watch(failed)
        turns.request()
        turns.candidate_speaking(True)
        await asyncio.sleep(0.2)
        turns.candidate_speaking(False)
        await asyncio.sleep(GIVE_UP + 0.15)
        return failed

    assert asyncio.run(scenario()) == ["llm_timeout"]


def test_the_request_after_the_candidate_went_on_has_a_full_budget() -> None:
    # Two requests per turn: the first was cut by their speech, the second answers the whole
    # answer, and a third (say an unusable reply re-run) is still within the fresh budget.
    async def scenario() -> tuple[list[bool], list[str], list[str]]:
        failed: list[str] = []
        turns = _watch(failed, max_requests=2)
        allowed = [turns.request(), turns.request()]
        turns.candidate_speaking(True)
        turns.candidate_speaking(False)
        allowed += [turns.request(), turns.request(), turns.request()]
        problems = list(turns.problems)
        turns.stop()
        return allowed, failed, problems

    allowed, failed, problems = asyncio.run(scenario())
    assert allowed == [True, True, True, True, False]
    assert failed == ["llm_budget_exhausted"]
    assert "candidate_went_on" in problems


def test_speech_when_no_turn_is_owed_changes_nothing() -> None:
    async def scenario() -> tuple[bool, list[bool]]:
        failed: list[str] = []
        turns = _watch(failed, max_requests=1)
        turns.candidate_speaking(True)
        turns.candidate_speaking(False)
        went_on = turns.went_on
        allowed = [turns.request(), turns.request()]
        turns.stop()
        return went_on, allowed

    went_on, allowed = asyncio.run(scenario())
    assert went_on is False
    assert allowed == [True, False]


def test_each_request_has_its_own_id_also_after_the_candidate_went_on() -> None:
    # The report handler accepts one report per LLM response, by the request's id. The turn's
    # budget count starts again when the candidate goes on, so an id made of it repeated: the
    # answer to the whole turn was taken for a second report of the first response, ignored,
    # and stored as a model fault (CI: model_extra_report in the recogniser-outage test).
    async def scenario() -> list[tuple[int, int]]:
        turns = _watch([], max_requests=3)
        ids = []
        turns.request()
        ids.append(turns.request_id)
        turns.candidate_speaking(True)
        turns.candidate_speaking(False)
        turns.request()  # the turn starts afresh: a full budget
        ids.append(turns.request_id)
        turns.answered()
        turns.request()  # the runtime asks the model to speak: a new turn
        ids.append(turns.request_id)
        turns.stop()
        return ids

    ids = asyncio.run(scenario())
    assert len(set(ids)) == len(ids), ids
