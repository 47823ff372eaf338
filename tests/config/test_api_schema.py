"""The OpenAPI schema at /api/schema/ is one an integrator can generate a client from.

drf-spectacular warns about nothing (unique component names, every body resolved), the schema
validates, each operation documents its own bodies (not another view's that shares a name), lists
are documented as the paginated envelope they answer, and every refusal an operation can give is
documented with the shared error body (web/api/schema.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

ERROR_REF = "#/components/schemas/Error"
PAGINATED = [
    "/api/v1/packages/",
    "/api/v1/versions/",
    "/api/v1/marking/sessions/",
    "/api/v1/sittings/",
    "/api/v1/sessions/",
]
PUBLIC = {("/api/v1/schema/package/", "get")}


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return dict(response.json())


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def body(schema: dict[str, Any], operation: dict[str, Any], code: str) -> dict[str, Any]:
    return resolve(schema, operation["responses"][code]["content"]["application/json"]["schema"])


def request_body(schema: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    return resolve(schema, operation["requestBody"]["content"]["application/json"]["schema"])


def test_the_generator_warns_about_nothing_and_the_schema_validates(tmp_path: Path) -> None:
    # --fail-on-warn turns every drf-spectacular warning (a component name two serializers
    # share, an operationId collision, an unresolvable body) into an error.
    call_command(
        "spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml")
    )


def test_each_operation_documents_its_own_bodies(schema: dict[str, Any]) -> None:
    paths = schema["paths"]
    me = body(schema, paths["/api/v1/me/"]["get"], "200")
    assert {"username", "role", "homeArea", "areas"} <= set(me["properties"])
    invitation = paths["/api/v1/invitations/"]["post"]
    assert set(request_body(schema, invitation)["properties"]) == {
        "email",
        "displayName",
        "ttlHours",
        "nextPath",
    }
    assert {"url", "expiresAt"} <= set(body(schema, invitation, "201")["properties"])
    create = request_body(schema, paths["/api/v1/packages/"]["post"])
    assert set(create["properties"]) == {"document", "example", "title"}
    save = request_body(schema, paths["/api/v1/packages/{draft_id}/"]["put"])
    assert set(save["properties"]) == {"document", "revision"}
    validate = request_body(schema, paths["/api/v1/packages/{draft_id}/validate/"]["post"])
    assert set(validate["properties"]) == {"document"}
    publish = request_body(schema, paths["/api/v1/packages/{draft_id}/publish/"]["post"])
    assert set(publish["properties"]) == {"revision"}
    presence = paths["/api/v1/packages/{draft_id}/presence/"]["post"]
    assert set(request_body(schema, presence)["properties"]) == {"left", "nodeId"}
    here = body(schema, presence, "200")["properties"]
    assert set(here) == {"others", "heartbeatSec", "expiresAfterSec", "revision"}
    assert set(resolve(schema, here["others"]["items"])["properties"]) == {
        "name",
        "lastSeen",
        "nodeId",
    }
    creator = body(schema, paths["/api/v1/sittings/"]["post"], "201")["properties"]["createdBy"]
    decision = body(
        schema, paths["/api/v1/marking/sessions/{session_id}/overrides/"]["post"], "201"
    )
    assert resolve(schema, creator) != {} and "author" in decision["properties"]


@pytest.mark.parametrize("path", PAGINATED)
def test_lists_are_documented_as_the_paginated_envelope(schema: dict[str, Any], path: str) -> None:
    operation = schema["paths"][path]["get"]
    envelope = body(schema, operation, "200")
    assert envelope["type"] == "object"
    assert {"count", "next", "previous", "results"} <= set(envelope["properties"])
    assert envelope["properties"]["results"]["type"] == "array"
    assert {"count", "results"} <= set(envelope.get("required", []))
    assert {"page", "page_size"} <= {p["name"] for p in operation.get("parameters", [])}


def expected_refusals(path: str, method: str, operation: dict[str, Any]) -> set[str]:
    codes = set() if (path, method) in PUBLIC else {"401", "403", "429"}
    if method in {"post", "put", "patch"}:
        codes |= {"400", "413", "415"}
    if "{" in path or (path in PAGINATED and method == "get"):
        codes.add("404")
    return codes


def test_every_refusal_is_documented_with_the_error_body(schema: dict[str, Any]) -> None:
    error = resolve(schema, {"$ref": ERROR_REF})
    assert error["required"] == ["error"]
    assert set(resolve(schema, error["properties"]["error"])["required"]) == {
        "code",
        "message",
        "details",
    }
    missing = []
    for path, method, operation in operations(schema):
        documented = operation["responses"]
        for code in sorted(expected_refusals(path, method, operation) - set(documented)):
            missing.append(f"{method.upper()} {path}: {code} undocumented")
        for code, response in documented.items():
            if code < "400" or path.endswith("/candidates/import/"):
                continue
            schema_of = response.get("content", {}).get("application/json", {}).get("schema")
            if schema_of != {"$ref": ERROR_REF}:
                missing.append(f"{method.upper()} {path}: {code} without the error body")
    assert not missing, "\n".join(missing)


def test_the_import_refusal_documents_both_of_its_bodies(schema: dict[str, Any]) -> None:
    operation = schema["paths"]["/api/v1/sittings/{sitting_id}/candidates/import/"]["post"]
    refused = body(schema, operation, "400")
    assert {"$ref": ERROR_REF} in refused["oneOf"]
    report = [resolve(schema, s) for s in refused["oneOf"] if s != {"$ref": ERROR_REF}]
    assert {"added", "skipped", "errors", "problems", "rows"} <= set(report[0]["properties"])
