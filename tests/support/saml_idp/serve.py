"""An independent SAML 2.0 identity provider for the SAML sign-in tests: pysaml2's own IdP
(``saml2.server.Server``) behind a small WSGI server on 127.0.0.1.

``python -m tests.support.saml_idp.serve PORT SPEC``; SPEC (JSON) names the key, certificate,
the service provider's metadata file and the users. Endpoints:

* ``GET /metadata``: this provider's metadata, signed with its key;
* ``GET /sso/redirect?SAMLRequest=…&SigAlg=…&Signature=…&user=NAME&scenario=S``: the
  HTTP-Redirect binding. The request must be signed by the service provider (its metadata's
  certificate); the user is signed in without a form (``user``), and the answer is the
  HTTP-POST binding's auto-submitting form back to the service provider. ``scenario`` makes the
  response a test needs: ``ok``, ``unsigned`` (no signature at all), ``response-signed`` (only
  the response signed), ``wrong-audience``, ``wrong-destination`` (Destination and Recipient of
  another service), ``expired``, ``not-yet-valid`` (NotBefore half an hour ahead),
  ``never-sent`` (answers another request id), ``unsolicited`` (no InResponseTo).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, make_server

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2 import saml as samlxml
from saml2.assertion import Policy
from saml2.config import IdPConfig
from saml2.metadata import create_metadata_string
from saml2.s_utils import factory
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NameID
from saml2.server import Server
from saml2.time_util import in_a_while, instant
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class ScenarioPolicy(Policy):  # type: ignore[misc]
    """The release policy with the conditions a scenario asks for."""

    def __init__(self, scenario: str, mds: Any) -> None:
        super().__init__(None, mds)
        self.scenario = scenario

    def not_on_or_after(self, sp_entity_id: str) -> str:
        minutes = {"expired": -20, "not-yet-valid": 60}.get(self.scenario, 5)
        return str(in_a_while(minutes=minutes))

    def conditions(self, sp_entity_id: str) -> Any:
        audience = "https://other.example/sp" if self.scenario == "wrong-audience" else sp_entity_id
        before = {"expired": in_a_while(minutes=-30), "not-yet-valid": in_a_while(minutes=30)}.get(
            self.scenario, instant()
        )
        return factory(
            samlxml.Conditions,
            not_before=before,
            not_on_or_after=self.not_on_or_after(sp_entity_id),
            audience_restriction=[
                factory(
                    samlxml.AudienceRestriction, audience=[factory(samlxml.Audience, text=audience)]
                )
            ],
        )


def idp_server(spec: dict[str, Any], base: str) -> Server:
    config = IdPConfig()
    config.load(
        {
            "entityid": f"{base}/idp",
            "xmlsec_binary": shutil.which("xmlsec1"),
            "key_file": spec["key_file"],
            "cert_file": spec["cert_file"],
            "metadata": {"local": [spec["sp_metadata_file"]]},
            "accepted_time_diff": 60,
            "service": {
                "idp": {
                    "name": "Test university IdP",
                    "endpoints": {
                        "single_sign_on_service": [(f"{base}/sso/redirect", BINDING_HTTP_REDIRECT)]
                    },
                    "name_id_format": [NAMEID_FORMAT_PERSISTENT],
                    "want_authn_requests_signed": True,
                    "signing_algorithm": SIG_RSA_SHA256,
                    "digest_algorithm": DIGEST_SHA256,
                }
            },
        }
    )
    return Server(config=config)


def _signing(scenario: str) -> dict[str, bool]:
    if scenario == "unsigned":
        return {"sign_assertion": False, "sign_response": False}
    if scenario == "response-signed":
        return {"sign_assertion": False, "sign_response": True}
    return {"sign_assertion": True, "sign_response": False}


def single_sign_on(server: Server, users: dict[str, Any], query: dict[str, str]) -> str:
    """The HTML form posting the response to the service provider."""
    if "Signature" not in query:
        raise PermissionError("unsigned AuthnRequest")
    request = server.parse_authn_request(
        query["SAMLRequest"],
        BINDING_HTTP_REDIRECT,
        relay_state=query.get("RelayState"),
        sigalg=query["SigAlg"],
        signature=query["Signature"],
    )
    if request is None:
        raise PermissionError("the AuthnRequest did not verify")
    scenario = query.get("scenario", "ok")
    user = users[query["user"]]
    args = server.response_args(request.message, [BINDING_HTTP_POST])
    if scenario == "never-sent":
        args["in_response_to"] = "id-we-never-sent-0123456789"
    if scenario == "unsolicited":
        args["in_response_to"] = None
    form_target = args["destination"]
    if scenario == "wrong-destination":  # Destination and Recipient name another service
        args["destination"] = "https://other.example/saml/acs/"
    response = server.create_authn_response(
        identity=user["attributes"],
        name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text=user["persistent_id"]),
        authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:Password"},
        release_policy=ScenarioPolicy(scenario, server.metadata),
        sign_alg=SIG_RSA_SHA256,
        digest_alg=DIGEST_SHA256,
        **_signing(scenario),
        **args,
    )
    http_args = server.apply_binding(
        BINDING_HTTP_POST, str(response), form_target, query.get("RelayState", ""),
        response=True,
    )  # fmt: skip
    return str(http_args["data"])


def application(server: Server, users: dict[str, Any]) -> Any:
    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        if path == "/metadata":
            body = create_metadata_string(
                None, config=server.config, valid=24, sign=True, sign_alg=SIG_RSA_SHA256,
                digest_alg=DIGEST_SHA256,
            )  # fmt: skip
            start_response("200 OK", [("Content-Type", "application/samlmetadata+xml")])
            return [body if isinstance(body, bytes) else body.encode()]
        if path == "/sso/redirect":
            try:
                page = single_sign_on(server, users, query)
            except Exception as error:  # the test reads the refusal in the log and the body
                print(f"refused: {error!r}", file=sys.stderr, flush=True)
                start_response("400 Bad Request", [("Content-Type", "text/plain")])
                return [f"refused: {error!r}".encode()]
            start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
            return [page.encode()]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]

    return app


def main() -> None:
    port, spec_path = int(sys.argv[1]), sys.argv[2]
    with open(spec_path, encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    server = idp_server(spec, f"http://127.0.0.1:{port}")
    httpd = make_server(
        "127.0.0.1", port, application(server, spec["users"]), handler_class=WSGIRequestHandler
    )
    httpd.serve_forever()


if __name__ == "__main__":
    main()
