"""Run the test OpenID Connect provider: ``python -m tests.support.oidc_provider.serve PORT SPEC``.

``SPEC`` is a JSON file: ``{"client": {"id", "secret", "redirectUri"}, "users": [{"username",
"password", "email", "name", "groups": [...]}]}``. The database (SQLite, ``OIDC_PROVIDER_DB``)
is migrated and filled, then a threaded WSGI server answers on 127.0.0.1:PORT until killed.
"""

from __future__ import annotations

import json
import os
import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write("oidc-provider: " + (format % args) + "\n")


def setup(spec: dict) -> None:  # type: ignore[type-arg]
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0, interactive=False)
    for item in spec["users"]:
        user = User.objects.create_user(
            item["username"], email=item.get("email", ""), password=item["password"]
        )
        user.first_name = item.get("name", "")
        user.save()
        for name in item.get("groups", []):
            user.groups.add(Group.objects.get_or_create(name=name)[0])
    client = spec["client"]
    Application.objects.create(
        client_id=client["id"],
        client_secret=client["secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=client["redirectUri"],
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
        name="viva",
    )


def main() -> None:
    port = int(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as handle:
        spec = json.load(handle)
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.support.oidc_provider.settings"
    import django
    from django.core.wsgi import get_wsgi_application

    django.setup()
    setup(spec)
    server = make_server(
        "127.0.0.1", port, get_wsgi_application(), ThreadingServer, handler_class=QuietHandler
    )
    print(f"oidc provider on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
