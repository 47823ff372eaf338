"""Staff SAML 2.0 sign-in (accounts.saml) against an independent identity provider: pysaml2's
own IdP, run as a separate process on 127.0.0.1 with its own key (tests/support/saml_idp).

Our site is Django's test client; the person's browser at the provider is ``requests``: it follows
our signed AuthnRequest (HTTP-Redirect) to the provider, which answers with the HTTP-POST
binding's form; the test posts that form to our assertion consumer service, as the browser would.
Our service provider fetches the provider's metadata over HTTP."""

from __future__ import annotations

import base64
import html
import logging
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import requests
from django.conf import settings as django_settings
from django.core.cache import cache
from django.test import Client, override_settings

from accounts.models import User
from accounts.saml import BROWSER_COOKIE, check_saml, sp_metadata
from accounts.saml import username_for as saml_username
from tests.factories import PASSWORD, AdminFactory
from tests.support.saml_idp import IdentityProvider, idp_port, key_pair, running_idp

pytestmark = pytest.mark.django_db

ACS = "http://testserver/accounts/saml/acs/"
PROCTOR_ENTITLEMENT = "urn:mace:uni.example:entitlement:viva-proctor"
ROLE_MAP = {"faculty": "author", PROCTOR_ENTITLEMENT: "proctor", "viva-admins": "admin"}
USERS = {
    "lena": {"persistent_id": "p-lena", "attributes": {
        "eduPersonAffiliation": ["member", "faculty"], "mail": ["lena@uni.example"],
        "displayName": ["Lena Lecturer"]}},
    "ivan": {"persistent_id": "p-ivan", "attributes": {
        "eduPersonAffiliation": ["member", "staff"], "mail": ["ivan@uni.example"],
        "eduPersonEntitlement": [PROCTOR_ENTITLEMENT], "displayName": ["Ivan Invigilator"]}},
    "admin": {"persistent_id": "p-admin", "attributes": {
        "eduPersonAffiliation": ["faculty"], "groups": ["viva-admins"],
        "mail": ["it@uni.example"], "displayName": ["IT Admin"]}},
    "sam": {"persistent_id": "p-sam", "attributes": {
        "eduPersonAffiliation": ["member", "student"], "mail": ["sam@uni.example"],
        "displayName": ["Sam Student"]}},
}  # fmt: skip


@pytest.fixture(scope="module")
def saml_setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The provider running, and the settings that make our service provider trust it."""
    folder: Path = tmp_path_factory.mktemp("saml")
    sp_key, sp_cert = key_pair(folder, "sp")
    port = idp_port()
    settings = {
        "VIVA_SAML_IDPS": {
            "uni": {
                "entity_id": f"http://127.0.0.1:{port}/idp",
                "metadata_url": f"http://127.0.0.1:{port}/metadata",
                "name": "Test University",
                "role_map": ROLE_MAP,
            }
        },
        "VIVA_SAML_KEY_FILE": str(sp_key),
        "VIVA_SAML_CERT_FILE": str(sp_cert),
        "VIVA_SAML_BASE_URL": "",
        "VIVA_OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8",  # the provider runs on 127.0.0.1
    }
    with override_settings(**settings):
        metadata = sp_metadata("http://testserver")
    with running_idp(port=port, folder=folder, sp_metadata=metadata, users=USERS) as idp:
        yield {"idp": idp, "settings": settings}


@pytest.fixture
def idp(saml_setup: dict[str, Any]) -> Iterator[IdentityProvider]:
    with override_settings(**saml_setup["settings"]):
        yield saml_setup["idp"]


def start(client: Client, next_path: str = "") -> str:
    """Our AuthnRequest: the provider's URL the browser is sent to."""
    response = client.get("/accounts/saml/uni/login/" + (f"?next={next_path}" if next_path else ""))
    assert response.status_code == 302, response.content
    location = str(response["Location"])
    assert "SAMLRequest=" in location and "Signature=" in location and "SigAlg=" in location
    return location


def at_provider(location: str, user: str, scenario: str = "ok") -> dict[str, str]:
    """What the browser does at the provider: the form it is given to post back to us."""
    page = requests.get(
        location + "&" + urlencode({"user": user, "scenario": scenario}), timeout=10
    )
    assert page.status_code == 200, page.text
    action = re.search(r'action="([^"]+)"', page.text)
    assert action is not None and html.unescape(action.group(1)) == ACS, page.text
    fields = re.findall(r'name="(\w+)" value="([^"]*)"', page.text)
    return {name: html.unescape(value) for name, value in fields}


def sign_in(client: Client, user: str, scenario: str = "ok") -> Any:
    form = at_provider(start(client), user, scenario)
    return client.post("/accounts/saml/acs/", form)


