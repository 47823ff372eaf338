"""``manage.py lti_register``: register an LMS (an LTI 1.3 platform) and activate its
deployments; prints the tool's URLs to enter in the LMS. ``--urls-only`` prints them alone;
``--dynamic-registration-url`` prints a Dynamic Registration URL carrying a token the tool
issued (``lti.dynamic_registration``: valid for a week by default), for an LMS administrator
who is not signed in to the tool."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.urls import reverse
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from lti.dynamic_registration import registration_token_issue
from lti.selectors import tool_urls


class Command(BaseCommand):
    help = "Register an LTI 1.3 platform (LMS) and print the tool's URLs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name")
        parser.add_argument("--issuer")
        parser.add_argument("--client-id")
        parser.add_argument("--auth-url", help="the platform's OIDC authorization endpoint")
        parser.add_argument("--token-url", help="the platform's OAuth2 access token URL")
        parser.add_argument("--keyset-url", help="the platform's public keyset (JWKS) URL")
        parser.add_argument("--audience", default="", help="token audience, when not token URL")
        parser.add_argument("--deployment", action="append", default=[], help="deployment id")
        parser.add_argument("--base-url", default=getattr(settings, "VIVA_PUBLIC_URL", ""))
        parser.add_argument("--urls-only", action="store_true")
        parser.add_argument("--dynamic-registration-url", action="store_true")

    # Any: Django types a command's options (argparse's values) as Any.
    def handle(self, *args: object, **options: Any) -> None:
        base = options["base_url"] or "http://127.0.0.1:8000"
        if options["dynamic_registration_url"]:
            url = f"{base.rstrip('/')}{reverse('lti:register')}?viva_token="
            self.stdout.write(url + registration_token_issue())
            return
        if options["urls_only"]:
            self._print(tool_urls(base))
            return
        required = ["name", "issuer", "client_id", "auth_url", "token_url", "keyset_url"]
        missing = [f"--{name.replace('_', '-')}" for name in required if not options[name]]
        if missing:
            raise CommandError("missing " + ", ".join(missing))
        with transaction.atomic():
            registration, _ = LtiRegistration.objects.update_or_create(
                issuer=options["issuer"],
                client_id=options["client_id"],
                defaults={
                    "name": options["name"],
                    "auth_url": options["auth_url"],
                    "token_url": options["token_url"],
                    "keyset_url": options["keyset_url"],
                    "audience": options["audience"],
                    "is_active": True,
                },
            )
            for deployment_id in options["deployment"]:
                LtiDeployment.objects.update_or_create(
                    registration=registration,
                    deployment_id=deployment_id,
                    defaults={"is_active": True},
                )
            if not Key.objects.active().exists():
                Key.objects.generate()
        self.stdout.write(f"Registered {registration.name} ({registration.uuid}).")
        self._print(tool_urls(base, registration))

    def _print(self, urls: dict[str, str]) -> None:
        for label, url in urls.items():
            self.stdout.write(f"  {label}: {url}")
