"""The candidate's way through an exam: services (writes) and selectors (reads) of the journey.

Journey (docs/exam-room.md): invitation link → identity and consent → briefing → (when a grounded
node asks for it, docs/spec/candidate-materials.md) the candidate's material → mode choice
(voice with a microphone/speaker check, or text) → the exam room (waiting for the examiner, the
exam) → the completion page. Each step stores one fact on :class:`~sessions.models.ExamSession`
(``identity_confirmed_at`` + ``consent_given_at``/``consent_version``, ``briefing_seen_at``,
``exam_mode`` + ``audio_checked_at``); :func:`next_step` reads them to send the candidate to
the first step not yet done. Nothing here touches the event log: the exam itself starts when
the page tells the bot the candidate is ready (``candidate_ready`` on the session socket), and
every fact of the exam is an event written by the bot's runtime controller.

What the page may know about the package is decided here (:func:`exam_structure`): the parts
(kind and time budget only — no titles, prompts, evidence targets or rubric text), and per
node which candidate commands it allows. It is the only package data sent to the browser.

Accommodations set by staff (:func:`accommodations_set`): an extra-time multiplier, text mode
only, and slower speech. The bot reads them from the session (see docs/exam-room.md for what
it must do with them).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Final
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_stubs_ext import StrOrPromise

from accounts.models import Requester, User
from ioa.events import TERMINAL_STATES, ExamState
from ioa.languages import supported_language
from ioa.runtime.commands import gate
from ioa.schema import AssessmentPackage, CandidateCommandPolicy, CandidateCommandType, NodeKind
from ioa.schema.loader import load_package
from sessions.bot_port import StartWait, examiner_bot
from sessions.materials import materials_missing
from sessions.models import ExamSession
from web.unavailable import is_outage

logger = logging.getLogger(__name__)

CONSENT_VERSION: Final = "2026-11-1"
"""Version of the recording and consent notice the candidate agrees to (identity step). Bump it
when templates/sessions/exam_identity.html changes what it says."""

MIN_TIME_MULTIPLIER: Final = Decimal("1.00")
MAX_TIME_MULTIPLIER: Final = Decimal("3.00")

TERMINAL: Final = frozenset(s.value for s in TERMINAL_STATES)
STARTED: Final = frozenset({ExamState.IN_PROGRESS.value, ExamState.PAUSED.value})


class Mode(StrEnum):
    VOICE = "voice"
    TEXT = "text"


class Step(StrEnum):
    """The journey's pages, in order."""

    IDENTITY = "identity"
    BRIEFING = "briefing"
    MATERIAL = "material"
    SETUP = "setup"
    ROOM = "room"
    DONE = "done"


STEP_URLS: Final = {
    Step.IDENTITY: "exam_sessions:exam-identity",
    Step.BRIEFING: "exam_sessions:exam-briefing",
    Step.MATERIAL: "exam_sessions:exam-material",
    Step.SETUP: "exam_sessions:exam-setup",
    Step.ROOM: "exam_sessions:exam-room",
    Step.DONE: "exam_sessions:exam-done",
}

# --- candidate commands: the exam room's buttons ------------------------------------------------

C = CandidateCommandType

NODE_GATED_BUTTONS: Final = (
    ("repeat_question", C.REPEAT),
    ("request_clarification", C.CLARIFICATION),
    ("request_rephrase", C.REQUEST_REPHRASE),
    ("thinking_aloud", C.THINKING_ALOUD),
)
"""Command envelope types whose buttons show only where the node's policy allows them."""

ALWAYS_BUTTONS: Final = (
    "pause",
    "resume",
    "raise_hand",
    "report_audio_issue",
    "end_exam_requested",
    "emergency_stop",
)
"""Welfare and safety commands (spec-notes §3): always offered."""

KIND_LABELS: Final = {
    NodeKind.WARMUP: gettext_lazy("Warm-up"),
    NodeKind.QUESTION: gettext_lazy("Question"),
    NodeKind.SCENARIO: gettext_lazy("Scenario"),
    NodeKind.TASK: gettext_lazy("Task"),
    NodeKind.DISCUSSION: gettext_lazy("Discussion"),
    NodeKind.WRAPUP: gettext_lazy("Wrap-up"),
    NodeKind.BRANCH: gettext_lazy("Question"),
    NodeKind.IDENTITY_CHECK: gettext_lazy("Identity check"),
}
"""Lazy: the structure is cached across requests; each page renders them in its language."""