def assert_refused(
    client: Client, response: Any, caplog: pytest.LogCaptureFixture, why: str
) -> None:
    assert response.status_code in {400, 403}, response.status_code
    assert "did not sign you in" in response.content.decode()
    assert "_auth_user_id" not in client.session
    session_cookie = response.cookies.get(django_settings.SESSION_COOKIE_NAME)
    assert session_cookie is None or session_cookie.value == ""  # none left, none made
    refusals = [r.getMessage() for r in caplog.records if "SAML sign-in refused" in r.getMessage()]
    assert refusals and why in refusals[-1], refusals


@pytest.mark.parametrize(
    ("user", "role", "lands"),
    [
        ("lena", "author", "/studio/"),
        ("ivan", "proctor", "/proctor/"),
        ("admin", "admin", "/admin/"),
    ],
)
def test_staff_sign_in_with_the_mapped_role(
    idp: IdentityProvider, client: Client, user: str, role: str, lands: str
) -> None:
    response = sign_in(client, user)
    assert response.status_code == 302, response.content
    home = client.get(response["Location"], follow=True)
    email = "it@uni.example" if user == "admin" else f"{user}@uni.example"
    account = User.objects.get(email=email)
    assert account.role == role and not account.has_usable_password()
    assert account.username.startswith("saml-") and account.username != user
    assert home.status_code == 200 and home.request["PATH_INFO"].startswith(lands)
    assert int(client.session["_auth_user_id"]) == account.pk


def test_a_provider_admin_never_becomes_the_local_admin(
    idp: IdentityProvider, client: Client
) -> None:
    local = AdminFactory(username="admin")
    assert sign_in(client, "admin").status_code == 302
    local.refresh_from_db()
    assert local.check_password(PASSWORD)
    assert User.objects.get(email="it@uni.example").pk != local.pk


def test_our_authn_request_is_signed_and_checked_by_the_provider(
    idp: IdentityProvider, client: Client
) -> None:
    location = start(client)
    forged = re.sub(r"Signature=[^&]+", "Signature=AAAA", location)
    unsigned = re.sub(r"&Signature=[^&]+", "", location)
    for url in (forged, unsigned):
        answer = requests.get(url + "&" + urlencode({"user": "lena"}), timeout=10)
        assert answer.status_code == 400 and "refused" in answer.text
    assert at_provider(location, "lena")["SAMLResponse"]  # the one we signed is accepted


def test_next_is_followed_after_sign_in(idp: IdentityProvider, client: Client) -> None:
    form = at_provider(start(client, "/studio/"), "lena")
    assert client.post("/accounts/saml/acs/", form)["Location"] == "/studio/"


def test_metadata_is_published_and_signed(
    idp: IdentityProvider, client: Client, tmp_path: Path
) -> None:
    response = client.get("/accounts/saml/metadata/")
    assert response.status_code == 200
    xml = response.content.decode()
    assert 'entityID="http://testserver/accounts/saml/metadata/"' in xml
    assert f'Location="{ACS}"' in xml and 'AuthnRequestsSigned="true"' in xml
    assert 'WantAssertionsSigned="true"' in xml
    signed = tmp_path / "metadata.xml"
    signed.write_text(xml, encoding="utf-8")
    verify = [
        "xmlsec1", "--verify", "--pubkey-cert-pem", django_settings.VIVA_SAML_CERT_FILE,
        "--id-attr:ID", "urn:oasis:names:tc:SAML:2.0:metadata:EntityDescriptor", str(signed),
    ]  # fmt: skip
    assert subprocess.run(verify, capture_output=True, check=False).returncode == 0
    signed.write_text(xml.replace("testserver/accounts/saml/acs", "evil.example/acs"), "utf-8")
    assert subprocess.run(verify, capture_output=True, check=False).returncode != 0


def test_an_unsigned_assertion_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", "unsigned")
    assert_refused(client, response, caplog, "Signature missing")
    assert not User.objects.filter(email="lena@uni.example").exists()


