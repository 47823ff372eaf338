"""The webhooks app's deploy check: a production that lets server-side fetches (webhooks first
of all) reach internal addresses says so (``manage.py check --deploy`` warns; it does not fail,
since a deployment whose integrators sit on its own network may mean it)."""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def check_private_webhook_targets(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """Warn (viva.W030) when VIVA_OUTBOUND_ALLOWED_NETWORKS lists any network."""
    if not getattr(settings, "VIVA_OUTBOUND_ALLOWED_NETWORKS", []):
        return []
    return [
        checks.Warning(
            "Webhooks, LTI and single sign-on may reach the non-public networks in "
            "VIVA_OUTBOUND_ALLOWED_NETWORKS: an admin's endpoint or an LMS's URL can reach "
            "services inside them.",
            hint="Unset VIVA_OUTBOUND_ALLOWED_NETWORKS (and VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES) "
            "unless your integrators are on these networks (docs/security.md).",
            id="viva.W030",
        )
    ]