# --- reads ----------------------------------------------------------------------------------------


def candidate_sessions(*, user: Requester) -> list[ExamSession]:
    """The candidate's own sessions, newest first (none for anyone but a signed-in user)."""
    if not isinstance(user, User):
        return []
    return list(
        ExamSession.objects.visible_to(user)
        .filter(candidate=user)
        .select_related("sitting", "sitting__version")
        .order_by("-created_at")[:50]
    )


def candidate_session(*, user: Requester, session_id: uuid.UUID | str) -> ExamSession | None:
    """The session if it is ``user``'s own (a candidate sees no one else's), else ``None``."""
    if not isinstance(user, User):
        return None
    try:
        key = session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))
    except ValueError:
        return None
    return (
        ExamSession.objects.visible_to(user)
        .filter(pk=key, candidate=user)
        .select_related("sitting", "sitting__version")
        .first()
    )


def next_step(session: ExamSession) -> Step:
    """The first step of the journey the candidate has not done yet."""
    if session.state in TERMINAL:
        return Step.DONE
    if session.state in STARTED:
        return Step.ROOM
    if session.identity_confirmed_at is None or session.consent_given_at is None:
        return Step.IDENTITY
    if session.briefing_seen_at is None:
        return Step.BRIEFING
    if materials_missing(session):
        return Step.MATERIAL
    if not session.exam_mode:
        return Step.SETUP
    return Step.ROOM


def step_url(session: ExamSession, step: Step) -> str:
    return reverse(STEP_URLS[step], kwargs={"session_id": session.pk})


def is_started(session: ExamSession) -> bool:
    return session.state in STARTED


def is_over(session: ExamSession) -> bool:
    return session.state in TERMINAL


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the exam as the candidate sees it: a node, or a question pool (one of its
    nodes is drawn per candidate) counted once."""

    number: int
    label: StrOrPromise
    node_ids: tuple[str, ...]
    budget_sec: int | None


@dataclass(frozen=True, slots=True)
class ExamStructure:
    """What the candidate may know of a package (no titles, prompts, targets or rubric)."""

    title: str
    language: str
    examiner_name: StrOrPromise
    total_budget_sec: int | None
    parts: tuple[Part, ...]
    commands: dict[str, tuple[str, ...]]
    """Per node id: the command envelope types its policy allows (node-gated ones only)."""

    def scaled(self, seconds: int | None, multiplier: Decimal) -> int | None:
        return None if seconds is None else int(Decimal(seconds) * multiplier)


def _reachable_order(package: AssessmentPackage) -> list[str]:
    """Node ids in the order the exam would visit them (breadth-first from the initial node,
    transitions in array order, pools expanded), then any other node."""
    pools = {pool.poolId: tuple(pool.nodeIds) for pool in package.questionPools}
    nodes = {node.nodeId: node for node in package.nodes}
    order: list[str] = []
    queue = [package.initialNodeId]
    while queue:
        current = queue.pop(0)
        for node_id in pools.get(current, (current,)):
            if node_id in order or node_id not in nodes:
                continue
            order.append(node_id)
            queue.extend(t.targetNodeId for t in nodes[node_id].transitions)
    order.extend(n for n in nodes if n not in order)
    return order


@functools.lru_cache(maxsize=64)
def _structure(checksum: str, canonical_json: str) -> ExamStructure:
    package = load_package(json.loads(canonical_json))
    nodes = {node.nodeId: node for node in package.nodes}
    pool_of = {node_id: pool.poolId for pool in package.questionPools for node_id in pool.nodeIds}
    members = {pool.poolId: tuple(pool.nodeIds) for pool in package.questionPools}
    policies = package.globalPolicies
    default = (
        policies.defaultCandidateCommands
        if policies and policies.defaultCandidateCommands
        else CandidateCommandPolicy()
    )
    parts: list[Part] = []
    placed: set[str] = set()
    for node_id in _reachable_order(package):
        node = nodes[node_id]
        if node.kind is NodeKind.END or node_id in placed:
            continue
        group = members.get(pool_of.get(node_id, ""), (node_id,))
        placed.update(group)
        budgets = [
            budget.maxDurationSec
            for n in group
            if (budget := nodes[n].timeBudget) is not None and budget.maxDurationSec
        ]
        parts.append(
            Part(
                number=len(parts) + 1,
                label=KIND_LABELS.get(node.kind, KIND_LABELS[NodeKind.QUESTION]),
                node_ids=group,
                budget_sec=int(max(budgets)) if budgets else None,
            )
        )
    commands: dict[str, tuple[str, ...]] = {}
    for node in package.nodes:
        policy = node.candidateCommands or default
        commands[node.nodeId] = tuple(
            envelope
            for envelope, canonical in NODE_GATED_BUTTONS
            if gate(canonical, policy).allowed
        )
    total = package.metadata.totalTimeBudgetSec
    persona = getattr(package, "persona", None)
    return ExamStructure(
        title=package.metadata.title,
        language=package.metadata.language or "en",
        examiner_name=(getattr(persona, "name", None) or gettext_lazy("The examiner")),
        total_budget_sec=int(total) if total else None,
        parts=tuple(parts),
        commands=commands,
    )


def exam_structure(session: ExamSession) -> ExamStructure:
    """The candidate-safe structure of the session's published version."""
    version = session.sitting.version
    return _structure(version.checksum, version.canonical_json)


