"""Webhooks pass the shared outbound guard (web/outbound.py): the admin refuses an internal or
non-http URL on saving, and a delivery never reaches an internal address, whatever its
spelling (a real receiver on 127.0.0.1)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.factories import AdminFactory
from tests.support.webhook_receiver import webhook_receiver
from tests.web.test_outbound import spellings
from webhooks import sending
from webhooks.models import WebhookEndpoint


def test_nothing_is_sent_to_a_loopback_receiver_without_the_allowance(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    with webhook_receiver() as receiver:
        port = int(receiver.url.rsplit(":", 1)[1].split("/", 1)[0])
        for url in [receiver.url, *spellings(port)]:
            answer = sending.post(url, body=b"{}", headers={}, timeout=2)
            assert answer.status_code is None and answer.error.startswith("refused:"), url
        assert receiver.received == []


def test_the_allowance_delivers_to_the_loopback_receiver(loopback_allowed: None) -> None:
    with webhook_receiver() as receiver:
        answer = sending.post(receiver.url, body=b"{}", headers={}, timeout=2)
        assert answer.ok and len(receiver.received) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata address"),
        ("http://[::1]:8000/hook", "not a public address"),
        ("ftp://example.org/hook", "only http and https URLs are allowed"),
    ],
)
def test_the_admin_refuses_an_internal_or_non_http_url(
    url: str, message: str, client: Client
) -> None:
    client.force_login(AdminFactory())
    response = client.post(
        "/admin/webhooks/webhookendpoint/add/",
        {
            "name": "LMS",
            "url": url,
            "events": ["exam.completed"],
            "active": "on",
            "secret": "whsec_QUJD",
        },
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert WebhookEndpoint.objects.count() == 0


@pytest.mark.django_db
def test_an_admin_adds_an_endpoint_with_a_generated_secret(client: Client, settings: Any) -> None:
    admin = AdminFactory()
    client.force_login(admin)
    form = client.get("/admin/webhooks/webhookendpoint/add/").content.decode()
    assert 'name="secret" value="whsec_' in form
    response = client.post(
        "/admin/webhooks/webhookendpoint/add/",
        {
            "name": "LMS",
            "url": "https://lms.example.org/viva",
            "events": ["exam.completed", "marks.locked"],
            "active": "on",
            "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["exam.completed", "marks.locked"]
    assert endpoint.created_by == admin
