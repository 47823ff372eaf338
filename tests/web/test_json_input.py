"""Untrusted JSON is bounded once, at the parser (``web.json_input``), for the REST API, the
WebRTC offer and the WebSocket consumers: a clear JSON error naming the problem, never a 500,
a RecursionError or a 1011 close."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.config.test_api_permissions import ROUTES, Route, SharedWorld, World, route_id
from tests.factories import AdminFactory, AuthorFactory
from tests.sessions.factories import ExamSessionFactory
from tests.support.json_values import json_values
from tests.support.processes import asgi_server
from web.json_input import JsonInputError, nesting_depth, parse_json

DEEP = "[" * 10_000 + "]" * 10_000
DEEP_OBJECT = '{"a":' * 10_000 + "1" + "}" * 10_000


# --- the parser ----------------------------------------------------------------------------------


def bad_text(value: Any) -> bool:
    """Any key or string holding a surrogate or NUL."""
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF or c == "\x00" for c in value)
    if isinstance(value, dict):
        return any(bad_text(k) or bad_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(bad_text(v) for v in value)
    return False


@given(json_values)
def test_valid_json_round_trips(value: Any) -> None:
    text = json.dumps(value)
    if bad_text(value):
        with pytest.raises(JsonInputError) as refused:
            parse_json(text)
        assert refused.value.code == "invalid_string"
    else:
        assert parse_json(text) == value


@given(
    st.binary(max_size=200)
    | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
def test_any_bytes_are_either_parsed_or_refused_with_a_code(data: bytes) -> None:
    refusal = None
    try:
        parse_json(data)
    except JsonInputError as refused:
        refusal = refused
    if refusal is not None:
        assert refusal.code in {"invalid_json", "invalid_encoding", "invalid_string", "too_deep"}
        assert refusal.message


@given(st.integers(min_value=1, max_value=300), st.sampled_from(["[]", "{}"]))
def test_depth_is_measured_without_recursion(depth: int, brackets: str) -> None:
    opening, closing = brackets
    text = (opening + ('"k":' if opening == "{" else "")) * (depth - 1) + opening + closing * depth
    assert nesting_depth(text) == depth
    if depth > 64:
        with pytest.raises(JsonInputError, match="64"):
            parse_json(text)


def test_brackets_inside_strings_do_not_count() -> None:
    assert nesting_depth(json.dumps({"a": '[[[[{{{{\\"]]'})) == 1


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (DEEP, "too_deep"),
        (DEEP_OBJECT, "too_deep"),
        ('{"x": "\\ud800"}', "invalid_string"),
        ('{"\\udfff": 1}', "invalid_string"),
        ('{"x": "a\\u0000b"}', "invalid_string"),
        ("[NaN]", "invalid_json"),
        ("{", "invalid_json"),
    ],
)
def test_refusals_name_the_problem(text: str, code: str) -> None:
    with pytest.raises(JsonInputError) as refused:
        parse_json(text)
    assert refused.value.code == code


def test_size_and_encoding() -> None:
    with pytest.raises(JsonInputError) as refused:
        parse_json(b'"' + b"x" * 100 + b'"', limit_bytes=50)
    assert refused.value.code == "too_large"
    with pytest.raises(JsonInputError) as refused:
        parse_json(b'"\xff"')
    assert refused.value.code == "invalid_encoding"


# --- every JSON endpoint of the API ------------------------------------------------------------

WRITES = [r for r in ROUTES if r.method in ("post", "put", "patch") and not r.multipart]


def assert_json_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["code"] == code


def refuses_bad_body(world: World, route: Route, body: str) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(world.users["admin"])
    response = getattr(client, route.method)(
        world.fill(route.path), body, content_type="application/json"
    )
    assert_json_error(
        response, 400, "too_deep" if body in (DEEP, DEEP_OBJECT) else "invalid_string"
    )


BAD_BODIES = [DEEP, DEEP_OBJECT, '{"email": "\\ud800", "action": "\\ud800"}']


# One world per class, every test's changes rolled back (tests/support/shared_world.py): the
# world (two published packages, a marked session for the marking routes) was most of the time.


@pytest.mark.django_db
class TestInAWorldWithoutMarks(SharedWorld):
    marked = False

    @pytest.mark.parametrize("route", [r for r in WRITES if not r.marked], ids=route_id)
    @pytest.mark.parametrize("body", BAD_BODIES)
    def test_every_json_endpoint_refuses_bad_bodies_with_the_error_body(
        self, world: World, route: Route, body: str
    ) -> None:
        refuses_bad_body(world, route, body)

    @pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT])
    def test_the_csv_import_refuses_bad_json_bodies_too(self, world: World, body: str) -> None:
        # The import also takes ``{"csv": "..."}`` as JSON: the same parser, not DRF's own.
        client = Client(raise_request_exception=False)
        client.force_login(world.users["proctor A"])
        response = client.post(
            world.fill("/api/v1/sittings/{sitting}/candidates/import/"),
            body,
            content_type="application/json",
        )
        assert_json_error(response, 400, "too_deep")

    def test_a_lone_surrogate_in_a_choice_field_is_a_400(self, world: World) -> None:
        client = Client(raise_request_exception=False)
        client.force_login(world.users["proctor A"])
        response = client.post(
            world.fill("/api/v1/sessions/{session}/actions/"),
            '{"action": "\\ud800", "reason": "x"}',
            content_type="application/json",
        )
        assert_json_error(response, 400, "invalid_string")


@pytest.mark.django_db
class TestInAWorldWithAMarkedSession(SharedWorld):
    marked = True

    @pytest.mark.parametrize("route", [r for r in WRITES if r.marked], ids=route_id)
    @pytest.mark.parametrize("body", BAD_BODIES)
    def test_every_json_endpoint_refuses_bad_bodies_with_the_error_body(
        self, world: World, route: Route, body: str
    ) -> None:
        refuses_bad_body(world, route, body)


@pytest.mark.django_db
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.text(max_size=300) | json_values.map(json.dumps))
def test_open_ended_bodies_never_cause_a_server_error(body: str) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(AuthorFactory())
    response = client.post(
        "/api/v1/validate/", body.encode("utf-8", "surrogatepass"), content_type="application/json"
    )
    assert response.status_code in (200, 400), response.content[:300]
    if response.status_code == 400:
        assert set(response.json()["error"]) == {"code", "message", "details"}


@pytest.mark.django_db
def test_too_large_is_413_with_the_error_body(settings: Any) -> None:
    settings.VIVA_JSON_MAX_BYTES = 1000
    client = Client(raise_request_exception=False)
    client.force_login(AdminFactory())
    response = client.post(
        "/api/v1/validate/", json.dumps({"document": "x" * 2000}), content_type="application/json"
    )
    assert_json_error(response, 413, "too_large")


@pytest.mark.django_db
def test_the_webrtc_offer_refuses_deep_json_with_a_json_error() -> None:
    session = ExamSessionFactory()
    client = Client(raise_request_exception=False)
    client.force_login(session.candidate)
    response = client.post(
        f"/voice/sessions/{session.pk}/webrtc/offer", DEEP, content_type="application/json"
    )
    assert_json_error(response, 400, "too_deep")


# --- WebSocket frames, over a real daphne ----------------------------------------------------


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
def test_bad_websocket_frames_get_an_error_frame_and_the_socket_stays_open(server: str) -> None:
    from tests.factories import ProctorFactory

    proctor = ProctorFactory()
    session = ExamSessionFactory()
    session.sitting.proctors.add(proctor)
    client = Client()
    client.force_login(proctor)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    paths = [
        f"/ws/sessions/{session.pk}/events/?after_seq=0",
        f"/ws/proctor/sittings/{session.sitting.pk}/",
    ]

    async def probe(path: str) -> list[dict[str, Any]]:
        answers = []
        async with websockets.connect(
            f"ws://{server}{path}",
            origin=f"http://{server}",  # type: ignore[arg-type]
            additional_headers={"Cookie": cookie},
            open_timeout=15,
            max_size=None,
        ) as ws:
            await asyncio.sleep(0.5)
            while True:  # drain the greeting
                try:
                    await asyncio.wait_for(ws.recv(), timeout=0.5)
                except TimeoutError:
                    break
            for frame in (b"\x00\x01binary", "not json", DEEP, '{"kind": "\\ud800"}'):
                await ws.send(frame)
                answer = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
                while answer.get("kind") != "error":
                    answer = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
                answers.append(answer)
            await ws.send(json.dumps({"kind": "ping"}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
            # still open: the ping is answered (a pong, or the event socket's heartbeat event)
            assert reply["kind"] == "pong" or reply["event"]["type"] == "heartbeat", reply
        return answers

    for path in paths:
        answers = asyncio.run(probe(path))
        assert [a["code"] for a in answers] == [
            "binary_frame",
            "invalid_json",
            "too_deep",
            "invalid_string",
        ], path
        assert all(a["message"] and "Traceback" not in a["message"] for a in answers)
