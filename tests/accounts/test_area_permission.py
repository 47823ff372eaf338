"""An API view behind ``AreaPermission`` that forgets its area refuses everyone, and the system
check names it at start-up (issue #36: the default must refuse, not let any signed-in user in)."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import Client, override_settings

from accounts.area_checks import arealess_views, check_view_areas
from tests.factories import AdminFactory, AuthorFactory, CandidateFactory, ProctorFactory

pytestmark = pytest.mark.django_db

ROLE_FACTORIES = [CandidateFactory, AuthorFactory, ProctorFactory, AdminFactory]


@override_settings(ROOT_URLCONF="tests.accounts.arealess_urls")
@pytest.mark.parametrize("factory", ROLE_FACTORIES, ids=lambda f: f.__name__)
def test_a_view_without_an_area_refuses_every_role(factory: type) -> None:
    client = Client()
    client.force_login(factory())

    response = client.get("/api/forgot/")

    assert response.status_code == 403
    assert "served" not in response.content.decode()


@override_settings(ROOT_URLCONF="tests.accounts.arealess_urls")
def test_a_view_that_names_its_area_still_lets_its_roles_in() -> None:
    client = Client()
    client.force_login(AuthorFactory())
    assert client.get("/api/named/").json() == {"studio": "served"}
    client.force_login(CandidateFactory())
    assert client.get("/api/named/").status_code == 403


@override_settings(ROOT_URLCONF="tests.accounts.arealess_urls")
def test_the_system_check_names_the_view_that_forgot_its_area() -> None:
    errors = check_view_areas()

    assert [(e.id, e.obj) for e in errors] == [
        ("viva.E030", "tests.accounts.arealess_urls.ForgotItsArea")
    ]
    assert "/api/forgot/" in errors[0].msg
    assert errors[0].level == checks.ERROR


def test_every_view_of_the_product_names_its_area() -> None:
    assert arealess_views() == []
    assert check_view_areas() == []
