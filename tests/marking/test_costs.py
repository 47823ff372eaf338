"""The cost of each exam in plain sight (issue #35): on the marking session page, the cohort
page, the sitting's roster and in the API, equal to the usage the bot priced, with usage that has
no price flagged (``sessions.costs``)."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest

from bot.usage import Counter, flush_usage
from sessions.costs import cost_of, costs_of
from tests.factories import CandidateFactory

pytestmark = pytest.mark.django_db(transaction=True)

PRICING: dict[str, object] = {
    "currency": "EUR",
    "llm": {"openai:gpt-4.1-mini": {"input_per_million": 0.4, "output_per_million": 1.6}},
    "stt": {"deepgram:*": {"per_minute": 0.0043}},
    "tts": {"cartesia:*": {"per_million_characters": 30}},
}


def use(session_id: uuid.UUID, *, tokens: tuple[int, int], audio_ms: int, chars: int) -> None:
    """What a bot would flush for one exam: an LLM, a recogniser, a voice, and one model the
    price table does not know."""
    flush_usage(
        session_id,
        {
            ("llm", "openai", "gpt-4.1-mini"): Counter(
                input_tokens=tokens[0], output_tokens=tokens[1]
            ),
            ("stt", "deepgram", "nova-3"): Counter(audio_ms=audio_ms),
            ("tts", "cartesia", "sonic-2"): Counter(characters=chars),
            ("llm", "anthropic", "claude-x"): Counter(input_tokens=1000, output_tokens=100),
        },
        PRICING,
    )


def expected(tokens: tuple[int, int], audio_ms: int, chars: int) -> Decimal:
    """The same price, worked out by hand from the table."""
    llm = Decimal(tokens[0]) * Decimal("0.4") / 10**6 + Decimal(tokens[1]) * Decimal("1.6") / 10**6
    stt = Decimal(audio_ms) / 60000 * Decimal("0.0043")
    tts = Decimal(chars) * 30 / 10**6
    return llm + stt + tts


def test_one_exam_costs_what_its_usage_was_priced_at(make_session: Any) -> None:
    session = make_session("mixed")
    use(session.pk, tokens=(182_000, 9_400), audio_ms=600_000, chars=5_200)

    cost = cost_of(session.pk)

    assert cost is not None and cost.currency == "EUR"
    assert abs(cost.total - expected((182_000, 9_400), 600_000, 5_200)) < Decimal("0.00001")
    assert cost.by_component["stt"] == Decimal("0.043000")
    assert cost.unpriced == ("llm:anthropic:claude-x",)
    assert cost.as_json()["complete"] is False


def test_a_cohort_sums_its_exams_and_counts_those_without_usage(make_session: Any) -> None:
    sessions = [make_session("mixed") for _ in range(3)]
    use(sessions[0].pk, tokens=(100_000, 5_000), audio_ms=300_000, chars=4_000)
    use(sessions[1].pk, tokens=(300_000, 15_000), audio_ms=900_000, chars=8_000)

    (cost,) = costs_of(s.pk for s in sessions)

    total = expected((100_000, 5_000), 300_000, 4_000) + expected((300_000, 15_000), 900_000, 8_000)
    assert cost.exams == 3 and cost.priced_exams == 2
    assert abs(cost.total - total) < Decimal("0.00001")
    assert cost.per_exam == (cost.total / 2).quantize(Decimal("0.0001"))
    assert costs_of([uuid.uuid4()]) == []


def test_the_pages_show_the_cost_and_flag_unpriced_usage(
    make_session: Any, author: Any, client: Any
) -> None:
    session = make_session("mixed")
    use(session.pk, tokens=(182_000, 9_400), audio_ms=600_000, chars=5_200)
    total = f"{expected((182_000, 9_400), 600_000, 5_200):.4f}"
    client.force_login(author)

    for url in (
        f"/marking/sessions/{session.pk}/",
        f"/marking/assessments/{session.sitting.version_id}/",
        f"/proctor/sittings/{session.sitting_id}/candidates/",
    ):
        page = client.get(url).content.decode()
        assert f"{total} EUR" in page, url
        assert "not priced" in page and "llm:anthropic:claude-x" in page, url


def test_the_api_gives_the_cost_as_exact_decimal_strings(
    make_session: Any, author: Any, client: Any
) -> None:
    session = make_session("mixed")
    other = make_session("weak", candidate=CandidateFactory())
    use(session.pk, tokens=(182_000, 9_400), audio_ms=600_000, chars=5_200)
    client.force_login(author)

    detail = client.get(f"/api/v1/marking/sessions/{session.pk}/").json()
    sitting = client.get(f"/api/v1/sittings/{session.sitting_id}/").json()
    cohort = client.get(f"/api/v1/marking/versions/{session.sitting.version_id}/cohort/").json()

    (cost,) = detail["costs"]
    assert (
        cost["currency"] == "EUR"
        and cost["total"] == f"{expected((182_000, 9_400), 600_000, 5_200):.4f}"
    )
    assert cost["unpriced"] == ["llm:anthropic:claude-x"] and cost["complete"] is False
    assert sitting["costs"][0]["exams"] == 2 and sitting["costs"][0]["examsWithUsage"] == 1
    assert cohort["costs"][0]["total"] == cost["total"]
    assert other.pk != session.pk
