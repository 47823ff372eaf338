"""The REST API frame: OpenAPI schema, browsable docs, error bodies, pagination, tokens."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.services import api_token_issue
from tests.factories import AuthorFactory, DraftPackageFactory

pytestmark = pytest.mark.django_db


def test_openapi_schema_lists_every_endpoint() -> None:
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    paths = set(schema["paths"])
    for expected in (
        "/api/v1/me/",
        "/api/v1/invitations/",
        "/api/v1/packages/",
        "/api/v1/packages/{draft_id}/",
        "/api/v1/packages/{draft_id}/validate/",
        "/api/v1/packages/{draft_id}/publish/",
        "/api/v1/validate/",
        "/api/v1/versions/",
        "/api/v1/versions/{version_id}/",
        "/api/v1/versions/{version_id}/report/",
        "/api/v1/versions/{version_id}/compiled/",
    ):
        assert expected in paths, expected
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])


def test_browsable_docs_are_served_without_a_cdn() -> None:
    page = Client().get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


def test_token_authentication_and_pagination() -> None:
    author = AuthorFactory()
    for _ in range(3):
        DraftPackageFactory(owner=author)
    key = api_token_issue(user=author, name="pagination").key
    response = Client().get("/api/v1/packages/?page_size=2", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"] is not None


def test_errors_share_one_body() -> None:
    client = Client()
    client.force_login(AuthorFactory())
    not_found = client.get("/api/v1/packages/00000000-0000-0000-0000-000000000000/")
    assert not_found.status_code == 404
    assert not_found.json() == {
        "error": {"code": "not_found", "message": "No such package.", "details": {}}
    }
    invalid = client.post("/api/v1/packages/", {}, content_type="application/json")
    assert invalid.status_code == 400
    error = invalid.json()["error"]
    assert error["code"] == "invalid"
    assert "exactly one of 'document' or 'example'" in error["message"]
    assert "non_field_errors" in error["details"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/sittings/not-a-uuid/",  # the route wants a UUID: no route matches
        "/api/v1/sessions/null,null/actions/",
        "/api/v1/no-such-endpoint/",
        "/api/v2/",
    ],
)
def test_a_path_no_route_matches_is_the_json_404(path: str) -> None:
    client = Client()
    client.force_login(AuthorFactory())
    for response in (client.get(path), client.post(path, {}, content_type="application/json")):
        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == "not_found"
