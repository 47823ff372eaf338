"""Completing erasures made before erasure covered every table and event field (issue #32):
``erase_personal_data --complete`` finds the sessions whose latest erasure predates
``sessions.erasure.COVERAGE`` and erases what was left: events whose types had no personal
field then, and the rows beside the log. The chain still verifies; a completed session is not
listed again."""

from __future__ import annotations

from collections.abc import Mapping
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from ioa.events.personal import ERASED_TEXT, PERSONAL_FIELDS, marker, personal_fields, seal
from sessions import erasure as erasure_module
from sessions.models import CandidateInput, PersonalDataErasure, SessionEvent, WindowOverride
from sessions.selectors import verify_log
from tests.factories import AdminFactory
from tests.sessions.test_erasure import erase
from tests.sessions.test_erasure_clear_fields import CLAIM, ERROR, HEARD, MISHEARD, exam

pytestmark = pytest.mark.django_db

REASON = "Ada Lovelace had a hospital appointment"


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> Path:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40
    return tmp_path / "anchors"


def sealed_only(wire: Mapping[str, Any], *, key: bytes) -> tuple[dict[str, Any], dict[str, str]]:
    """The erasure before issue #32: the sealed personal fields only."""
    payload, seals = dict(wire.get("payload") or {}), {}
    for name in personal_fields(wire):
        seals[name] = seal(key, event_id=str(wire["eventId"]), field=name, value=payload[name])
        payload[name] = marker(str(wire["type"]), name)
    return payload, seals


def erased_the_old_way(monkeypatch: pytest.MonkeyPatch, session: Any) -> None:
    with monkeypatch.context() as old:
        old.setattr(erasure_module, "ERASABLE_TYPES", frozenset(PERSONAL_FIELDS))
        old.setattr(erasure_module, "erase", sealed_only)
        old.setattr(erasure_module, "clear_fields", lambda wire: [])
        old.setattr(
            erasure_module,
            "_session_rows_erased",
            lambda s: CandidateInput.objects.filter(session=s).update(payload={}),
        )
        erase(session)
    record = PersonalDataErasure.objects.get(session=session)
    counts = {k: v for k, v in record.counts.items() if k != "coverage"}
    PersonalDataErasure.objects.filter(pk=record.pk).update(counts=counts)


def payload(session: Any, seq: int) -> dict[str, Any]:
    return SessionEvent.objects.get(session=session, seq=seq).payload


def test_an_earlier_erasure_is_completed_and_the_chain_still_verifies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = exam()
    WindowOverride.objects.create(session=session, reason=REASON, created_by=AdminFactory())
    erased_the_old_way(monkeypatch, session)
    assert verify_log(session_id=session.pk) == []
    assert payload(session, 3)["originalClaim"] == CLAIM  # left by the earlier erasure
    assert WindowOverride.objects.get(session=session).reason == REASON

    out = StringIO()
    call_command("erase_personal_data", "--complete", stdout=out)
    assert f"session {session.pk}" in out.getvalue() and "dry run" in out.getvalue()
    assert payload(session, 3)["originalClaim"] == CLAIM

    call_command("erase_personal_data", "--complete", "--apply", stdout=out)

    assert "completed 1 erasure(s)" in out.getvalue()
    claims = payload(session, 3)
    assert (claims["originalClaim"], claims["correctedClaim"]) == (ERASED_TEXT, ERASED_TEXT)
    assert payload(session, 4)["originalText"] == ERASED_TEXT != MISHEARD
    assert payload(session, 5)["message"] == ERASED_TEXT != ERROR
    assert WindowOverride.objects.get(session=session).reason == ERASED_TEXT
    # An event erased before stays as it was: the triggers let an event be erased once.
    assert payload(session, 2)["spokenText"] == HEARD and payload(session, 2)["text"] == "[erased]"
    assert verify_log(session_id=session.pk) == []
    records = PersonalDataErasure.objects.filter(session=session).order_by("created_at")
    assert [r.counts.get("coverage") for r in records] == [None, 2]
    assert records[1].reason.startswith("completing the erasure of")

    again = StringIO()
    call_command("erase_personal_data", "--complete", stdout=again)
    assert str(session.pk) not in again.getvalue()


def test_a_session_never_erased_is_not_completed() -> None:
    session = exam()
    with pytest.raises(erasure_module.ErasureRefused, match="never erased"):
        erasure_module.erasure_complete(session=session, requested_by=None, reason="x")
    assert erasure_module.incomplete_erasures() == []
