"""The webhooks app's deploy check: a production that lets webhooks reach internal addresses
says so (``manage.py check --deploy`` warns; it does not fail, since a deployment whose
integrators sit on its own network may mean it)."""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def check_private_webhook_targets(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """Warn (viva.W030) when VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES is on."""
    if not getattr(settings, "VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False):
        return []
    return [
        checks.Warning(
            "Webhooks may be sent to loopback, private and link-local addresses "
            "(VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES is on): an admin's endpoint can reach "
            "services inside the network, cloud metadata included.",
            hint="Unset VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES unless your integrators are on "
            "this network (docs/webhooks.md).",
            id="viva.W030",
        )
    ]
