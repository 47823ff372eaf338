"""An independent LTI 1.3 platform for the tests, built on the ``lti1p3platform`` package (which
none of us wrote): OIDC login initiation, the authorization endpoint that signs the id token,
its JWKS, the OAuth2 token endpoint (client credentials with the tool's JWT assertion), AGS line
items and scores, and NRPS memberships. A plain threaded WSGI server, run as a separate process:
``python -m tests.support.lti_platform.server PORT``.

Test control endpoints (``/test/...``, JSON): ``setup`` (the tool's URLs and JWKS), ``launch``
(starts a launch for a user and role, with an optional ``tamper``, ``context`` (course id,
default ``course-1``; line items and memberships are per course), ``deployment``, and
``review_for`` + ``lineitem`` for a submission review launch, ``privacy_for`` for a data privacy
launch: no link, no course; ``claims``, JSON: claims to send besides or instead of the usual),
``members`` (a new roster), ``scores``, ``lineitems`` (each names its
``context``), ``fail_scores`` (the next ``count`` score posts answer ``status``).
The tampering is done to a launch the library built and signed: another issuer, audience or
deployment, an expired token, an unsigned one (``alg: none``) or one signed with another key.
"""

from __future__ import annotations

import html
import json
import sys
import threading
import typing as t
import uuid
from socketserver import ThreadingMixIn
from urllib.parse import parse_qsl
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwcrypto.jwk import JWK
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import (
    AssignmentsGradesService,
    NamesRoleProvisioningService,
)

LOCK = threading.Lock()
STATE: dict[str, t.Any] = {
    "launches": {},
    "lineitems": {},
    "scores": {},
    "members": [],
    "fail_scores": {"count": 0, "status": 503},
    "refused_scores": [],
}
LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"


def pem_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


class KeyedRegistration(Registration):  # type: ignore[misc]
    """The library's registration, with a ``kid`` (RFC 7638 thumbprint) on its JWKS and
    tokens so a tool can pick the key."""

    @classmethod
    def get_jwk(cls, public_key: str) -> dict[str, t.Any]:
        jwk = super().get_jwk(public_key)
        jwk["kid"] = JWK.from_pem(public_key.encode()).thumbprint()
        return jwk


class Platform(LTI1P3PlatformConfAbstract):  # type: ignore[misc]
    def init_platform_config(self, **kwargs: t.Any) -> None:
        self._registration = STATE["registration"]

    def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
        return STATE["registration"]


