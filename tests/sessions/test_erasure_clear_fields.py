"""Personal fields that chain versions 1 and 2 hash in clear (issue #32,
``ioa.events.personal.CLEAR_PERSONAL_FIELDS``): the part of an utterance the candidate heard,
a self-correction's claims, a transcript's text before its correction, an error's texts. An
erasure replaces them by the marker too; the chain still verifies through the digest the erasure
keeps (recorded under a MAC outside the database), and a value rewritten afterwards, or a
record that differs from the one outside, fails verification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import TestCase

from ioa.events import payloads as p
from ioa.events.personal import ERASED_TEXT
from sessions.event_store import append_events
from sessions.models import ExamSession, SessionEvent
from sessions.selectors import export_lines, verify_log
from tests.factories import CandidateFactory
from tests.sessions.factories import ExamSessionFactory, event_factory, node_entered
from tests.sessions.tampering import tamper
from tests.sessions.test_erasure import erase

pytestmark = pytest.mark.django_db

CLAIM = "Dijkstra works with negative weights, says Ada Lovelace"
FIXED = "no, Dijkstra needs non-negative weights, Ada corrects herself"
HEARD = "Thank you Ada, so you live at 12 Byron Road"
MISHEARD = "my address is 12 Byron Road"
ERROR = "ValidationError: input_value='Ada Lovelace, 12 Byron Road'"
WORDS = ("Ada", "Lovelace", "Byron")


@pytest.fixture(autouse=True)
def anchors(settings: Any, tmp_path: Path) -> Path:
    settings.VIVA_CHAIN_ANCHOR_DIR = str(tmp_path / "anchors")
    settings.VIVA_CHAIN_KEY = "k" * 40
    return tmp_path / "anchors"


def exam(version: int = 2) -> ExamSession:
    session = ExamSessionFactory(candidate=CandidateFactory(), chain_version=version)
    make = event_factory(session)
    events = [
        make(node_entered("q1")),
        make(
            p.ExaminerUtteranceFinal(
                utteranceId="utt-1",
                nodeId="q1",
                text=HEARD + " and more",
                purpose="question",
                durationMs=900,
                interrupted=True,
                interruptedAtMs=400,
                spokenText=HEARD,
            )
        ),
        make(
            p.SelfCorrectionDetected(
                nodeId="q1",
                turnIds=["turn-1"],
                originalClaim=CLAIM,
                correctedClaim=FIXED,
                confidence=0.8,
            )
        ),
        make(
            p.TranscriptCorrected(
                nodeId="q1",
                turnId="turn-1",
                correctionTurnId="turn-2",
                how="typed",
                originalText=MISHEARD,
            )
        ),
        make(
            p.SystemErrorPayload(
                code="observation_rejected",
                message=ERROR,
                component="runtime_controller",
                severity="warning",
                details={"error": ERROR},
            )
        ),
    ]
    with TestCase.captureOnCommitCallbacks(execute=True):
        append_events(session=session, events=events)
    ExamSession.objects.filter(pk=session.pk).update(state="completed")
    session.refresh_from_db()
    return session


def payload(session: ExamSession, seq: int) -> dict[str, Any]:
    return SessionEvent.objects.get(session=session, seq=seq).payload


@pytest.mark.parametrize("version", [2, 1])
def test_fields_hashed_in_clear_are_erased_and_the_chain_still_verifies(version: int) -> None:
    session = exam(version)
    exported = "\n".join(export_lines(session_id=session.pk))
    assert all(word in exported for word in WORDS)
    assert verify_log(session_id=session.pk) == []

    erasure = erase(session)

    assert verify_log(session_id=session.pk) == []
    exported = "\n".join(export_lines(session_id=session.pk))
    assert [word for word in WORDS if word in exported] == []
    assert payload(session, 2)["spokenText"] == ERASED_TEXT
    assert payload(session, 2)["interruptedAtMs"] == 400
    claims = payload(session, 3)
    assert (claims["originalClaim"], claims["correctedClaim"]) == (ERASED_TEXT, ERASED_TEXT)
    assert payload(session, 4)["originalText"] == ERASED_TEXT
    assert payload(session, 4)["correctionTurnId"] == "turn-2"
    error = payload(session, 5)
    assert (error["message"], error["details"], error["code"]) == (
        ERASED_TEXT,
        {},
        "observation_rejected",
    )
    assert erasure.counts["fields"] == 7  # text, spokenText, 2 claims, originalText, 2 errors


def test_a_rewritten_clear_field_fails_verification() -> None:
    session = exam()
    erase(session)
    claims = payload(session, 3)
    tamper(
        "UPDATE exam_sessions_sessionevent SET payload = %s WHERE session_id = %s AND seq = 3",
        [json.dumps({**claims, "originalClaim": "I copied it all"}), session.pk],
    )
    kinds = sorted({(p.kind, p.seq) for p in verify_log(session_id=session.pk)})
    assert ("erased_rewritten", 3) in kinds and ("altered", 3) in kinds, kinds


def test_a_forged_record_of_the_linked_digest_fails_verification() -> None:
    """Whoever rewrites the body and the digests in the database cannot match the MAC'd record
    kept outside it."""
    session = exam()
    erase(session)
    row = SessionEvent.objects.get(session=session, seq=4)
    forged = {**row.erased, "redacted": "sha256:" + "0" * 64}
    tamper(
        "UPDATE exam_sessions_sessionevent SET erased = %s WHERE session_id = %s AND seq = 4",
        [json.dumps(forged), session.pk],
    )
    kinds = {p.kind for p in verify_log(session_id=session.pk)}
    assert {"altered", "unrecorded_erasure"} <= kinds, kinds
