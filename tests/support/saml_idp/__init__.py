"""An independent SAML 2.0 identity provider for the SAML sign-in tests: pysaml2's IdP
(``saml2.server.Server``, serve.py) run as a separate process on 127.0.0.1 with its own key and
self-signed certificate (:func:`running_idp`), and the key pair our service provider signs with
(:func:`key_pair`)."""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from tests.support.processes import ROOT, free_port, listening_process, output_log


def key_pair(folder: Path, name: str) -> tuple[Path, Path]:
    """A new RSA key and a self-signed certificate for it, as PEM files in ``folder``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    key_file, cert_file = folder / f"{name}.key", folder / f"{name}.crt"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_file, cert_file


@dataclass(frozen=True)
class IdentityProvider:
    base: str
    cert_file: Path

    @property
    def entity_id(self) -> str:
        return f"{self.base}/idp"

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/metadata"


def idp_port() -> int:
    """The port the provider will listen on (known before our settings name its metadata)."""
    return free_port()


@contextmanager
def running_idp(
    *, port: int, folder: Path, sp_metadata: str, users: dict[str, Any]
) -> Iterator[IdentityProvider]:
    """Start the provider on ``port`` trusting the service provider of ``sp_metadata`` and
    signing in ``users`` ({name: {"persistent_id", "attributes"}}); stop it afterwards."""
    key_file, cert_file = key_pair(folder, "idp")
    sp_file = folder / "sp-metadata.xml"
    sp_file.write_text(sp_metadata, encoding="utf-8")
    spec = folder / "idp-spec.json"
    spec.write_text(
        json.dumps(
            {
                "key_file": str(key_file),
                "cert_file": str(cert_file),
                "sp_metadata_file": str(sp_file),
                "users": users,
            }
        ),
        encoding="utf-8",
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tests.support.saml_idp.serve", str(port), str(spec)]
    log = output_log("saml-idp", port)
    with listening_process(argv, port=port, env=env, log=log, timeout=60):
        yield IdentityProvider(f"http://127.0.0.1:{port}", cert_file)