class WsgiRequest(Request):  # type: ignore[misc]
    def build_metadata(self, environ: dict[str, t.Any]) -> TRequest:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        content_type = environ.get("CONTENT_TYPE", "")
        text = body.decode() if body else ""
        headers = {
            key[5:].replace("_", "-").title(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        return {
            "method": environ["REQUEST_METHOD"],
            "form_data": dict(parse_qsl(text)) if "form" in content_type else {},
            "get_data": dict(parse_qsl(environ.get("QUERY_STRING", ""))),
            "headers": headers,
            "content_type": content_type,
            "path": environ.get("PATH_INFO", ""),
            "json": json.loads(text) if text and "json" in content_type else None,
        }


class Login(OIDCLoginAbstract):  # type: ignore[misc]
    def set_lti_message_hint(self, **kwargs: t.Any) -> None:
        self._lti_message_hint = kwargs["launch_id"]

    def get_redirect(self, url: str) -> str:
        return url


class Launch(LTIAdvantageMessageLaunchAbstract):  # type: ignore[misc]
    def render_launch_form(self, launch_data: dict[str, t.Any], **kwargs: t.Any) -> dict:
        return dict(launch_data)


class Grades(AssignmentsGradesService):  # type: ignore[misc]
    context = ""
    """The course whose line items container was addressed (``/ags/c/<context>/lineitems``)."""

    def find_lineitems(self, page: int = 1, limit: int | None = None, **kw: t.Any) -> dict:
        items = [i for i in STATE["lineitems"].values() if i.get("context") == self.context]
        tag = kw.get("tag")
        if tag:
            items = [i for i in items if i.get("tag") == tag]
        return {"content": items, "has_next": False, "next": None}

    def find_lineitem(self, line_item_id: str) -> dict:
        return STATE["lineitems"][line_item_id]

    def create_lineitem(self, lineitem: dict) -> dict:
        key = uuid.uuid4().hex[:12]
        item = {**lineitem, "id": f"{STATE['base']}/ags/lineitems/{key}", "context": self.context}
        STATE["lineitems"][key] = item
        return item

    def update_lineitem(self, lineitem: dict) -> dict:
        return lineitem

    def delete_lineitem(self, line_item_id: str) -> None:
        STATE["lineitems"].pop(line_item_id, None)

    def update_score(self, line_item_id: str, score: dict) -> UpdateScoreStatus:
        STATE["scores"].setdefault(line_item_id, []).append(score)
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id: str, **kw: t.Any) -> dict:
        return {"content": STATE["scores"].get(line_item_id, []), "has_next": False}


class Roster(NamesRoleProvisioningService):  # type: ignore[misc]
    context = "course-1"

    def get_member_data_page(self, **kwargs: t.Any) -> dict:
        members = STATE.get("context_members", {}).get(self.context, STATE["members"])
        return {"content": list(members), "has_next": False, "next": None}

    def get_context_by_id(self) -> Context:
        return Context(id="course-1", label="CS201", title="Graph algorithms")


def ags_urls(base: str, context: str = "course-1") -> tuple[str, str]:
    """A course's line items container (line items themselves live at ``/ags/lineitems/<key>``)."""
    return f"{base}/ags/c/{context}/lineitems", ""


def launch_form(environ: dict[str, t.Any]) -> dict[str, t.Any]:
    """The authorization endpoint: the tool redirected the browser here."""
    request = WsgiRequest(environ)
    spec = STATE["launches"][request.get_data["lti_message_hint"]]
    launch = Launch(request, Platform())
    launch.set_user_data(
        spec["user"], [LIS + spec["role"]], spec["user"].title(), f"{spec['user']}@uni.example"
    )
    launch.set_resource_link_claim(spec["link"], title="Oral exam")
    context = spec.get("context") or "course-1"
    launch.set_launch_context_claim(context, context_title=f"Course {context}")
    launch.set_custom_parameters_claim(spec.get("custom") or {})
    lineitems, _ = ags_urls(STATE["base"], context)
    launch.set_ags(lineitems_url=lineitems, lineitem_url=spec.get("lineitem") or None)
    launch.set_nrps(f"{STATE['base']}/nrps/{context}/memberships")
    if spec.get("deep_link"):
        launch.set_dl(
            f"{STATE['base']}/deeplink/return",
            title="Add an exam",
            accept_types={"ltiResourceLink"},
        )
    tamper = spec.get("tamper") or ""
    extra = {
        "issuer": {"iss": "https://evil.example"},
        "audience": {"aud": "someone-else", "azp": "someone-else"},
        "deployment": {DEPLOYMENT_CLAIM: "deployment-nobody-activated"},
    }.get(tamper)
    if spec.get("review_for"):  # LTI AGS submission review: the gradebook's "view submission"
        extra = {
            **(extra or {}),
            "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiSubmissionReviewRequest",
            "https://purl.imsglobal.org/spec/lti/claim/for_user": {"user_id": spec["review_for"]},
        }
    if spec.get("privacy_for"):  # LTI Data Privacy Launch: no resource link, no course
        launch.lti_claim_resource_link = None
        launch.lti_claim_context = None
        extra = {
            **(extra or {}),
            "https://purl.imsglobal.org/spec/lti/claim/message_type": "DataPrivacyLaunchRequest",
            "https://purl.imsglobal.org/spec/lti/claim/for_user": {"user_id": spec["privacy_for"]},
        }
    if spec.get("deployment"):
        extra = {**(extra or {}), DEPLOYMENT_CLAIM: spec["deployment"]}
    if spec.get("claims"):
        extra = {**(extra or {}), **spec["claims"]}
    if extra:
        launch.set_extra_claims(extra)
    if tamper == "expired":
        launch.set_id_token_expiration(-3600)
    form = launch.lti_launch()
    if tamper in {"unsigned", "signature"}:
        header = jwt.get_unverified_header(form["id_token"])
        body = jwt.decode(form["id_token"], options={"verify_signature": False})
        if tamper == "unsigned":
            form["id_token"] = jwt.encode(body, None, algorithm="none")
        else:
            other, _ = pem_pair()
            form["id_token"] = jwt.encode(body, other, algorithm="RS256", headers=header)
    return form


def request_json(environ: dict[str, t.Any]) -> t.Any:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    return json.loads(environ["wsgi.input"].read(length) or b"null")


def html_form(form: dict[str, t.Any]) -> str:
    return (
        f'<form method="post" action="{form["launch_url"]}">'
        f'<input type="hidden" name="id_token" value="{form["id_token"]}">'
        f'<input type="hidden" name="state" value="{form["state"]}"></form>'
    )


def app(environ: dict[str, t.Any], start_response: t.Any) -> list[bytes]:
    path = environ.get("PATH_INFO", "")
    try:
        with LOCK:
            status, content_type, body = route(environ, path)
    except Exception as error:  # a test server: say what failed
        status, content_type, body = "500 Error", "text/plain", f"{type(error).__name__}: {error}"
    start_response(status, [("Content-Type", content_type)])
    return [body.encode() if isinstance(body, str) else body]


def route(environ: dict[str, t.Any], path: str) -> tuple[str, str, t.Any]:
    request = WsgiRequest(environ) if path.startswith(("/test/", "/token")) else None
    if path == "/test/setup":
        data = request.json
        registration = (
            KeyedRegistration()
            .set_iss(STATE["base"])
            .set_client_id(data["clientId"])
            .set_deployment_id(data["deploymentId"])
            .set_oidc_login_url(data["loginUrl"])
            .set_launch_url(data["launchUrl"])
            .set_deeplink_launch_url(data["launchUrl"])
            .set_platform_public_key(STATE["public"])
            .set_platform_private_key(STATE["private"])
            .set_tool_key_set(data["jwks"])
        )
        STATE["registration"] = registration
        STATE["members"] = data.get("members", [])
        STATE["context_members"] = data.get("contextMembers", {})
        return "200 OK", "application/json", "{}"
    if path == "/test/launch":
        spec = dict(parse_qsl(environ.get("QUERY_STRING", "")))
        spec["custom"] = json.loads(spec.get("custom", "{}"))
        spec["claims"] = json.loads(spec.get("claims", "{}"))
        launch_id = uuid.uuid4().hex
        STATE["launches"][launch_id] = spec
        login = Login(request, Platform())
        login.set_lti_message_hint(launch_id=launch_id)
        return (
            "200 OK",
            "application/json",
            json.dumps({"loginUrl": login.initiate_login(spec["user"])}),
        )
    if path == "/test/members":  # the roster (Names and Role Provisioning) changes
        STATE["members"] = request.json.get("members", [])
        return "200 OK", "application/json", "{}"
    if path == "/test/scores":
        return "200 OK", "application/json", json.dumps(STATE["scores"])
    if path == "/test/fail_scores":
        STATE["fail_scores"] = {"count": 0, "status": 503, **request.json}
        return "200 OK", "application/json", "{}"
    if path == "/test/refused_scores":
        return "200 OK", "application/json", json.dumps(STATE["refused_scores"])
    if path == "/test/lineitems":
        return "200 OK", "application/json", json.dumps(STATE["lineitems"])
    if path == "/auth":
        return "200 OK", "text/html", html_form(launch_form(environ))
    if path == "/.well-known/openid-configuration":
        base = STATE["base"]
        config = {
            "issuer": base,
            "authorization_endpoint": f"{base}/auth",
            "token_endpoint": f"{base}/token",
            "jwks_uri": f"{base}/jwks",
            "registration_endpoint": f"{base}/register",
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "lti1p3platform-test",
            },
        }
        return "200 OK", "application/json", json.dumps(config)
    if path == "/register":
        if environ.get("HTTP_AUTHORIZATION") != "Bearer reg-token-1":
            return "401 Unauthorized", "application/json", '{"error": "bad token"}'
        STATE["registration_requests"] = [
            *STATE.get("registration_requests", []),
            request_json(environ),
        ]
        answer = {
            "client_id": "dyn-client",
            "https://purl.imsglobal.org/spec/lti-tool-configuration": {
                "deployment_id": "dyn-deployment"
            },
        }
        return "200 OK", "application/json", json.dumps(answer)
    if path == "/test/registration_requests":
        return "200 OK", "application/json", json.dumps(STATE.get("registration_requests", []))
    if path == "/deeplink/return":
        items = Platform().validate_deeplinking_resp(WsgiRequest(environ).form_data)
        STATE.setdefault("deep_links", []).append(items)
        return "200 OK", "text/html", "<p>Content added to the course.</p>"
    if path == "/test/course_frame":  # a course page framing the tool (content selection)
        src = html.escape(dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("src", ""))
        frame = f'<iframe title="Tool" src="{src}" width="900" height="700"></iframe>'
        return "200 OK", "text/html", f"<!doctype html><title>Course</title>{frame}"
    if path == "/test/deep_links":
        return "200 OK", "application/json", json.dumps(STATE.get("deep_links", []))
    if path == "/jwks":
        return "200 OK", "application/json", json.dumps(Platform().get_jwks())
    if path == "/token":
        token = Platform().get_access_token(request.form_data)
        return "200 OK", "application/json", json.dumps(token)
    return service_route(environ, path)


