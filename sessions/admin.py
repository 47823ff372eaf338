"""Admin registrations. Stored events, processed commands, proctor action requests and
erasure records are read-only; a session's log head (``last_seq``, ``head_hash``) is never
edited by hand. Two actions on sessions pseudonymise personal data (``sessions.erasure``,
docs/privacy.md): the selected sessions', or their candidates' (every session and the account);
both need a reason, typed beside the action menu. Outbox messages (``sessions.outbox``) are
read-only; "Send again" makes dead (or waiting) ones due at once with fresh attempts."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from accounts.models import User
from sessions import outbox
from sessions.erasure import ErasureRefused, erase_candidate, erase_session
from sessions.models import (
    ExamSession,
    OutboxMessage,
    PersonalDataErasure,
    ProcessedCommand,
    ProctorActionRequest,
    SessionEvent,
    Sitting,
)


class ReadOnlyAdmin[M: Model](admin.ModelAdmin[M]):
    def get_readonly_fields(self, request: HttpRequest, obj: M | None = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False


@admin.register(Sitting)
class SittingAdmin(admin.ModelAdmin[Sitting]):
    list_display = ("title", "version", "created_by", "created_at", "is_practice", "is_preview")
    list_filter = ("is_practice", "is_preview")
    search_fields = ("title",)
    filter_horizontal = ("proctors",)
    list_select_related = ("version", "created_by")
    raw_id_fields = ("version", "created_by")


class ErasureActionForm(helpers.ActionForm):
    reason = forms.CharField(
        required=False,
        max_length=500,
        label="Reason (erasure)",
        help_text="Why personal data is erased (e.g. the candidate's request of 2026-05-01).",
    )


def _reason(admin_site: admin.ModelAdmin[ExamSession], request: HttpRequest) -> str | None:
    reason = str(request.POST.get("reason", "")).strip()
    if not reason:
        admin_site.message_user(
            request, "Nothing erased: give a reason for the erasure.", messages.ERROR
        )
        return None
    return reason


def _report(
    admin_site: admin.ModelAdmin[ExamSession], request: HttpRequest, done: int, refused: list[str]
) -> None:
    if done:
        admin_site.message_user(request, f"Personal data erased: {done}.", messages.SUCCESS)
    for problem in refused:
        admin_site.message_user(request, f"Not erased: {problem}", messages.ERROR)


@admin.action(description="Erase personal data of the selected sessions", permissions=["erase"])
def erase_sessions(
    admin_site: admin.ModelAdmin[ExamSession], request: HttpRequest, queryset: QuerySet[ExamSession]
) -> None:
    reason = _reason(admin_site, request)
    if reason is None:
        return
    done, refused = 0, list[str]()
    for session in queryset.order_by("created_at"):
        try:
            erase_session(
                session=session,
                kind=PersonalDataErasure.Kind.REQUEST,
                requested_by=request.user,  # type: ignore[arg-type]
                reason=reason,
            )
            done += 1
        except ErasureRefused as exc:
            refused.append(str(exc))
    _report(admin_site, request, done, refused)


@admin.action(
    description="Erase the selected sessions' candidates (every session and the account)",
    permissions=["erase"],
)
def erase_candidates(
    admin_site: admin.ModelAdmin[ExamSession], request: HttpRequest, queryset: QuerySet[ExamSession]
) -> None:
    reason = _reason(admin_site, request)
    if reason is None:
        return
    done, refused = 0, list[str]()
    for candidate in User.objects.filter(pk__in=queryset.values("candidate")).order_by("pk"):
        label = candidate.username
        try:
            erase_candidate(
                candidate=candidate,
                requested_by=request.user,  # type: ignore[arg-type]
                reason=reason,
            )
            done += 1
        except ErasureRefused as exc:
            refused.append(f"{label}: {exc}")
    _report(admin_site, request, done, refused)


@admin.register(ExamSession)
class ExamSessionAdmin(admin.ModelAdmin[ExamSession]):
    list_display = (
        "id",
        "sitting",
        "candidate",
        "state",
        "last_seq",
        "updated_at",
        "erased_at",
        "is_preview",
    )
    list_filter = ("is_preview", "state")
    action_form = ErasureActionForm
    actions = [erase_sessions, erase_candidates]
    search_fields = ("id", "candidate__username")
    list_select_related = ("sitting", "candidate")
    raw_id_fields = ("sitting", "candidate")
    readonly_fields = (
        "id",
        "state",
        "last_seq",
        "head_hash",
        "created_at",
        "updated_at",
        "is_preview",
        "chain_version",
        "erased_at",
    )

    def has_erase_permission(self, request: HttpRequest) -> bool:
        return getattr(request.user, "role", None) == "admin"


@admin.register(SessionEvent)
class SessionEventAdmin(ReadOnlyAdmin[SessionEvent]):
    list_display = ("session", "seq", "type", "timestamp", "source", "correlation_id")
    list_filter = ("type", "source")
    search_fields = ("session__id", "event_id", "correlation_id")
    ordering = ("session", "seq")


@admin.register(ProcessedCommand)
class ProcessedCommandAdmin(ReadOnlyAdmin[ProcessedCommand]):
    list_display = ("session", "command_id", "command_type", "outcome", "received_at")
    list_filter = ("outcome", "command_type")
    search_fields = ("session__id", "command_id")


@admin.register(ProctorActionRequest)
class ProctorActionRequestAdmin(ReadOnlyAdmin[ProctorActionRequest]):
    """Every proctor action as requested, with its outcome (the events are the record)."""

    list_display = ("created_at", "session", "proctor", "action", "status", "code")
    list_filter = ("action", "status")
    search_fields = ("session__id", "proctor__username", "reason", "idempotency_key")
    list_select_related = ("session", "proctor")


@admin.register(PersonalDataErasure)
class PersonalDataErasureAdmin(ReadOnlyAdmin[PersonalDataErasure]):
    """Every erasure of personal data: who asked, when, why, what was done."""

    list_display = ("created_at", "session", "kind", "requested_by", "reason")
    list_filter = ("kind",)
    search_fields = ("session__id", "reason")
    list_select_related = ("requested_by",)


@admin.action(description="Send the selected messages again", permissions=["send_again"])
def send_again(
    admin_site: admin.ModelAdmin[OutboxMessage],
    request: HttpRequest,
    queryset: QuerySet[OutboxMessage],
) -> None:
    count = outbox.send_again(message_ids=queryset.values_list("pk", flat=True))
    admin_site.message_user(
        request,
        f"{count} message(s) due again; the relay (relay_outbox) delivers them.",
        messages.SUCCESS,
    )


@admin.register(OutboxMessage)
class OutboxMessageAdmin(ReadOnlyAdmin[OutboxMessage]):
    """The side effects of stored facts (marking, grade posts, webhooks): pending, delivered or
    dead with the last error (docs/operations.md "Side effects")."""

    list_display = ("id", "topic", "key", "status", "attempts", "next_attempt_at", "last_error")
    list_filter = ("status", "topic")
    search_fields = ("key", "last_error")
    actions = [send_again]

    def has_send_again_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)
