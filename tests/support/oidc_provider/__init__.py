"""An independent OpenID Connect provider for the single sign-on tests: django-oauth-toolkit's
OIDC provider in a small project of its own, run as a separate process on 127.0.0.1
(:func:`running_provider`)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.processes import ROOT, free_port, listening_process, output_log


@dataclass(frozen=True)
class Provider:
    base: str
    issuer: str
    client_id: str
    client_secret: str

    def settings(self) -> dict[str, Any]:
        """Our relying-party settings for this provider."""
        return {
            "VIVA_OIDC_ISSUER": self.issuer,
            "OIDC_RP_CLIENT_ID": self.client_id,
            "OIDC_RP_CLIENT_SECRET": self.client_secret,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.issuer}/authorize/",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.issuer}/token/",
            "OIDC_OP_USER_ENDPOINT": f"{self.issuer}/userinfo/",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.issuer}/.well-known/jwks.json",
            # The provider runs on 127.0.0.1: the outbound guard (web/outbound.py) allows it.
            "VIVA_OUTBOUND_ALLOWED_NETWORKS": ["127.0.0.0/8"],
        }


def _private_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@contextmanager
def running_provider(*, users: list[dict[str, Any]], redirect_uri: str) -> Iterator[Provider]:
    """Start the provider with ``users`` and one confidential client redirecting to
    ``redirect_uri``; stop it afterwards."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    provider = Provider(base, f"{base}/o", "viva-test-client", "viva-test-secret-0123456789")
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.json"
        spec.write_text(
            json.dumps(
                {
                    "client": {
                        "id": provider.client_id,
                        "secret": provider.client_secret,
                        "redirectUri": redirect_uri,
                    },
                    "users": users,
                }
            ),
            encoding="utf-8",
        )
        env = {
            "PATH": "/usr/bin:/bin",
            "OIDC_PROVIDER_DB": str(Path(folder) / "provider.sqlite3"),
            "OIDC_PROVIDER_KEY": _private_key(),
            "OIDC_PROVIDER_ISSUER": provider.issuer,
            "PYTHONPATH": str(ROOT),
        }
        argv = [sys.executable, "-m", "tests.support.oidc_provider.serve", str(port), str(spec)]
        log = output_log("oidc-provider", port)
        with listening_process(argv, port=port, env=env, log=log, timeout=60):
            yield provider
