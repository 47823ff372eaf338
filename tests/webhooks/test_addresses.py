"""The SSRF guard: only http(s) URLs, and only public addresses unless the deployment allows
private ones (VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES)."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from tests.factories import AdminFactory
from tests.support.webhook_receiver import webhook_receiver
from webhooks import sending
from webhooks.addresses import AddressRefused, check_ip, check_literal_host, parse, resolve
from webhooks.models import WebhookEndpoint

NOT_PUBLIC = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # shared address space
    "0.0.0.0",  # noqa: S104 - an address to refuse
    "::1",
    "fe80::1",
    "fc00::1",
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:169.254.169.254",
    "224.0.0.1",
]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/x",
        "file:///etc/passwd",
        "gopher://example.org/",
        "javascript:alert(1)",
        "http:///nohost",
        "https://user:pw@example.org/hook",
        "http://example.org:99999/",
    ],
)
def test_only_plain_http_and_https_urls_are_accepted(url: str) -> None:
    with pytest.raises(AddressRefused):
        parse(url)


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_internal_addresses_are_refused_by_default(address: str) -> None:
    with pytest.raises(AddressRefused, match="not a public address"):
        check_ip(address)


def test_public_addresses_pass() -> None:
    assert check_ip("93.184.215.14") == "93.184.215.14"
    assert check_ip("2606:4700::1111") == "2606:4700::1111"


@given(
    st.sampled_from(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8"]).flatmap(
        lambda net: st.integers(
            int(ipaddress.ip_network(net).network_address),
            int(ipaddress.ip_network(net).broadcast_address),
        )
    )
)
def test_every_private_or_loopback_ipv4_address_is_refused(number: int) -> None:
    address = str(ipaddress.IPv4Address(number))
    for text in (address, f"::ffff:{address}"):
        with pytest.raises(AddressRefused):
            check_ip(text)


def test_names_are_checked_on_what_they_resolve_to() -> None:
    with pytest.raises(AddressRefused, match=r"127\.0\.0\.1 is not a public address"):
        resolve(parse("http://localhost:8000/hook"))
    with pytest.raises(AddressRefused, match="localhost"):
        check_literal_host("http://localhost/hook")


def test_the_allowance_lets_private_addresses_through(loopback_allowed: None) -> None:
    assert check_ip("127.0.0.1") == "127.0.0.1"
    assert resolve(parse("http://localhost:8000/")) in (
        ["127.0.0.1"],
        ["::1", "127.0.0.1"],
        ["127.0.0.1", "::1"],
    )
    with pytest.raises(AddressRefused):
        parse("file:///etc/passwd")  # the scheme rule holds whatever the allowance


def test_nothing_is_sent_to_a_loopback_receiver_without_the_allowance() -> None:
    with webhook_receiver() as receiver:
        answer = sending.post(receiver.url, body=b"{}", headers={}, timeout=2)
        assert answer.status_code is None and answer.error.startswith("refused:")
        assert receiver.received == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://169.254.169.254/latest/meta-data/", "not a public address"),
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
