"""The proctoring REST API (/api/v1/sittings/..., /api/v1/sessions/...): scheduling, the CSV
import report, invitations that land on the exam, accommodations, the overview, the session's
timeline, transcript, ledger and interceptions, and actions with idempotency keys — on the real
database, with a real bot where an action must reach one."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test import Client

from accounts.models import Invitation
from bot.runners import run_bot
from bot.session_runner import BotOptions
from ioa.events import payloads as p
from sessions.event_store import append_events
from sessions.models import ExamSession, ProctorActionRequest, SessionEvent, Sitting
from tests.bot.conftest import Watcher, publish_example
from tests.factories import AuthorFactory, ProctorFactory
from tests.sessions.factories import event_factory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def version() -> Any:
    return publish_example()


@pytest.fixture
def proctor() -> Any:
    return ProctorFactory()


@pytest.fixture
def api(proctor: Any) -> Client:
    client = Client()
    client.force_login(proctor)
    return client


def post(client: Client, url: str, data: Any, **headers: str) -> Any:
    return client.post(url, data, content_type="application/json", headers=headers)


@pytest.fixture
def sitting(api: Client, version: Any) -> Sitting:
    response = post(
        api, "/api/v1/sittings/", {"versionId": str(version.pk), "title": "CS201 morning"}
    )
    assert response.status_code == 201, response.content
    return Sitting.objects.get(pk=response.json()["id"])


@pytest.fixture
def session(api: Client, sitting: Sitting) -> ExamSession:
    response = post(
        api,
        f"/api/v1/sittings/{sitting.pk}/candidates/",
        {"email": "Ada@Example.test", "displayName": "Ada Lovelace"},
    )
    assert response.status_code == 201, response.content
    return ExamSession.objects.get(pk=response.json()["sessionId"])


def test_a_proctor_schedules_a_sitting_and_proctors_it(
    api: Client, sitting: Sitting, proctor: Any
) -> None:
    assert list(sitting.proctors.all()) == [proctor]
    body = api.get(f"/api/v1/sittings/{sitting.pk}/").json()
    assert body["title"] == "CS201 morning"
    assert body["proctors"] == [proctor.username] and body["candidates"] == 0
    assert body["proctorAuthorisesStart"] is False


def test_an_author_schedules_only_versions_they_may_see(version: Any) -> None:
    stranger = Client()
    stranger.force_login(AuthorFactory())
    response = post(stranger, "/api/v1/sittings/", {"versionId": str(version.pk)})
    assert response.status_code == 400
    assert "versionId" in response.json()["error"]["details"]
    owner = Client()
    owner.force_login(version.draft.owner)
    created = post(owner, "/api/v1/sittings/", {"versionId": str(version.pk)})
    assert created.status_code == 201
    assert created.json()["title"] == version.title  # no title: the assessment's


def test_adding_a_candidate_with_accommodations(api: Client, sitting: Sitting) -> None:
    response = post(
        api,
        f"/api/v1/sittings/{sitting.pk}/candidates/",
        {
            "email": "grace@example.test",
            "displayName": "Grace Hopper",
            "extraTimeMultiplier": "1.50",
            "textModeRequired": True,
        },
    )
    assert response.status_code == 201
    row = response.json()
    assert row["candidate"] == "Grace Hopper"
    assert row["status"] == "scheduled" and row["invitation"] == "none"
    assert row["accommodations"] == {
        "extraTimeMultiplier": "1.50",
        "textModeRequired": True,
        "slowerSpeech": False,
    }
    again = post(api, f"/api/v1/sittings/{sitting.pk}/candidates/", {"email": "GRACE@example.test"})
    assert again.status_code == 400
    assert "already in this sitting" in again.json()["error"]["message"]


def test_the_csv_import_reports_every_row(api: Client, sitting: Sitting) -> None:
    post(api, f"/api/v1/sittings/{sitting.pk}/candidates/", {"email": "ada@example.test"})
    csv_text = (
        "email,name,extra_time,text_mode,slower_speech\n"
        "alan@example.test,Alan Turing,1.25,yes,no\n"
        "ada@example.test,Ada Lovelace,,,\n"
        "not-an-email,Nobody,,,\n"
        "edsger@example.test,Edsger Dijkstra,9,,\n"
        "barbara@example.test,Barbara Liskov,,maybe,\n"
        ",,,,\n"
        "katherine@example.test,Katherine Johnson,,no,yes\n"
    )
    upload = io.BytesIO(csv_text.encode())
    upload.name = "roster.csv"
    response = api.post(f"/api/v1/sittings/{sitting.pk}/candidates/import/", {"file": upload})
    assert response.status_code == 200, response.content
    body = response.json()
    outcomes = [(r["line"], r["email"], r["outcome"]) for r in body["rows"]]
    assert outcomes == [
        (2, "alan@example.test", "added"),
        (3, "ada@example.test", "skipped"),
        (4, "not-an-email", "error"),
        (5, "edsger@example.test", "error"),
        (6, "barbara@example.test", "error"),
        (8, "katherine@example.test", "added"),
    ]
    assert (body["added"], body["skipped"], body["errors"]) == (2, 1, 3)
    messages = {r["line"]: " ".join(r["messages"]) for r in body["rows"]}
    assert "not an email address" in messages[4]
    assert "between 1.00 and 3.00" in messages[5]
    assert "text_mode" in messages[6]
    alan = ExamSession.objects.get(sitting=sitting, candidate__username="alan@example.test")
    assert (alan.extra_time_multiplier, alan.text_mode_required, alan.slower_speech) == (
        pytest.approx(1.25),
        True,
        False,
    )
    # Nothing of a failed row was kept.
    assert not ExamSession.objects.filter(candidate__username="edsger@example.test").exists()


@pytest.mark.parametrize("csv", [[None, None], {"email": "x"}, True, None])
def test_a_csv_field_that_is_not_text_is_a_400(api: Client, sitting: Sitting, csv: Any) -> None:
    # Found by the schemathesis run (tests/config/test_api_contract.py): a list was a 500.
    response = api.post(
        f"/api/v1/sittings/{sitting.pk}/candidates/import/",
        {"csv": csv},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert not ExamSession.objects.filter(sitting=sitting).exists()


def test_a_csv_without_an_email_column_is_refused_whole(api: Client, sitting: Sitting) -> None:
    response = post(
        api, f"/api/v1/sittings/{sitting.pk}/candidates/import/", {"csv": "name\nAda\n"}
    )
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "The first row must name the columns, with an 'email' column."
    ]
    assert not ExamSession.objects.filter(sitting=sitting).exists()


def test_invitations_land_on_the_exam_and_replace_the_previous_link(
    api: Client, sitting: Sitting, session: ExamSession
) -> None:
    response = post(api, f"/api/v1/sittings/{sitting.pk}/invitations/", {})
    assert response.status_code == 201
    (first,) = response.json()["invitations"]
    assert first["sessionId"] == str(session.pk) and first["emailed"] is False
    session.refresh_from_db()
    assert session.invitation is not None and session.invitation.next_path == f"/exam/{session.pk}/"
    # The candidate follows the link: signed in, sent to the exam's first step.
    candidate = Client()
    path = first["url"].split("://", 1)[1].split("/", 1)[1]
    landing = candidate.post(f"/{path}", follow=False)
    assert landing.status_code == 302 and landing.url == f"/exam/{session.pk}/"
    # A new link for the same session revokes the earlier unused one.
    second = post(
        api, f"/api/v1/sittings/{sitting.pk}/invitations/", {"sessionIds": [str(session.pk)]}
    ).json()["invitations"][0]
    assert second["url"] != first["url"]
    assert api.get(f"/api/v1/sessions/{session.pk}/").json()["invitation"] == "usable"
    assert Invitation.objects.filter(candidate=session.candidate).count() == 2


def test_accommodations_change_until_the_exam_starts(api: Client, session: ExamSession) -> None:
    url = f"/api/v1/sessions/{session.pk}/accommodations/"
    changed = api.patch(url, {"slowerSpeech": True}, content_type="application/json")
    assert changed.status_code == 200 and changed.json()["accommodations"]["slowerSpeech"] is True
    ExamSession.objects.filter(pk=session.pk).update(state="in_progress")
    refused = api.patch(url, {"extraTimeMultiplier": "2.00"}, content_type="application/json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "session_started"


def _log(session: ExamSession) -> None:
    """A short stored log: the exam starts, a guardrail intercepts a text, evidence, a hand."""
    make = event_factory(session)
    events = [
        make(
            p.BotReady(examId="x", examVersion="1", nodeCount=6, estimatedDurationSec=1200),
            correlation_id=None,
        ),
        make(p.ExamStateChanged(fromState="scheduled", toState="scaffolding")),
        make(p.ExamStateChanged(fromState="scaffolding", toState="ready")),
        make(p.ExamStateChanged(fromState="ready", toState="in_progress")),
        make(
            p.NodeEntered(
                nodeId="q-dijkstra",
                nodeKind="question",
                rubricItemIds=["tgt-greedy-choice"],
                maxFollowUps=3,
                timeBudgetSec=360,
                timeBudgetMs=360_000,
            ),
            correlation_id="trans-001",
        ),
        make(
            p.TranscriptFinal(
                turnId="turn-1",
                speaker="candidate",
                text="It settles the nearest vertex.",
                startTimeMs=1000,
                endTimeMs=2000,
                nodeId="q-dijkstra",
                confidence=0.92,
                language="en",
            ),
            correlation_id="turn-1",
        ),
        make(
            p.EvidenceSignal(
                signalId="sig-1",
                nodeId="q-dijkstra",
                turnIds=["turn-1"],
                targetIds=["tgt-greedy-choice"],
                evidenceDimension="knowledge_understanding",
                signalKind="positive",
                description="greedy choice",
                confidence=0.9,
                sttConfidenceSummary={"min": 0.92, "max": 0.92, "mean": 0.92, "turnCount": 1},
                llmProposal=False,
                excerpt="settles the nearest vertex",
            ),
            correlation_id="turn-1",
        ),
        make(
            p.GuardrailTriggered(
                guardrailId="persona_break:q-dijkstra:8:1",
                guardrailType="persona_break",
                severity="block",
                description="OUT-001 persona_break (replace)",
                actionTaken="output_replaced",
                contextNodeId="q-dijkstra",
                originalText="As an AI I cannot. What is the running time?",
                replacementText="What is the running time?",
            ),
            correlation_id="turn-1",
        ),
        make(
            p.ExaminerUtteranceFinal(
                utteranceId="utt-0001",
                nodeId="q-dijkstra",
                text="What is the running time?",
                purpose="follow_up",
                durationMs=900,
            )
        ),
        make(
            p.CandidateCommandReceived(
                commandId="cmd-hand",
                command="raise_hand",
                commandType="raise_hand",
                accepted=True,
                origin="envelope",
            ),
            correlation_id="cmd-hand",
        ),
    ]
    append_events(session=session, events=events)


def test_the_session_reads(api: Client, session: ExamSession) -> None:
    _log(session)
    base = f"/api/v1/sessions/{session.pk}"
    detail = api.get(f"{base}/").json()
    assert (detail["status"], detail["nodeId"], detail["handRaised"]) == (
        "in_progress",
        "q-dijkstra",
        True,
    )
    assert detail["guardrails"] == 1 and detail["examRemainingMs"] <= 1_200_000
    assert detail["health"] == "lost"  # the exam runs and no bot holds the session
    groups = api.get(f"{base}/timeline/").json()["groups"]
    turn = next(g for g in groups if g["correlationId"] == "turn-1")
    assert [e["type"] for e in turn["events"]] == [
        "transcript_final",
        "evidence_signal",
        "guardrail_triggered",
    ]
    turns = api.get(f"{base}/transcript/").json()["turns"]
    assert [(t["speaker"], t["text"]) for t in turns] == [
        ("candidate", "It settles the nearest vertex."),
        ("examiner", "What is the running time?"),
    ]
    nodes = api.get(f"{base}/ledger/").json()["nodes"]
    dijkstra = next(n for n in nodes if n["nodeId"] == "q-dijkstra")
    assert dijkstra["entered"] is True
    greedy = next(t for t in dijkstra["targets"] if t["id"] == "tgt-greedy-choice")
    assert greedy["covered"] is True
    assert greedy["signals"][0]["excerpt"] == "settles the nearest vertex"
    others = [t for t in dijkstra["targets"] if t["id"] != "tgt-greedy-choice"]
    assert others and not any(t["covered"] for t in others)
    (guard,) = api.get(f"{base}/interceptions/").json()["guardrails"]
    assert guard["originalText"] == "As an AI I cannot. What is the running time?"
    assert guard["replacementText"] == "What is the running time?"
    overview = api.get(f"/api/v1/sittings/{session.sitting_id}/overview/").json()
    assert [a["kind"] for a in overview["alerts"]] == ["raise_hand"]
    listed = api.get(f"/api/v1/sessions/?sitting={session.sitting_id}&status=in_progress").json()
    assert [r["sessionId"] for r in listed["results"]] == [str(session.pk)]


def test_actions_without_a_bot_and_idempotency_keys(api: Client, session: ExamSession) -> None:
    url = f"/api/v1/sessions/{session.pk}/actions/"
    refused = post(api, url, {"action": "pause", "reason": "Break."}, **{"Idempotency-Key": "a-1"})
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "bot_unavailable"
    replay = post(api, url, {"action": "pause", "reason": "Break."}, **{"Idempotency-Key": "a-1"})
    assert replay.status_code == 409 and replay["Idempotent-Replayed"] == "true"
    assert (
        replay.json()["error"]["details"]["request"]["id"]
        == (refused.json()["error"]["details"]["request"]["id"])
    )
    conflict = post(api, url, {"action": "resume", "reason": "x"}, **{"Idempotency-Key": "a-1"})
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "idempotency_conflict"
    invalid = post(api, url, {"action": "extend_time", "reason": "More time.", "seconds": 60})
    assert invalid.status_code == 400 and "scope" in invalid.json()["error"]["details"]
    no_reason = post(api, url, {"action": "pause", "reason": " "})
    assert no_reason.status_code == 400
    recorded = post(
        api,
        url,
        {"action": "flag_irregularity", "category": "candidate", "reason": "Notes on the desk."},
        **{"Idempotency-Key": "a-2"},
    )
    assert recorded.status_code == 201 and recorded.json()["status"] == "recorded"
    again = post(
        api,
        url,
        {"action": "flag_irregularity", "category": "candidate", "reason": "Notes on the desk."},
        **{"Idempotency-Key": "a-2"},
    )
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert SessionEvent.objects.filter(session=session, type="proctor_action").count() == 1
    history = api.get(url).json()
    assert [(r["action"], r["status"]) for r in history] == [
        ("flag_irregularity", "recorded"),
        ("pause", "refused"),
    ]
    assert ProctorActionRequest.objects.filter(session=session).count() == 2


def test_an_action_through_the_api_reaches_the_running_bot(
    api: Client, session: ExamSession, settings: Any
) -> None:
    settings.VIVA_BOT_HEARTBEAT_SECONDS = 0.5
    settings.VIVA_BOT_LEASE_SECONDS = 5
    settings.VIVA_PIPECAT_LOG_LEVEL = "WARNING"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = True
    settings.VIVA_LLM_PROVIDER = "offline"
    url = f"/api/v1/sessions/{session.pk}/actions/"
    answers: dict[str, Any] = {}

    def call(data: dict[str, Any], key: str) -> Any:
        try:
            return post(api, url, data, **{"Idempotency-Key": key})
        finally:
            connection.close()

    async def main() -> None:
        watcher = Watcher().bind()
        stop = asyncio.Event()
        bot = asyncio.create_task(
            run_bot(session.pk, options=BotOptions(on_stored=watcher, stop=stop))
        )
        try:
            await watcher.until_count("bot_ready", 1)
            from sessions.bot_channel import send_to_bot

            await send_to_bot(session.pk, "candidate_ready")
            await watcher.until_count("examiner_utterance_final", 1)
            data = {"action": "extend_time", "seconds": 300, "scope": "exam", "reason": "Fire."}
            answers["extend"] = await sync_to_async(call)(data, "k-extend")
            answers["again"] = await sync_to_async(call)(data, "k-extend")
        finally:
            stop.set()
            await asyncio.wait_for(bot, 60)

    asyncio.run(asyncio.wait_for(main(), 180))
    extend = answers["extend"]
    assert extend.status_code == 201, extend.content
    assert extend.json()["status"] == "applied" and "Added 300 seconds" in extend.json()["message"]
    assert answers["again"].status_code == 201
    assert answers["again"]["Idempotent-Replayed"] == "true"
    (action,) = SessionEvent.objects.filter(session=session, type="proctor_action")
    assert action.payload["seconds"] == 300 and action.payload["reason"] == "Fire."
    assert action.correlation_id == extend.json()["id"]
