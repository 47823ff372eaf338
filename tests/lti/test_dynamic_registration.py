"""LTI Dynamic Registration (lti.dynamic_registration, lti.views.DynamicRegistrationView):
only an administrator or the holder of a registration URL the tool issued may register; the
configuration is fetched through the outbound address guard; and every failure is the same
page with the same status, so the registration URL is no port scanner."""

from __future__ import annotations

import io
import logging
import re
from typing import Any

import pytest
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client
from lti_tool.models import LtiRegistration

from lti.dynamic_registration import TOOL_CONFIGURATION, registration_token_issue
from tests.factories import AdminFactory, AuthorFactory
from tests.support.http_peer import Peer, http_peer
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db


def configuration(peer: Peer) -> dict[str, Any]:
    return {
        "issuer": peer.base,
        "authorization_endpoint": peer.url("/auth"),
        "token_endpoint": peer.url("/token"),
        "jwks_uri": peer.url("/jwks"),
        "registration_endpoint": peer.url("/register"),
    }


def register(client: Client, url: str, **extra: str) -> Any:
    return client.get("/lti/register/", {"openid_configuration": url, **extra})


def page(response: Any) -> str:
    """The page without what differs between any two requests (CSP nonces, CSRF tokens)."""
    text = response.content.decode()
    return re.sub(r'(nonce|value)="[^"]*"', "", text)


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(AdminFactory())
    return client


def test_anyone_else_is_refused_before_anything_is_fetched(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="lti.views")
    with http_peer({"/config": (200, {})}) as peer:
        author = Client()
        author.force_login(AuthorFactory())
        for client, extra in (
            (Client(), {}),
            (Client(), {"registration_token": "anything"}),
            (Client(), {"viva_token": "register:forged:signature"}),
            (author, {}),
        ):
            response = register(client, peer.url("/config"), **extra)
            assert response.status_code == 403
            assert "This link could not be opened" in response.content.decode()
        assert peer.hits == []
    assert "registration_not_allowed" in caplog.text
    assert not Session.objects.exclude(session_key=author.session.session_key).exists()


def test_internal_addresses_are_refused_and_every_failure_looks_the_same(
    admin_client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    caplog.set_level(logging.WARNING, logger="lti.views")
    closed = free_port()
    routes: dict[str, tuple[int, Any]] = {"/hop": (302, "http://169.254.169.254/")}
    with http_peer(routes) as peer:
        routes["/config"] = (200, configuration(peer))  # an open port with a good answer
        urls = [
            peer.url("/config"),  # an open port on 127.0.0.1
            f"http://127.0.0.1:{closed}/config",  # a closed port
            f"http://localhost:{peer.port}/config",
            f"http://127.1:{peer.port}/config",
            f"http://2130706433:{peer.port}/config",
            f"http://0.0.0.0:{peer.port}/config",
            f"http://[::1]:{peer.port}/config",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            peer.url("/hop"),
            "file:///etc/passwd",
        ]
        answers = [register(admin_client, url) for url in urls]
        assert peer.hits == []
    assert {a.status_code for a in answers} == {502}
    assert len({page(a) for a in answers}) == 1, "a difference tells what answered"
    assert "did not succeed" in page(answers[0])
    assert caplog.text.count("LTI launch refused: registration:") == len(urls)
    assert not LtiRegistration.objects.exists()


def test_open_and_closed_ports_look_the_same_even_where_allowed(
    admin_client: Client, settings: Any
) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    closed = free_port()
    routes: dict[str, tuple[int, Any]] = {
        "/config": (200, {"issuer": "http://elsewhere.example"}),
        "/list": (200, []),
        "/huge": (200, {"issuer": "x" * (2 << 20)}),
    }
    with http_peer(routes) as peer:
        answers = [
            register(admin_client, peer.url("/list")),  # not a JSON object
            register(admin_client, peer.url("/huge")),  # over the size read
            register(admin_client, peer.url("/config")),  # answers, with a bad configuration
            register(admin_client, peer.url("/missing")),  # answers 404
            register(admin_client, f"http://127.0.0.1:{closed}/config"),  # nothing listens
            register(admin_client, "http://10.0.0.1/config"),  # not listed: refused
        ]
    assert {a.status_code for a in answers} == {502}
    assert len({page(a) for a in answers}) == 1


def test_a_tool_issued_registration_url_registers_through_the_guard(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    answer = {"client_id": "dyn-1", TOOL_CONFIGURATION: {"deployment_id": "d-1"}}
    routes: dict[str, tuple[int, Any]] = {}
    with http_peer(routes) as platform:
        routes["/config"] = (200, configuration(platform))  # names itself as the issuer
        routes["/register"] = (200, answer)
        response = register(
            Client(),
            platform.url("/config"),
            registration_token="platform-token",
            viva_token=registration_token_issue(),
        )
        assert response.status_code == 200, response.content.decode()[:500]
        assert platform.hits == ["/config", "/register"]
    registration = LtiRegistration.objects.get(client_id="dyn-1")
    assert registration.issuer == platform.base
    assert not registration.deployments.get().is_active


def test_registering_again_with_a_client_id_already_registered_is_a_clean_refusal(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The LMS administrator runs the registration again, and the platform answers with the
    client id it gave before (or another registration of that issuer holds it): the refusal
    page, the reason in the log, the existing registration untouched; never a server error."""
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    answer = {"client_id": "dyn-1", TOOL_CONFIGURATION: {"deployment_id": "d-1"}}
    routes: dict[str, tuple[int, Any]] = {}
    with http_peer(routes) as platform:
        routes["/config"] = (200, configuration(platform))
        routes["/register"] = (200, answer)
        token = registration_token_issue()
        first = register(Client(), platform.url("/config"), viva_token=token)
        assert first.status_code == 200
        existing = LtiRegistration.objects.get(client_id="dyn-1")
        with caplog.at_level(logging.WARNING):
            again = register(Client(), platform.url("/config"), viva_token=token)
    assert again.status_code == 502 and "did not succeed" in page(again)
    assert "already registered" in caplog.text
    assert list(LtiRegistration.objects.all()) == [existing]
    assert existing.deployments.count() == 1


def test_the_command_prints_a_registration_url_that_is_accepted() -> None:
    out = io.StringIO()
    call_command(
        "lti_register", "--dynamic-registration-url", base_url="https://viva.example", stdout=out
    )
    (url,) = re.findall(r"https://viva\.example/lti/register/\?viva_token=\S+", out.getvalue())
    token = url.split("viva_token=", 1)[1]
    response = Client().get("/lti/register/", {"viva_token": token})
    assert response.status_code == 400  # let in; the LMS sent no configuration
    assert "sent no configuration" in response.content.decode()