def test_a_signed_response_with_an_unsigned_assertion_is_refused_by_default(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", "response-signed")
    assert_refused(client, response, caplog, "Signature missing")
    with override_settings(VIVA_SAML_REQUIRE_SIGNED_ASSERTIONS=False):
        assert sign_in(client, "lena", "response-signed").status_code == 302
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            response = sign_in(client, "lena", "unsigned")
        assert_refused(client, response, caplog, "did not verify")


def test_a_wrong_audience_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", "wrong-audience")
    assert_refused(client, response, caplog, "AudienceRestrictions")


def test_a_response_for_another_service_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", "wrong-destination")
    assert_refused(client, response, caplog, "destination 'https://other.example/saml/acs/'")


def test_an_expired_assertion_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", "expired")
    assert_refused(client, response, caplog, "too old")


def test_an_assertion_not_yet_valid_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", "not-yet-valid")  # NotBefore 30 min ahead
    assert_refused(client, response, caplog, "Can't use response yet")
    assert not User.objects.filter(email="lena@uni.example").exists()


def _assertion(xml: str) -> str:
    found = re.search(r"<(\w+:)?Assertion\b.*?</(\w+:)?Assertion>", xml, re.S)
    assert found is not None, xml
    return found.group(0)


def _post_xml(client: Client, xml: str) -> Any:
    return client.post(
        "/accounts/saml/acs/", {"SAMLResponse": base64.b64encode(xml.encode()).decode()}
    )


def test_a_second_assertion_or_a_wrapped_signature_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Signature wrapping: an unsigned assertion for another subject beside the signed one
    (before it), or carrying the signed one's signature with the signed one in its Advice."""
    signature = r"<(?:\w+:)?Signature\b.*?</(?:\w+:)?Signature>"
    attacks = []
    for kind in ("beside", "advice"):
        xml = base64.b64decode(at_provider(start(client), "lena")["SAMLResponse"]).decode()
        signed = _assertion(xml)
        forged = re.sub(signature, "", signed, flags=re.S).replace('ID="', 'ID="forged-', 1)
        forged = forged.replace("p-lena", "p-mallory")
        if kind == "advice":
            issuer_end = re.search(r"</(?:\w+:)?Issuer>", forged)
            prefix = re.match(r"<(\w+:)?", forged)
            assert issuer_end is not None and prefix is not None
            ns = prefix.group(1) or ""
            moved = re.search(signature, signed, re.S)
            assert moved is not None
            cut = issuer_end.end()
            forged = forged[:cut] + moved.group(0) + forged[cut:]
            close = forged.rfind(f"</{ns}Assertion>")
            forged = forged[:close] + f"<{ns}Advice>{signed}</{ns}Advice>" + forged[close:]
            attacks.append(xml.replace(signed, forged))
        else:
            attacks.append(xml.replace(signed, forged + signed))
    for xml in attacks:
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            response = _post_xml(client, xml)
        assert_refused(client, response, caplog, "did not verify")
    assert not User.objects.filter(username__startswith="saml-").exists()


def test_a_response_started_in_another_browser_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Login CSRF: an attacker starts a sign-in in their browser, signs in at the provider as
    themselves, and makes the victim's browser post the answer: the victim must not end up
    in the attacker's account. The answer is also used up (its own browser cannot use it)."""
    attacker = Client()
    form = at_provider(start(attacker), "lena")
    with caplog.at_level(logging.WARNING):
        response = client.post("/accounts/saml/acs/", form)
    assert_refused(client, response, caplog, "another browser")
    assert not User.objects.filter(email="lena@uni.example").exists()
    assert attacker.post("/accounts/saml/acs/", form).status_code == 403


def test_the_browser_cookie_survives_the_providers_cross_site_post(
    idp: IdentityProvider, client: Client
) -> None:
    """The provider posts to us from its own site: the cookie tying the answer to the browser
    is sent with that POST only as ``SameSite=None; Secure`` (over HTTPS)."""
    response = client.get("/accounts/saml/uni/login/", secure=True)
    cookie = response.cookies[BROWSER_COOKIE]
    assert cookie["samesite"] == "None" and cookie["secure"] and cookie["httponly"]
    assert cookie["path"] == "/accounts/saml/"
    again = client.get("/accounts/saml/uni/login/", secure=True)  # a second tab: same key
    assert again.cookies[BROWSER_COOKIE].value == cookie.value


def test_a_replayed_response_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    form = at_provider(start(client), "lena")
    assert client.post("/accounts/saml/acs/", form).status_code == 302
    for replayer in (client, Client()):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            response = replayer.post("/accounts/saml/acs/", form)
        assert_refused(replayer, response, caplog, "never sent or already used")


@pytest.mark.parametrize("scenario", ["never-sent", "unsolicited"])
def test_a_response_to_a_request_we_never_sent_is_refused(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture, scenario: str
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "lena", scenario)
    why = "never sent" if scenario == "never-sent" else "unsolicited"
    assert_refused(client, response, caplog, why)
    assert not User.objects.filter(email="lena@uni.example").exists()


def test_an_unknown_affiliation_is_refused_and_an_account_deactivated(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = sign_in(client, "sam", "ok")
    assert_refused(client, response, caplog, "no staff role")
    assert not User.objects.filter(email="sam@uni.example").exists()
    assert sign_in(client, "lena").status_code == 302
    lena = User.objects.get(email="lena@uni.example")
    # Lena leaves the faculty: her next sign-in is refused and her account deactivated.
    provider = {**django_settings.VIVA_SAML_IDPS["uni"], "role_map": {"nobody": "author"}}
    with override_settings(VIVA_SAML_IDPS={"uni": provider}):
        assert sign_in(Client(), "lena").status_code == 403
    lena.refresh_from_db()
    assert not lena.is_active


def test_a_tampered_or_garbled_response_is_refused_never_a_500(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    form = at_provider(start(client), "lena")
    xml = base64.b64decode(form["SAMLResponse"]).replace(b"Lena Lecturer", b"Mallory Admin")
    with caplog.at_level(logging.WARNING):
        response = client.post(
            "/accounts/saml/acs/", {"SAMLResponse": base64.b64encode(xml).decode()}
        )
    assert_refused(client, response, caplog, "did not verify")
    for garbage in ("", "%%%not-base64", base64.b64encode(b"<x><!ENTITY a 'b'></x>").decode()):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            response = client.post("/accounts/saml/acs/", {"SAMLResponse": garbage})
        assert_refused(client, response, caplog, "")


def test_a_get_at_the_assertion_consumer_service_is_the_refusal_page(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        response = client.get("/accounts/saml/acs/")
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert "did not sign you in" in response.content.decode()


def test_a_missing_id_attribute_is_refused_and_a_released_one_names_the_account(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    uni = django_settings.VIVA_SAML_IDPS["uni"]
    with override_settings(
        VIVA_SAML_IDPS={"uni": {**uni, "id_attribute": "eduPersonPrincipalName"}}
    ):
        with caplog.at_level(logging.WARNING):
            response = sign_in(client, "lena")
        assert_refused(client, response, caplog, "'eduPersonPrincipalName' was not released")
    with override_settings(VIVA_SAML_IDPS={"uni": {**uni, "id_attribute": "mail"}}):
        assert sign_in(client, "lena").status_code == 302
    entity_id = str(uni["entity_id"])
    assert User.objects.get(email="lena@uni.example").username == saml_username(
        entity_id, "lena@uni.example"
    )


def test_saml_urls_are_404_while_off(client: Client) -> None:
    with override_settings(VIVA_SAML_IDPS={}):
        assert client.get("/accounts/saml/uni/login/").status_code == 404
        assert client.post("/accounts/saml/acs/").status_code == 404
        assert client.get("/accounts/saml/metadata/").status_code == 404


def test_the_sign_in_page_offers_each_provider(idp: IdentityProvider, client: Client) -> None:
    page = client.get("/accounts/login/?next=/studio/").content.decode()
    assert "Sign in with Test University" in page
    assert 'href="/accounts/saml/uni/login/?next=%2Fstudio%2F"' in page
    with override_settings(VIVA_SAML_IDPS={}):
        assert "/accounts/saml/" not in client.get("/accounts/login/").content.decode()


def test_signed_metadata_is_trusted_only_under_the_configured_certificate(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    uni = django_settings.VIVA_SAML_IDPS["uni"]
    with override_settings(VIVA_SAML_IDPS={"uni": {**uni, "metadata_cert": str(idp.cert_file)}}):
        assert sign_in(client, "lena").status_code == 302
    wrong = str(django_settings.VIVA_SAML_CERT_FILE)  # our own certificate, not the signer's
    with override_settings(VIVA_SAML_IDPS={"uni": {**uni, "metadata_cert": wrong}}):
        with caplog.at_level(logging.WARNING):
            response = client.get("/accounts/saml/uni/login/")
        assert_refused(client, response, caplog, "metadata of uni refused")


def test_the_system_check_refuses_an_incomplete_configuration() -> None:
    with override_settings(VIVA_SAML_IDPS={}):
        assert check_saml() == []
    broken = {"uni": {"role_map": "faculty=candidate"}}
    with override_settings(VIVA_SAML_IDPS=broken, VIVA_SAML_KEY_FILE="", VIVA_SAML_CERT_FILE=""):
        messages = [message.msg for message in check_saml()]
    assert {message.split(" ")[-1] for message in messages} >= {"entity_id", "metadata_file"}
    assert any("grants candidate" in message for message in messages)
    assert any("VIVA_SAML_KEY_FILE" in message for message in messages)


def test_metadata_is_fetched_only_from_a_public_address(
    idp: IdentityProvider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    cache.clear()  # the provider's metadata, kept from an earlier test
    with override_settings(VIVA_OUTBOUND_ALLOWED_NETWORKS=""):
        with caplog.at_level(logging.WARNING):
            response = client.get("/accounts/saml/uni/login/")
        assert_refused(client, response, caplog, "metadata of uni unavailable")
    assert sign_in(client, "lena").status_code == 302