def service_route(environ: dict[str, t.Any], path: str) -> tuple[str, str, t.Any]:
    request = WsgiRequest(environ)
    if path.startswith("/ags/c/"):
        context = path.removeprefix("/ags/c/").split("/", 1)[0]
        lineitems, _ = ags_urls(STATE["base"], context)
        service = Grades(request, Platform(), lineitems, None)
        service.context = context
        handler = (
            service.handle_create_lineitem
            if request.method == "POST"
            else service.handle_get_lineitems
        )
        response = service.handle_resp(handler)
    elif path.startswith("/ags/lineitems"):
        rest = path.removeprefix("/ags/lineitems").strip("/")
        key, _, tail = rest.partition("/")
        lineitem = f"{STATE['base']}/ags/lineitems/{key}" if key else None
        service = Grades(request, Platform(), f"{STATE['base']}/ags/lineitems", lineitem)
        failing = STATE["fail_scores"]
        if tail == "scores" and failing["count"] > 0:
            failing["count"] -= 1
            STATE["refused_scores"].append(request.json)
            return f"{failing['status']} Refused", "application/json", '{"error": "refused"}'
        if not key:
            handler = (
                service.handle_create_lineitem
                if request.method == "POST"
                else service.handle_get_lineitems
            )
            response = service.handle_resp(handler)
        elif tail == "scores":
            response = service.handle_resp(service.handle_update_score, line_item_id=key)
        elif tail == "results":
            response = service.handle_resp(service.handle_get_results, line_item_id=key)
        else:
            response = service.handle_resp(service.handle_get_lineitem, line_item_id=key)
    elif path.startswith("/nrps/") and path.endswith("/memberships"):
        service = Roster(request, Platform(), f"{STATE['base']}{path}")
        service.context = path.split("/")[2]
        response = service.handle_resp(service.handle_get_members)
    else:
        return "404 Not Found", "text/plain", "not found"
    body = (
        response.result.get("content", response.result)
        if isinstance(response.result, dict) and "content" in response.result
        else response.result
    )
    if response.code >= 400:
        body = {"error": response.message}
    return f"{response.code} X", response.media_type or "application/json", json.dumps(body)


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write("lti-platform: " + (format % args) + "\n")


def main() -> None:
    port = int(sys.argv[1])
    STATE["base"] = f"http://127.0.0.1:{port}"
    STATE["private"], STATE["public"] = pem_pair()
    server = make_server("127.0.0.1", port, app, ThreadingServer, handler_class=Handler)
    print(f"lti platform on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
