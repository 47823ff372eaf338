"""Proctoring endpoints under /api/v1/: a candidate's invitation link, sittings (scheduling,
candidates, CSV import, invitations, the live overview) and sessions (detail, accommodations,
timeline, transcript, evidence ledger, interceptions, proctor actions).
Everything the dashboard shows is here.

Thin views: input and output serializers nested in each view, reads through the selectors
(``Sitting.objects.visible_to``, ``proctoring.actions.session_for_proctor``: other people's
sittings and sessions answer 404), writes through ``sessions.scheduling`` and
``proctoring.actions``. The area is ``proctor``: candidates get 403, anonymous requests 401.

``POST /sessions/<id>/actions/`` honours an ``Idempotency-Key`` header: repeating it returns
the first request's answer (``Idempotent-Replayed: true``), reusing it for another action is
a 409 ``idempotency_conflict``. Answers: 201 carried out (or recorded); 409
``bot_unavailable`` (no bot runs: nothing was sent), ``not_applicable`` (the bot says it does
not apply now), ``session_over``; 400 ``invalid``; 504 ``bot_timeout`` (sent, unconfirmed).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import timedelta

from django.core.exceptions import ValidationError
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import AreaPermission, signed_in_user
from accounts.api.serializers import UserRefSerializer
from accounts.models import User
from accounts.roles import Area
from accounts.services import candidate_get_or_create, invitation_create
from proctoring import actions, overview, session_detail
from publishing.models import PublishedVersion
from sessions import scheduling, services
from sessions.costs import costs_of
from sessions.models import ExamSession, ProctorActionRequest, Sitting
from sessions.selectors import candidate_invitable_by
from web.api.pagination import StandardPagination
from web.api.parsers import BoundedJSONParser
from web.api.schema import ErrorSerializer

ACTION_HTTP = {
    "applied": status.HTTP_201_CREATED,
    "recorded": status.HTTP_201_CREATED,
    "ignored": status.HTTP_409_CONFLICT,
    "unconfirmed": status.HTTP_504_GATEWAY_TIMEOUT,
}
REFUSED_HTTP = {"invalid": status.HTTP_400_BAD_REQUEST, "bot_failed": status.HTTP_502_BAD_GATEWAY}


def _sitting(request: Request, sitting_id: uuid.UUID | str) -> Sitting:
    sitting = Sitting.objects.visible_to(request.user).filter(pk=sitting_id).first()
    if sitting is None:
        raise NotFound("No such sitting.")
    return sitting


def _session(request: Request, session_id: uuid.UUID) -> ExamSession:
    session = actions.session_for_proctor(user=request.user, session_id=session_id)
    if session is None:
        raise NotFound("No such session.")
    return session


def _error(code: str, message: str, http: int, **details: object) -> Response:
    return Response({"error": {"code": code, "message": message, "details": details}}, status=http)


class SittingSerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    versionId = serializers.UUIDField(source="version_id")
    assessment = serializers.CharField(source="version.title")
    createdBy = UserRefSerializer(source="created_by")
    createdAt = serializers.DateTimeField(source="created_at")
    scheduledFor = serializers.DateTimeField(source="scheduled_for", allow_null=True)
    startCutoffAt = serializers.DateTimeField(source="start_cutoff_at", allow_null=True)
    proctorAuthorisesStart = serializers.BooleanField(source="proctor_authorises_start")
    isPreview = serializers.BooleanField(source="is_preview")
    isPractice = serializers.BooleanField(source="is_practice")
    proctors = serializers.SerializerMethodField()
    candidates = serializers.SerializerMethodField()

    def get_proctors(self, sitting: Sitting) -> list[str]:
        return [u.username for u in sitting.proctors.all()]

    def get_candidates(self, sitting: Sitting) -> int:
        return sitting.sessions.values("candidate").distinct().count()


class SittingListApi(APIView):
    """Sittings you may see (GET), or schedule one from a published version (POST)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="SittingCreateInput")
    class InputSerializer(serializers.Serializer[object]):
        versionId = serializers.UUIDField()
        title = serializers.CharField(required=False, allow_blank=True, max_length=300)
        proctorAuthorisesStart = serializers.BooleanField(required=False, default=False)
        scheduledFor = serializers.DateTimeField(required=False, allow_null=True)
        startCutoffAt = serializers.DateTimeField(required=False, allow_null=True)
        isPractice = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Practice: unlimited attempts, feedback after each, never marked.",
        )

    pagination_class = StandardPagination

    @extend_schema(responses=SittingSerializer(many=True))
    def get(self, request: Request) -> Response:
        qs = (
            Sitting.objects.visible_to(request.user)
            .select_related("version", "created_by")
            .prefetch_related("proctors")
            .order_by("-created_at")
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, self)
        return paginator.get_paginated_response(SittingSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: SittingSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        version = (
            PublishedVersion.objects.visible_to(request.user)
            .filter(pk=data.validated_data["versionId"])
            .first()
        )
        if version is None:
            raise serializers.ValidationError({"versionId": ["No such published assessment."]})
        sitting = services.sitting_create(
            user=signed_in_user(request),
            version=version,
            title=data.validated_data.get("title", ""),
            proctor_authorises_start=data.validated_data["proctorAuthorisesStart"],
            scheduled_for=data.validated_data.get("scheduledFor"),
            start_cutoff_at=data.validated_data.get("startCutoffAt"),
            is_practice=data.validated_data["isPractice"],
        )
        return Response(SittingSerializer(sitting).data, status=status.HTTP_201_CREATED)


class SittingProviderCostSerializer(serializers.Serializer[object]):
    """The cost of one component, provider and model (``sessions.costs.ProviderCost``)."""

    component = serializers.ChoiceField(choices=["llm", "stt", "tts"])
    provider = serializers.CharField()
    model = serializers.CharField()
    cost = serializers.DecimalField(max_digits=16, decimal_places=4)
    priced = serializers.BooleanField()


class SittingCostSerializer(serializers.Serializer[object]):
    """The cost of a sitting's exams in one currency (``sessions.costs.ExamCost.as_json``)."""

    currency = serializers.CharField()
    exams = serializers.IntegerField()
    examsWithUsage = serializers.IntegerField()
    total = serializers.DecimalField(max_digits=16, decimal_places=4)
    perExam = serializers.DecimalField(max_digits=16, decimal_places=4)
    byComponent = serializers.DictField(
        child=serializers.DecimalField(max_digits=16, decimal_places=4)
    )
    byProvider = SittingProviderCostSerializer(many=True)
    unpriced = serializers.ListField(child=serializers.CharField())
    complete = serializers.BooleanField()


class SittingDetailSerializer(SittingSerializer):
    """One sitting, with what its exams cost so far (``sessions.costs``; one entry per
    currency, amounts as decimal strings, ``unpriced`` usage flagged)."""

    costs = serializers.SerializerMethodField()

    @extend_schema_field(SittingCostSerializer(many=True))
    def get_costs(self, sitting: Sitting) -> list[dict[str, object]]:
        session_ids = sitting.sessions.values_list("pk", flat=True)
        return [cost.as_json() for cost in costs_of(session_ids)]


class SittingDetailApi(APIView):
    """One sitting, with the cost of its exams."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema(responses=SittingDetailSerializer)
    def get(self, request: Request, sitting_id: uuid.UUID) -> Response:
        return Response(SittingDetailSerializer(_sitting(request, sitting_id)).data)


class OverviewApi(APIView):
    """The live overview of a sitting: one row per candidate (the socket
    ``ws/proctor/sittings/<id>/`` streams the same rows as they change) and recent alerts."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema(responses=dict)
    def get(self, request: Request, sitting_id: uuid.UUID) -> Response:
        sitting = _sitting(request, sitting_id)
        rows, alerts = overview.sitting_snapshot(sitting)
        return Response({"sittingId": str(sitting.pk), "rows": rows, "alerts": alerts})


class CandidateAddApi(APIView):
    """Add one candidate to a sitting (the account is created on first use of the email)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="CandidateAddInput")
    class InputSerializer(serializers.Serializer[object]):
        email = serializers.EmailField()
        displayName = serializers.CharField(required=False, allow_blank=True, max_length=150)
        extraTimeMultiplier = serializers.DecimalField(
            max_digits=3, decimal_places=2, required=False, min_value=1, max_value=3
        )
        textModeRequired = serializers.BooleanField(required=False)
        slowerSpeech = serializers.BooleanField(required=False)

    @extend_schema(request=InputSerializer, responses={201: dict})
    def post(self, request: Request, sitting_id: uuid.UUID) -> Response:
        sitting = _sitting(request, sitting_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        session = services.candidate_add(
            sitting=sitting,
            email=values["email"],
            display_name=values.get("displayName", ""),
            extra_time_multiplier=values.get("extraTimeMultiplier"),
            text_mode_required=values.get("textModeRequired"),
            slower_speech=values.get("slowerSpeech"),
        )
        return Response(SessionDetailApi.body(session), status=status.HTTP_201_CREATED)


class ImportRowSerializer(serializers.Serializer[object]):
    line = serializers.IntegerField()
    email = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["added", "skipped", "error"])
    messages = serializers.ListField(child=serializers.CharField())
    sessionId = serializers.CharField(allow_null=True)


@extend_schema_serializer(component_name="CandidateImportReport")
class ImportReportSerializer(serializers.Serializer[object]):
    added = serializers.IntegerField()
    skipped = serializers.IntegerField()
    # Named like Serializer.errors: DRF's metaclass moves declared fields off the class.
    errors = serializers.IntegerField()  # type: ignore[assignment]
    problems = serializers.ListField(child=serializers.CharField())
    rows = ImportRowSerializer(many=True)


class CandidateImportApi(APIView):
    """Add candidates from a CSV file (multipart ``file``, or a ``csv`` text field): a report
    per row (``added``, ``skipped``, ``error`` with messages). Columns: ``email`` (required),
    ``name``, ``extra_time``, ``text_mode``, ``slower_speech``."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]
    parser_classes = [MultiPartParser, FormParser, BoundedJSONParser]

    @extend_schema_serializer(component_name="CandidateImport")
    class InputSerializer(serializers.Serializer[object]):
        file = serializers.FileField(
            required=False, allow_empty_file=True, help_text="A CSV file (multipart)."
        )
        csv = serializers.CharField(
            required=False, allow_blank=True, trim_whitespace=False, help_text="The CSV as text."
        )

    @extend_schema(
        request=InputSerializer,
        responses={
            200: ImportReportSerializer,
            400: PolymorphicProxySerializer(
                component_name="CandidateImportRefusal",
                serializers=[ErrorSerializer, ImportReportSerializer],
                resource_type_field_name=None,
            ),
        },
    )
    def post(self, request: Request, sitting_id: uuid.UUID) -> Response:
        sitting = _sitting(request, sitting_id)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)  # ``csv`` must be text, ``file`` a file
        upload = given.validated_data.get("file")
        data = upload.read() if upload is not None else given.validated_data.get("csv")
        if not data:
            raise serializers.ValidationError({"file": ["Upload a CSV file."]})
        report = services.candidates_import(sitting=sitting, data=data)
        body = {
            "added": report.count("added"),
            "skipped": report.count("skipped"),
            "errors": report.count("error"),
            "problems": report.problems,
            "rows": [
                {
                    "line": r.line,
                    "email": r.email,
                    "outcome": r.outcome,
                    "messages": r.messages,
                    "sessionId": r.session_id,
                }
                for r in report.rows
            ],
        }
        http = status.HTTP_400_BAD_REQUEST if report.problems and not report.rows else 200
        return Response(body, status=http)


