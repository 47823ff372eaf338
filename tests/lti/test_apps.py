"""``LtiConfig.ready`` routes pylti1p3 through the outbound address guard: the platform's
keyset (fetched at every launch), its token endpoint and its AGS/NRPS services are URLs the
platform names, and none of them reaches an internal address (a real server on 127.0.0.1)."""

from __future__ import annotations

from typing import Any

import pytest
from lti_tool.utils import DjangoToolConfig
from pylti1p3 import message_launch, service_connector
from pylti1p3.contrib.django import DjangoMessageLaunch
from pylti1p3.exception import LtiException
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector

from tests.support.http_peer import http_peer
from tests.web.test_outbound import spellings
from web.outbound import AddressRefused, GuardedRequests

JWKS = {"keys": []}


def keyset_fetch(url: str) -> Any:
    from django.test import RequestFactory

    launch = DjangoMessageLaunch(RequestFactory().post("/lti/launch/"), DjangoToolConfig())
    return launch.fetch_public_key(url)


def test_pylti1p3_fetches_through_the_guard() -> None:
    assert isinstance(message_launch.requests, GuardedRequests)
    assert isinstance(service_connector.requests, GuardedRequests)


def test_the_platform_keyset_is_never_fetched_from_an_internal_address(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    with http_peer({"/jwks": (200, JWKS), "/hop": (302, "http://169.254.169.254/")}) as peer:
        urls = [u.replace("/ok", "/jwks") for u in spellings(peer.port)] + [peer.url("/hop")]
        for url in urls:
            with pytest.raises(LtiException, match="Error during fetch"):
                keyset_fetch(url)
        assert peer.hits == []


def test_the_keyset_of_an_allowed_platform_is_fetched(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    with http_peer({"/jwks": (200, JWKS)}) as peer:
        assert keyset_fetch(peer.url("/jwks")) == JWKS
        assert peer.hits == ["/jwks"]


def test_the_token_endpoint_and_services_are_guarded(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    with http_peer({"/token": (200, {"access_token": "t", "expires_in": 60})}) as peer:
        registration = Registration().set_auth_token_url(peer.url("/token"))
        connector = ServiceConnector(registration)
        with pytest.raises(AddressRefused):
            connector._requests_session.post(peer.url("/token"), data={})
        with pytest.raises(AddressRefused):
            connector._requests_session.get(peer.url("/lineitems"))
        assert peer.hits == []
