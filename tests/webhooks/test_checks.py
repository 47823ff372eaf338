"""``check --deploy`` warns when server-side fetches may reach internal addresses."""

from __future__ import annotations

from typing import Any

from django.core.checks.registry import registry

from webhooks.checks import check_private_webhook_targets


def test_the_allowance_is_warned_about_in_a_deployment(settings: Any) -> None:
    assert check_private_webhook_targets in registry.get_checks(include_deployment_checks=True)
    assert check_private_webhook_targets not in registry.get_checks()  # deploy only
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    assert check_private_webhook_targets() == []
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    (warning,) = check_private_webhook_targets()
    assert warning.id == "viva.W030" and warning.level == 30  # WARNING: fail-level ERROR passes
