"""Admin: who runs each session's bot, and what each exam cost (read-only)."""

from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.utils.html import format_html

from bot.models import BotLease, BotUsage


class _ReadOnly[M: Model](admin.ModelAdmin[M]):
    def get_readonly_fields(self, request: HttpRequest, obj: M | None = None) -> list[str]:
        return [f.name for f in self.model._meta.fields] + list(self.readonly_extra)

    readonly_extra: tuple[str, ...] = ()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False


@admin.register(BotLease)
class BotLeaseAdmin(_ReadOnly[BotLease]):
    list_display = (
        "session",
        "state",
        "runner",
        "provider",
        "generation",
        "restarts",
        "heartbeat_at",
        "expires_at",
        "bot_ready_ms",
    )
    list_filter = ("state", "runner", "provider")
    search_fields = ("session__id", "holder")
    ordering = ("-requested_at",)


@admin.register(BotUsage)
class BotUsageAdmin(_ReadOnly[BotUsage]):
    """What each exam cost: provider usage priced with ``VIVA_PRICING``."""

    list_display = (
        "session",
        "exam_cost",
        "llm_input_tokens",
        "llm_output_tokens",
        "stt_seconds",
        "tts_characters",
        "updated_at",
    )
    search_fields = ("session__id",)
    ordering = ("-updated_at",)
    readonly_extra = ("cost_breakdown",)

    @admin.display(description="cost", ordering="cost")
    def exam_cost(self, obj: BotUsage) -> str:
        flag = " (incomplete: unpriced usage)" if obj.unpriced else ""
        return f"{obj.cost} {obj.currency}{flag}"

    @admin.display(description="breakdown")
    def cost_breakdown(self, obj: BotUsage) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.breakdown, indent=2, sort_keys=True))