@functools.lru_cache(maxsize=256)
def _language_tag(checksum: str, canonical_json: str) -> str:
    """``metadata.language`` of a published package ("en" when it has none), read without
    loading the whole package: the language of a page must not depend on anything else in it."""
    document = json.loads(canonical_json)
    metadata = document.get("metadata") if isinstance(document, dict) else None
    tag = metadata.get("language") if isinstance(metadata, dict) else None
    return tag if isinstance(tag, str) and tag else "en"


def page_language(session: ExamSession) -> str:
    """The language the candidate's pages of ``session`` are shown in: the exam's (its package's
    ``metadata.language``, primary subtag). A version published before languages were checked
    may carry an unsupported tag: its pages stay in the site's default language and a warning
    is logged (the runtime refuses to conduct it, see :func:`ioa.languages.exam_language`)."""
    version = session.sitting.version
    tag = _language_tag(version.checksum, version.canonical_json)
    language = supported_language(tag)
    if language is None:
        logger.warning("session %s: exam language %r is not supported", session.pk, tag)
        return settings.LANGUAGE_CODE.split("-")[0]
    return language


def language_for_path(path: str) -> str | None:
    """The page language of a candidate journey path (``/exam/<id>/…``), else None: an
    invitation link's pages speak the language of the exam it leads to."""
    try:
        match = resolve(urlsplit(path).path)
    except Resolver404:
        return None
    if match.namespace != "exam_sessions" or "session_id" not in match.kwargs:
        return None
    session = (
        ExamSession.objects.filter(pk=match.kwargs["session_id"])
        .select_related("sitting__version")
        .first()
    )
    return page_language(session) if session is not None else None


def voice_transport() -> str:
    """``smallwebrtc`` (embedded default) or ``livekit`` (``VIVA_VOICE_TRANSPORT``)."""
    value = getattr(settings, "VIVA_VOICE_TRANSPORT", None) or os.environ.get(
        "VIVA_VOICE_TRANSPORT", ""
    )
    value = str(value).strip().lower() or "smallwebrtc"
    return value if value in {"smallwebrtc", "livekit"} else "smallwebrtc"


def voice_urls(session: ExamSession) -> dict[str, str] | None:
    """The voice signalling URLs of the session, or ``None`` when voice is not served here
    (the ``voice`` URLs are not mounted)."""
    try:
        return {
            "offer": reverse("voice:webrtc-offer", kwargs={"session_id": session.pk}),
            "livekitToken": reverse("voice:livekit-token", kwargs={"session_id": session.pk}),
        }
    except NoReverseMatch:
        return None


def voice_served() -> bool:
    """Whether this deployment can carry a voice exam: SmallWebRTC needs the bot in the web
    process (``VIVA_BOT_RUNNER=inline``); LiveKit needs ``VIVA_LIVEKIT_URL`` and its keys."""
    if voice_transport() == "livekit":
        return all(
            str(getattr(settings, name, "") or os.environ.get(name, "")).strip()
            for name in ("VIVA_LIVEKIT_URL", "LIVEKIT_API_KEY", "LIVEKIT_API_SECRET")
        )
    return str(getattr(settings, "VIVA_BOT_RUNNER", "inline")).lower() == "inline"


