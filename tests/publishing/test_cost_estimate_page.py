"""The dry run's cost estimate on the publish page and in the dry-run API, with a known price
table.

The draft is the cs201 example: its planned duration (``metadata.totalTimeBudgetSec``) is
1,200 s, so a voice exam is priced 20 min of speech recognition. The price table prices the
offline recogniser at 0.01 EUR a minute and the offline examiner at 0: a voice exam costs
20 x 0.01 = 0.2000 EUR, a text exam 0, and 50 of them 10.00 EUR and 0.00 EUR. The offline
voice has no price: it is flagged and the voice total is a lower bound.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.factories import DraftPackageFactory

PRICING = {
    "currency": "EUR",
    "llm": {"offline:*": {"input_per_million": 0, "output_per_million": 0}},
    "stt": {"offline:*": {"per_minute": 0.01}},
}


@pytest.fixture
def priced(settings: Any) -> None:
    settings.VIVA_PRICING = PRICING
    settings.VIVA_LLM_PROVIDER = "offline"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = True
    settings.VIVA_STT_PROVIDER = "offline"
    settings.VIVA_TTS_PROVIDER = "offline"
    settings.VIVA_TTS_VOICE = None
    settings.VIVA_STT_LANGUAGE = "en"
    settings.VIVA_TTS_LANGUAGE = "en"


@pytest.mark.django_db
@pytest.mark.usefixtures("priced")
def test_the_publish_page_estimates_an_exam_and_a_sitting() -> None:
    draft = DraftPackageFactory()
    client = Client()
    client.force_login(draft.owner)
    page = client.get(f"/studio/{draft.id}/publish/").content.decode()
    assert "Estimated cost" in page
    assert 'name="candidates" value="100"' in page and "For 100 candidates" in page
    page = client.get(f"/studio/{draft.id}/publish/?candidates=50").content.decode()
    assert "For 50 candidates" in page
    voice = page.split('class="estimate-voice"')[1].split("</tr>")[0]
    assert "0.2000 EUR" in voice and "10.00 EUR" in voice
    text = page.split('class="estimate-text"')[1].split("</tr>")[0]
    assert "0.0000 EUR" in text and "0.00 EUR" in text
    assert "20 min of speech recognition (the exam&#x27;s planned duration)" in page
    assert "examiner turns an exam (the median of 14 simulated exams)" in page
    assert "not priced" in page and "tts:offline:en" in page and "lower bound" in page


@pytest.mark.django_db
@pytest.mark.usefixtures("priced")
def test_the_dry_run_api_gives_the_estimate() -> None:
    draft = DraftPackageFactory()
    client = Client()
    client.force_login(draft.owner)
    url = f"/api/v1/packages/{draft.id}/dry-run/"
    response = client.post(url, {"candidates": 50}, content_type="application/json")
    assert response.status_code == 200, response.content
    cost = response.json()["costEstimate"]
    assert cost["currency"] == "EUR" and cost["candidates"] == 50
    assert cost["perExam"] == {"text": "0.0000", "voice": "0.2000"}
    assert cost["sitting"] == {"text": "0.0000", "voice": "10.0000"}
    assert cost["unpriced"] == ["tts:offline:en"]
    assert cost["complete"] == {"text": True, "voice": False}
    assert response.json()["runCount"] == 14
    default = client.post(url, {}, content_type="application/json").json()["costEstimate"]
    assert default["candidates"] == 100
    refused = client.post(url, {"candidates": 0}, content_type="application/json")
    assert refused.status_code == 400
