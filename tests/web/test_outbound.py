"""The outbound address guard (web/outbound.py): only http(s) URLs, and only public addresses
after DNS resolution unless the deployment lists the network (VIVA_OUTBOUND_ALLOWED_NETWORKS);
a real HTTP server on 127.0.0.1 is the target, reached by every spelling of an internal address,
by redirects and by a name that re-resolves."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import given
from hypothesis import strategies as st

from tests.support.http_peer import http_peer
from web import outbound
from web.outbound import AddressRefused, check_ip, check_literal_host, parse, resolve

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
    "fd00:ec2::254",  # cloud metadata over IPv6
    "2002:7f00:1::",  # 6to4 wrapping 127.0.0.1
    "64:ff9b::7f00:1",  # NAT64 wrapping 127.0.0.1
    "::",
    # Embeddings and special ranges the interpreter's ipaddress tables may not know (Python
    # 3.12.1's is_global calls them public): the guard holds its own list.
    "::7f00:1",  # IPv4-compatible (deprecated) ::127.0.0.1
    "::a9fe:a9fe",  # IPv4-compatible ::169.254.169.254
    "::ffff:0:7f00:1",  # IPv4-translated (SIIT) 127.0.0.1
    "::ffff:0:a00:1",  # IPv4-translated (SIIT) 10.0.0.1
    "64:ff9b:1::a00:1",  # local-use NAT64 (RFC 8215), a campus's own translator
    "3fff::1",  # documentation (RFC 9637)
    "5f00::1",  # segment routing SIDs (RFC 9602)
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
    with pytest.raises(AddressRefused, match=r"not a public|metadata"):
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
    with pytest.raises(AddressRefused, match="not a public address"):
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


def spellings(port: int) -> list[str]:
    """Every way of naming this machine's loopback and unspecified addresses."""
    return [
        f"http://127.0.0.1:{port}/ok",
        f"http://localhost:{port}/ok",
        f"http://127.1:{port}/ok",
        f"http://2130706433:{port}/ok",  # 127.0.0.1 as one decimal number
        f"http://0x7f000001:{port}/ok",
        f"http://0.0.0.0:{port}/ok",
        f"http://[::1]:{port}/ok",
        f"http://[::ffff:127.0.0.1]:{port}/ok",
        f"http://localtest.localhost:{port}/ok",
    ]


def test_a_real_loopback_server_is_out_of_reach_by_any_spelling(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    with http_peer({"/ok": (200, {"secret": "internal"})}) as peer:
        for url in spellings(peer.port):
            with pytest.raises(AddressRefused):
                outbound.get(url, timeout=2)
        assert peer.hits == []


def test_the_allowance_reaches_the_peer_with_its_host_name(loopback_allowed: None) -> None:
    with http_peer({"/ok": (200, {"ok": True})}) as peer:
        response = outbound.get(peer.url("/ok"), timeout=2)
        assert response.status_code == 200 and response.json() == {"ok": True}
        assert peer.hits == ["/ok"]


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",  # metadata: refused even when allowed
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://10.0.0.1/admin",  # not in the allowance
        "gopher://127.0.0.1/",
    ],
)
def test_every_redirect_hop_is_checked_again(loopback_allowed: None, target: str) -> None:
    with http_peer({"/hop": (302, target)}) as peer:
        with pytest.raises(AddressRefused):
            outbound.get(peer.url("/hop"), timeout=2)
        assert peer.hits == ["/hop"]


def test_a_redirect_into_loopback_is_refused_without_the_allowance(settings: Any) -> None:
    """The first hop is allowed (the listed ::1 stands in for a public host); its redirect to
    127.0.0.1, not listed, is refused and never reaches the server there."""
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["::1/128"]
    with http_peer({"/ok": (200, {})}) as inner:
        with (
            http_peer({"/hop": (302, inner.url("/ok"))}, host="::1") as outer,
            pytest.raises(AddressRefused, match=r"127\.0\.0\.1"),
        ):
            outbound.get(outer.url("/hop"), timeout=2)
        assert outer.hits == ["/hop"] and inner.hits == []


def test_the_connection_goes_to_the_checked_address(
    loopback_allowed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name resolves to an allowed address when checked and to another
    afterwards; the request still reaches the checked one (it is never resolved again)."""
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1", "10.255.255.1", "10.255.255.1"])

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.test":
            address = next(answers)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, args[0]))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with http_peer({"/ok": (200, {"ok": True})}) as peer:
        response = outbound.get(f"http://rebind.test:{peer.port}/ok", timeout=2)
    assert response.json() == {"ok": True} and peer.hits == ["/ok"]


def test_one_listed_network_does_not_open_the_others(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = "127.0.0.0/8"
    assert check_ip("127.0.0.1") == "127.0.0.1"
    for address in ("10.0.0.1", "::1", "169.254.169.254", "fd00:ec2::254"):
        with pytest.raises(AddressRefused):
            check_ip(address)


def test_a_library_routed_through_the_guard_is_refused(settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = []
    facade = outbound.GuardedRequests()
    with http_peer({"/ok": (200, {})}) as peer:
        for call in (facade.get, facade.post):
            with pytest.raises(facade.exceptions.RequestException):
                call(peer.url("/ok"), timeout=2)
        with pytest.raises(AddressRefused):
            facade.Session().get(peer.url("/ok"))
        assert peer.hits == []
    with pytest.raises(AttributeError):
        facade.put  # noqa: B018 - only guarded calls are offered


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    """A certificate for ``name`` and its key (the certificate is its own CA)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize(("served", "ok"), [("peer.test", True), ("other.test", False)])
def test_https_to_the_checked_address_verifies_the_host_name(
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    served: str,
    ok: bool,
) -> None:
    """The connection goes to the checked IP address, yet TLS names and verifies the URL's
    host: a certificate for another name is refused."""
    real = socket.getaddrinfo

    def resolving(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "peer.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", args[0]))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolving)
    cert, key = self_signed(tmp_path, served)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with http_peer({"/ok": (200, {"ok": True})}, tls=context) as peer:
        url = f"https://peer.test:{peer.port}/ok"
        if ok:
            assert outbound.get(url, timeout=2, verify=str(cert)).json() == {"ok": True}
        else:
            with pytest.raises(requests.exceptions.SSLError):
                outbound.get(url, timeout=2, verify=str(cert))


def test_a_misspelt_allowance_fails_the_system_check(settings: Any) -> None:
    from config.checks import check_outbound_networks

    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    assert check_outbound_networks() == []
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["10.0.0/8x"]
    (error,) = check_outbound_networks()
    assert error.id == "viva.E021"