class InvitationSendApi(APIView):
    """Issue invitation links (landing on ``/exam/<session id>/``) for the given sessions, or
    every session of the sitting that is not over; earlier unused links are revoked."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="InvitationSendInput")
    class InputSerializer(serializers.Serializer[object]):
        sessionIds = serializers.ListField(child=serializers.UUIDField(), required=False)
        ttlHours = serializers.IntegerField(required=False, min_value=1, max_value=24 * 60)

    @extend_schema(request=InputSerializer, responses={201: dict})
    def post(self, request: Request, sitting_id: uuid.UUID) -> Response:
        sitting = _sitting(request, sitting_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = data.validated_data.get("sessionIds")
        chosen = None
        if ids is not None:
            chosen = list(ExamSession.objects.filter(sitting=sitting, pk__in=ids))
            if len(chosen) != len(set(ids)):
                raise NotFound("No such session in this sitting.")
        hours = data.validated_data.get("ttlHours")
        sent = services.invitations_send(
            sitting=sitting,
            user=signed_in_user(request),
            sessions=chosen,
            ttl=timedelta(hours=hours) if hours else None,
        )
        return Response(
            {
                "invitations": [
                    {
                        "sessionId": str(s.session.pk),
                        "candidate": s.session.candidate.username,
                        "url": s.url,
                        "expiresAt": s.expires_at,
                        "emailed": s.emailed,
                    }
                    for s in sent
                ]
            },
            status=status.HTTP_201_CREATED,
        )


class SessionListApi(APIView):
    """Sessions you may steer, as overview rows (``?sitting=<id>``, ``?status=``)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    pagination_class = StandardPagination

    @extend_schema(
        parameters=[OpenApiParameter("sitting", str), OpenApiParameter("status", str)],
        responses=serializers.ListSerializer(child=serializers.DictField()),
    )
    def get(self, request: Request) -> Response:
        qs = actions.proctorable_sessions(user=request.user).select_related("candidate")
        sitting = request.query_params.get("sitting")
        if sitting:
            qs = qs.filter(sitting=_sitting(request, sitting))
        rows = overview.session_rows(list(qs.order_by("created_at")))
        wanted = request.query_params.get("status")
        if wanted:
            rows = [r for r in rows if r["status"] == wanted]
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, self)
        return paginator.get_paginated_response(page)