def voice_available(session: ExamSession) -> bool:
    """Whether the candidate may choose voice: no text-mode accommodation, the voice URLs are
    mounted, the deployment can carry voice (:func:`voice_served`) and can hear the exam's
    language (:func:`voice_language_supported`)."""
    return (
        not session.text_mode_required
        and voice_urls(session) is not None
        and voice_served()
        and voice_language_supported(session)
    )


def voice_language_supported(session: ExamSession) -> bool:
    """Whether speech recognition exists for the exam's language, as the examiner bot says
    (``sessions.bot_port``; without a bot, none): a hosted STT provider hears any language; the
    offline STT has an English model only, so a German exam on it is answered in text, never
    heard as English."""
    bot = examiner_bot()
    return bot is not None and bot.hears(page_language(session))


def wait_message(wait: StartWait) -> str | None:
    """What a candidate whose examiner waits for a free worker is told (in the active
    language): every examiner busy and their place, or none running; ``None`` when a worker is
    free (an ordinary start under way: the room keeps its own words)."""
    if wait.workers == 0:
        return _(
            "No examiner is running at the moment. Please stay on this page: your exam starts "
            "by itself as soon as one is, and your time has not started. If nothing changes "
            "within a few minutes, contact your proctor or the exam support."
        )
    if not wait.full:
        return None
    if wait.position <= 1:
        return _(
            "All examiners are busy right now. You are next in the queue: your exam starts by "
            "itself as soon as an examiner is free, and your time has not started."
        )
    return _(
        "All examiners are busy right now. You are number %(position)d in the queue: your exam "
        "starts by itself as soon as an examiner is free, and your time has not started."
    ) % {"position": wait.position}


def room_config(session: ExamSession) -> dict[str, object]:
    """Everything the exam room's script needs, rendered into the page as JSON."""
    structure = exam_structure(session)
    multiplier = session.extra_time_multiplier
    return {
        "sessionId": str(session.pk),
        "socketPath": f"/ws/sessions/{session.pk}/events/",
        "mode": session.exam_mode or Mode.TEXT.value,
        "state": session.state,
        "voice": (
            {"transport": voice_transport(), **(voice_urls(session) or {})}
            if session.exam_mode == Mode.VOICE
            else None
        ),
        "doneUrl": step_url(session, Step.DONE),
        "examinerWaitUrl": reverse("exam_sessions:exam-examiner-wait", args=[session.pk]),
        "examinerName": structure.examiner_name,
        "timeMultiplier": float(multiplier),
        "totalBudgetSec": structure.scaled(structure.total_budget_sec, multiplier),
        "parts": [
            {
                "number": part.number,
                "label": part.label,
                "nodeIds": list(part.node_ids),
                "budgetSec": structure.scaled(part.budget_sec, multiplier),
            }
            for part in structure.parts
        ],
        "nodeCommands": {node: list(cmds) for node, cmds in structure.commands.items()},
        "nodeGatedCommands": [envelope for envelope, _ in NODE_GATED_BUTTONS],
    }


# --- writes ---------------------------------------------------------------------------------------


def _locked(session: ExamSession) -> ExamSession:
    return ExamSession.objects.select_for_update().get(pk=session.pk)


@transaction.atomic
def identity_confirm(*, session: ExamSession, identity: bool, consent: bool) -> ExamSession:
    """The candidate confirmed who they are and agreed to the recording notice. Both are
    required; the first confirmation is kept (a second changes nothing)."""
    if not identity or not consent:
        raise ValidationError(_("Confirm your identity and your consent to continue."))
    row = _locked(session)
    now = timezone.now()
    fields = []
    if row.identity_confirmed_at is None:
        row.identity_confirmed_at = now
        fields.append("identity_confirmed_at")
    if row.consent_given_at is None:
        row.consent_given_at = now
        row.consent_version = CONSENT_VERSION
        fields += ["consent_given_at", "consent_version"]
    if fields:
        row.save(update_fields=fields)
    return row


@transaction.atomic
def briefing_acknowledge(*, session: ExamSession) -> ExamSession:
    """The candidate has read the briefing."""
    row = _locked(session)
    if row.briefing_seen_at is None:
        row.briefing_seen_at = timezone.now()
        row.save(update_fields=["briefing_seen_at"])
    return row


