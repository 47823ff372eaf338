"""The dry run's cost estimate (``publishing.cost_estimate``) against figures worked out by hand.

The report below has three simulated exams. LLM requests: 4 + 2 = 6, 6 + 4 = 10 and 8: the
median is 8 a exam. Prompt tokens: the 24 requests fall 18 at q1 (2,000 tokens of instructions)
and 6 at q2 (1,000): (18 x 2,000 + 6 x 1,000) / 24 = 1,750, plus 400 of conversation = 2,150.
Reply: 100 tokens. Speech recognition: the planned 1,200 s = 20 min. Synthesised speech: the
median 900 characters, the median 150 words x 0.4 s = 60 s = 1 min.

With the price table ``PRICING``: an LLM request costs (2,150 x 0.4 + 100 x 1.6) / 1e6 =
0.00102, 8 of them 0.00816; 20 min of recognition at 0.0043 = 0.086; 900 characters at 30 a
million = 0.027. A voice exam 0.12116, a text exam 0.00816; 100 of them 12.116 and 0.816.
"""

from __future__ import annotations

from decimal import Decimal

from publishing.cost_estimate import (
    DEFAULT_CANDIDATES,
    MAX_CANDIDATES,
    candidates_from,
    estimate,
    measure,
    node_prompt_tokens,
)

REPORT = {
    "runs": [
        {"llmRequests": {"q1": 4, "q2": 2}, "examinerChars": 600, "examinerWords": 100,
         "durationSec": 300.0},
        {"llmRequests": {"q1": 6, "q2": 4}, "examinerChars": 900, "examinerWords": 150,
         "durationSec": 500.0},
        {"llmRequests": {"q1": 8}, "examinerChars": 1200, "examinerWords": 200,
         "durationSec": 700.0},
    ]
}  # fmt: skip
PROMPTS = {"q1": 2000, "q2": 1000}
PRICING = {
    "currency": "EUR",
    "llm": {"openai:gpt-4.1-mini": {"input_per_million": 0.4, "output_per_million": 1.6}},
    "stt": {"deepgram:*": {"per_minute": 0.0043}},
    "tts": {"*": {"per_million_characters": 30}},
}
PROVIDERS = {
    "llm": ("openai", "gpt-4.1-mini"),
    "stt": ("deepgram", "nova-3-general"),
    "tts": ("cartesia", "sonic"),
}


def test_the_measures_of_a_typical_exam() -> None:
    usage = measure(REPORT, PROMPTS, 1200)
    assert usage.simulated == 3
    assert usage.llm_requests == 8
    assert usage.prompt_tokens == 2150 and usage.reply_tokens == 100
    assert usage.stt_minutes == 20 and usage.planned
    assert usage.tts_characters == 900 and usage.tts_minutes == 1


def test_without_a_planned_duration_recognition_lasts_the_median_simulated_exam() -> None:
    usage = measure(REPORT, PROMPTS, None)
    assert not usage.planned
    assert usage.stt_minutes == Decimal(500) / 60


def test_an_exam_and_a_sitting_priced_by_hand() -> None:
    cost = estimate(measure(REPORT, PROMPTS, 1200), PRICING, PROVIDERS)
    assert cost.currency == "EUR" and cost.candidates == DEFAULT_CANDIDATES == 100
    assert [(line.component, line.per_exam) for line in cost.lines] == [
        ("llm", Decimal("0.00816")),
        ("stt", Decimal("0.086")),
        ("tts", Decimal("0.027")),
    ]
    assert cost.text_per_exam == Decimal("0.00816")
    assert cost.voice_per_exam == Decimal("0.12116")
    assert cost.text_sitting == Decimal("0.816")
    assert cost.voice_sitting == Decimal("12.116")
    assert cost.unpriced == ()
    data = cost.as_json()
    assert data["perExam"] == {"text": "0.0082", "voice": "0.1212"}
    assert data["sitting"] == {"text": "0.8160", "voice": "12.1160"}
    assert data["complete"] == {"text": True, "voice": True}
    assert cost.assumptions == (
        "About 8 examiner turns an exam (the median of 3 simulated exams), each an LLM request "
        "of ~2,150 prompt tokens (the node's instructions and tool, and ~400 tokens of "
        "conversation) and ~100 reply tokens, with openai gpt-4.1-mini.",
        "Voice only: 20 min of speech recognition (the exam's planned duration) with deepgram "
        "nova-3-general, and ~900 characters (~1.0 min) of synthesised speech (what the "
        "examiner said in the dry run) with cartesia sonic.",
    )


def test_unpriced_components_are_flagged_and_the_total_is_a_lower_bound() -> None:
    pricing = {**PRICING, "tts": {"elevenlabs:*": {"per_million_characters": 30}}}
    cost = estimate(measure(REPORT, PROMPTS, 1200), pricing, PROVIDERS, candidates=50)
    assert cost.unpriced == ("tts:cartesia:sonic",)
    assert [line.priced for line in cost.lines] == [True, True, False]
    assert cost.voice_per_exam == Decimal("0.09416")  # 0.00816 + 0.086, speech not counted
    assert cost.voice_sitting == Decimal("4.708")
    assert cost.as_json()["complete"] == {"text": True, "voice": False}
    assert cost.as_json()["currency"] == "EUR"


def test_a_missing_provider_or_price_table_prices_nothing() -> None:
    cost = estimate(measure(REPORT, PROMPTS, 1200), {}, {"llm": ("offline", "rehearsal")})
    assert cost.currency == "USD"
    assert cost.unpriced == ("llm:offline:rehearsal", "stt:unknown:unknown", "tts:unknown:unknown")
    assert cost.voice_per_exam == 0 and cost.as_json()["complete"] == {
        "text": False,
        "voice": False,
    }


def test_fallback_keys_price_a_model_the_table_does_not_name() -> None:
    pricing = {"llm": {"openai:*": {"input_per_million": 1, "output_per_million": 0}}}
    cost = estimate(measure(REPORT, PROMPTS, 1200), pricing, PROVIDERS)
    assert cost.lines[0].per_exam == Decimal("0.0172")  # 8 x 2,150 tokens at 1 a million


def test_node_prompt_tokens_count_instructions_and_offered_tools() -> None:
    flow = {
        "functions": {"f": {"name": "f"}},  # '{"name": "f"}': 13 characters
        "nodes": [
            {"name": "q1", "role_message": "r" * 10, "task_messages": [{"content": "t" * 25}],
             "functions": ["f"]},
            {"name": "end", "role_message": "r" * 10, "task_messages": [{"content": "ttt"}],
             "functions": []},
        ],
    }  # fmt: skip
    assert node_prompt_tokens(flow) == {"q1": 12, "end": 4}  # 48 / 4; 13 / 4 rounded up


def test_the_sitting_size_an_author_enters() -> None:
    assert candidates_from("250") == 250
    assert candidates_from(" 7 ") == 7
    assert candidates_from("") == candidates_from("many") == DEFAULT_CANDIDATES
    assert candidates_from("0") == 1
    assert candidates_from(str(MAX_CANDIDATES + 1)) == MAX_CANDIDATES
