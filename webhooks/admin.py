"""Admins manage webhook endpoints and read the delivery log in the admin console."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.access import signed_in_user
from web.outbound import AddressRefused, check_literal_host
from webhooks import tasks
from webhooks.events import WebhookEvent
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


class WebhookEndpointForm(forms.ModelForm):  # type: ignore[type-arg]
    events = forms.MultipleChoiceField(
        choices=WebhookEvent.choices, widget=forms.CheckboxSelectMultiple, required=True
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["name", "url", "events", "active", "secret"]

    def clean_url(self) -> str:
        url = str(self.cleaned_data["url"])
        try:
            check_literal_host(url)
        except AddressRefused as refused:
            raise forms.ValidationError(str(refused)) from refused
        return url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    form = WebhookEndpointForm
    list_display = ("name", "url", "active", "created_at")
    list_filter = ("active",)
    search_fields = ("name", "url")

    def save_model(
        self, request: HttpRequest, obj: WebhookEndpoint, form: object, change: bool
    ) -> None:
        if not change:
            obj.created_by = signed_in_user(request)
        super().save_model(request, obj, form, change)


class WebhookAttemptInline(admin.TabularInline):  # type: ignore[type-arg]
    model = WebhookAttempt
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "number",
        "started_at",
        "status_code",
        "latency_ms",
        "error",
        "response_excerpt",
        "next_attempt_at",
    )

    def has_add_permission(self, request: HttpRequest, obj: WebhookDelivery | None = None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = (
        "id",
        "event",
        "endpoint",
        "status",
        "attempts",
        "created_at",
        "next_attempt_at",
    )
    list_filter = ("status", "event", "endpoint")
    search_fields = ("id", "event_key")
    readonly_fields = (
        "id",
        "endpoint",
        "event",
        "event_key",
        "body",
        "created_at",
        "status",
        "attempts",
        "next_attempt_at",
        "delivered_at",
    )
    inlines = [WebhookAttemptInline]
    actions = ["send_again"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Send the selected failed deliveries again (same webhook-id)")
    def send_again(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        for delivery in queryset.filter(status=WebhookDelivery.Status.FAILED):
            delivery.status = WebhookDelivery.Status.PENDING
            delivery.save(update_fields=["status"])
            tasks.deliver.delay_on_commit(delivery.pk, delivery.attempts + 1)