@transaction.atomic
def mode_choose(*, session: ExamSession, mode: str, audio_checked: bool = False) -> ExamSession:
    """The candidate chose voice or text. Voice needs a completed microphone and speaker check
    and is refused when the candidate's accommodation is text mode or voice is not served.
    The choice can change until the exam starts."""
    row = _locked(session)
    if row.state in STARTED or row.state in TERMINAL:
        raise ValidationError(_("The exam has already started; the mode can no longer change."))
    if mode not in {m.value for m in Mode}:
        raise ValidationError(_("Choose voice or text."))
    if mode == Mode.VOICE:
        if not voice_available(row):
            raise ValidationError(_("Voice is not available for this exam; choose text."))
        if not audio_checked:
            raise ValidationError(_("Check your microphone and speakers first."))
        row.audio_checked_at = timezone.now()
    row.exam_mode = mode
    row.save(update_fields=["exam_mode", "audio_checked_at"])
    return row


def _multiplier(value: Decimal | float | str | int) -> Decimal:
    try:
        number = Decimal(str(value)).quantize(Decimal("0.01"))
    except InvalidOperation:
        raise ValidationError(f"{value!r} is not a number") from None
    if not MIN_TIME_MULTIPLIER <= number <= MAX_TIME_MULTIPLIER:
        raise ValidationError(
            f"the extra time multiplier must be between {MIN_TIME_MULTIPLIER} and "
            f"{MAX_TIME_MULTIPLIER}"
        )
    return number


@transaction.atomic
def accommodations_set(
    *,
    session: ExamSession,
    extra_time_multiplier: Decimal | float | str | None = None,
    text_mode_required: bool | None = None,
    slower_speech: bool | None = None,
) -> ExamSession:
    """Set a candidate's accommodations (staff: the proctor scheduling UI, the admin).
    Arguments left ``None`` keep their value. Refused once the exam has started: the runtime
    has taken its budgets by then."""
    row = _locked(session)
    if row.state in STARTED or row.state in TERMINAL:
        raise ValidationError(_("Accommodations cannot change once the exam has started."))
    fields: list[str] = []
    if extra_time_multiplier is not None:
        row.extra_time_multiplier = _multiplier(extra_time_multiplier)
        fields.append("extra_time_multiplier")
    if text_mode_required is not None:
        row.text_mode_required = bool(text_mode_required)
        fields.append("text_mode_required")
        if row.text_mode_required and row.exam_mode == Mode.VOICE:
            row.exam_mode = ""  # the candidate chooses again (text only now)
            fields.append("exam_mode")
    if slower_speech is not None:
        row.slower_speech = bool(slower_speech)
        fields.append("slower_speech")
    if fields:
        row.save(update_fields=fields)
    return row


# --- the bot --------------------------------------------------------------------------------------


def bot_started_by_page(session: ExamSession) -> bool:
    """Whether the journey pages start the bot (text mode, LiveKit voice); over SmallWebRTC the
    browser's WebRTC offer starts it (``bot.webrtc_views``)."""
    return session.exam_mode == Mode.TEXT or (
        session.exam_mode == Mode.VOICE and voice_transport() == "livekit"
    )


def bot_request_start(session: ExamSession) -> bool:
    """Ask for the session's examiner bot (text mode; idempotent: a live bot is left alone)
    through ``sessions.bot_port``. Voice over SmallWebRTC starts its bot from the WebRTC offer
    instead. Returns whether a start was requested; ``False`` when no bot is registered or it
    refused (logged)."""
    if session.state in TERMINAL:
        return False
    bot = examiner_bot()
    if bot is None:
        logger.warning(
            "no examiner bot is registered (sessions.bot_port); session %s waits", session.pk
        )
        return False
    try:
        bot.start(session=session)
    except Exception as exc:
        if is_outage(exc):
            # Redis or the broker is down (reported within seconds, issue #33): the page answers
            # 503 with its clear message (web.unavailable); the start stays claimable.
            raise
        logger.exception("starting the bot of session %s failed", session.pk)
        return False
    return True


def steps_done(session: ExamSession) -> Iterable[Step]:
    """Steps before ``next_step`` (for the progress list of the journey pages)."""
    order = list(Step)
    current = next_step(session)
    return order[: order.index(current)]