class SessionDetailApi(APIView):
    """One session: its overview row, accommodations and invitation."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @staticmethod
    def body(session: ExamSession) -> dict[str, object]:
        session = ExamSession.objects.select_related("candidate", "invitation").get(pk=session.pk)
        (row,) = overview.session_rows([session])
        return {
            **row,
            "sittingId": str(session.sitting_id),
            "invitation": scheduling.invitation_state(session),
            "invitedAt": session.invited_at,
            "examMode": session.exam_mode or None,
            "costs": [cost.as_json() for cost in costs_of([session.pk])],
        }

    @extend_schema(responses=dict)
    def get(self, request: Request, session_id: uuid.UUID) -> Response:
        return Response(self.body(_session(request, session_id)))


class AccommodationsApi(APIView):
    """Set a candidate's accommodations (before the exam starts; 409 afterwards)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="AccommodationsInput")
    class InputSerializer(serializers.Serializer[object]):
        extraTimeMultiplier = serializers.DecimalField(
            max_digits=3, decimal_places=2, required=False, min_value=1, max_value=3
        )
        textModeRequired = serializers.BooleanField(required=False)
        slowerSpeech = serializers.BooleanField(required=False)

    @extend_schema(
        request=InputSerializer,
        responses={200: dict, 409: OpenApiResponse(description="the exam has started")},
    )
    def patch(self, request: Request, session_id: uuid.UUID) -> Response:
        session = _session(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            services.accommodations_set(
                session=session,
                extra_time_multiplier=values.get("extraTimeMultiplier"),
                text_mode_required=values.get("textModeRequired"),
                slower_speech=values.get("slowerSpeech"),
            )
        except ValidationError as error:
            return _error("session_started", " ".join(error.messages), status.HTTP_409_CONFLICT)
        return Response(SessionDetailApi.body(session))


class _SessionReadApi(APIView):
    """A read-only part of a session the proctor view shows, as ``{"sessionId", ...part}``."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    def part(self, session: ExamSession) -> Mapping[str, object]:
        raise NotImplementedError

    @extend_schema(responses=dict)
    def get(self, request: Request, session_id: uuid.UUID) -> Response:
        session = _session(request, session_id)
        return Response({"sessionId": str(session.pk), **self.part(session)})


class TimelineApi(_SessionReadApi):
    """The session's stored events (proctor view) grouped by ``correlationId``."""

    def part(self, session: ExamSession) -> Mapping[str, object]:
        return {"groups": session_detail.timeline(session)}


class TranscriptApi(_SessionReadApi):
    """Both speakers' final words, in order."""

    def part(self, session: ExamSession) -> Mapping[str, object]:
        return {"turns": session_detail.transcript(session)}


class LedgerApi(_SessionReadApi):
    """The evidence ledger per node and evidence target (proctor-only)."""

    def part(self, session: ExamSession) -> Mapping[str, object]:
        return {"nodes": session_detail.ledger(session)}


class InterceptionsApi(_SessionReadApi):
    """Guardrail interceptions (original and replacement text) and recoveries."""

    def part(self, session: ExamSession) -> Mapping[str, object]:
        return session_detail.interceptions(session)


class ActionRequestSerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    action = serializers.CharField()
    params = serializers.JSONField()
    reason = serializers.CharField()
    proctor = UserRefSerializer()
    status = serializers.CharField()
    code = serializers.CharField()
    message = serializers.CharField()
    eventIds = serializers.ListField(source="event_ids", child=serializers.CharField())
    createdAt = serializers.DateTimeField(source="created_at")
    answeredAt = serializers.DateTimeField(source="answered_at", allow_null=True)


class ActionApi(APIView):
    """The proctor requests of a session (GET), or one action (POST; module docstring)."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="ProctorActionInput")
    class InputSerializer(serializers.Serializer[object]):
        action = serializers.ChoiceField(choices=[a.value for a in actions.Action])
        reason = serializers.CharField(max_length=actions.MAX_REASON)
        seconds = serializers.IntegerField(
            required=False, min_value=1, max_value=actions.MAX_EXTENSION_SECONDS
        )
        scope = serializers.ChoiceField(choices=actions.SCOPES, required=False)
        mode = serializers.ChoiceField(choices=actions.MODES, required=False)
        text = serializers.CharField(required=False, max_length=actions.MAX_INSTRUCTION)
        category = serializers.ChoiceField(choices=actions.CATEGORIES, required=False)

    @extend_schema(responses=ActionRequestSerializer(many=True))
    def get(self, request: Request, session_id: uuid.UUID) -> Response:
        session = _session(request, session_id)
        return Response(ActionRequestSerializer(actions.requests_for(session), many=True).data)

    @extend_schema(
        request=InputSerializer,
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER)],
        responses={
            201: ActionRequestSerializer,
            400: ErrorSerializer,
            409: OpenApiResponse(
                ErrorSerializer,
                description="bot_unavailable, not_applicable, session_over or "
                "idempotency_conflict; details.request is the stored request",
            ),
            502: ErrorSerializer,
            504: ErrorSerializer,
        },
    )
    def post(self, request: Request, session_id: uuid.UUID) -> Response:
        session = _session(request, session_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            outcome = actions.action_perform(
                session=session,
                user=signed_in_user(request),
                idempotency_key=request.headers.get("Idempotency-Key", ""),
                **data.validated_data,
            )
        except actions.ActionInvalid as refused:
            return _error(
                "invalid",
                refused.message,
                status.HTTP_400_BAD_REQUEST,
                **{refused.field: [refused.message]},
            )
        except actions.IdempotencyConflict as conflict:
            return _error(
                "idempotency_conflict",
                str(conflict),
                status.HTTP_409_CONFLICT,
                requestId=str(conflict.request.pk),
            )
        return action_response(outcome)


def action_response(outcome: actions.ActionOutcome) -> Response:
    """The HTTP answer for an action's outcome (the same for a replayed idempotency key)."""
    request: ProctorActionRequest = outcome.request
    body = ActionRequestSerializer(request).data
    if request.status == ProctorActionRequest.Status.REFUSED:
        http = REFUSED_HTTP.get(request.code, status.HTTP_409_CONFLICT)
    else:
        http = ACTION_HTTP.get(request.status, status.HTTP_202_ACCEPTED)
    if http >= 400:
        response = _error(request.code or request.status, request.message, http, request=body)
    else:
        response = Response(body, status=http)
    if outcome.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


class InvitationCreateApi(APIView):
    """Issues a single-use invitation link for a candidate (created on first use of the email).

    An existing candidate must be visible to the caller (``candidate_invitable_by``: a session
    they may see, or an earlier invitation of theirs); anyone else's answers 404 and nothing is
    issued, so no one signs in as a candidate they do not supervise."""

    area = Area.PROCTOR
    permission_classes = [AreaPermission]

    @extend_schema_serializer(component_name="InvitationCreate")
    class InputSerializer(serializers.Serializer[object]):
        email = serializers.EmailField()
        displayName = serializers.CharField(required=False, allow_blank=True, max_length=150)
        ttlHours = serializers.IntegerField(required=False, min_value=1, max_value=24 * 60)
        nextPath = serializers.RegexField(r"^/[^\s]*$", required=False, allow_blank=True)

    @extend_schema_serializer(component_name="Invitation")
    class OutputSerializer(serializers.Serializer[object]):
        id = serializers.UUIDField()
        candidate = serializers.CharField()
        url = serializers.URLField()
        expiresAt = serializers.DateTimeField()

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        email = data.validated_data["email"].strip().lower()
        existing = User.objects.filter(username=email).first()
        if existing is not None and not candidate_invitable_by(
            user=request.user, candidate=existing
        ):
            raise NotFound()
        try:
            candidate = candidate_get_or_create(
                email=data.validated_data["email"],
                display_name=data.validated_data.get("displayName", ""),
            )
        except ValueError as exc:
            raise serializers.ValidationError({"email": [str(exc)]}) from exc
        ttl_hours = data.validated_data.get("ttlHours")
        issued = invitation_create(
            candidate=candidate,
            created_by=signed_in_user(request),
            ttl=timedelta(hours=ttl_hours) if ttl_hours else None,
            next_path=data.validated_data.get("nextPath", ""),
        )
        out = {
            "id": issued.invitation.id,
            "candidate": candidate.username,
            "url": issued.url,
            "expiresAt": issued.invitation.expires_at,
        }
        return Response(self.OutputSerializer(out).data, status=status.HTTP_201_CREATED)
