"""System checks for configuration invariants.

``manage.py check --deploy`` fails (exit 1) on any of the errors tagged ``deploy``, so a
production start-up script that runs it refuses an insecure configuration.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

from ioa.languages import SUPPORTED_LANGUAGES
from web.outbound import allowed_networks


@checks.register(checks.Tags.security, deploy=True)
def check_production_secrets(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """A deployment needs a real secret key and DEBUG off."""
    errors: list[checks.CheckMessage] = []
    key = settings.SECRET_KEY or ""
    if key.startswith(settings.INSECURE_SECRET_KEY_PREFIX) or len(key) < 50 or len(set(key)) < 5:
        errors.append(
            checks.Error(
                "DJANGO_SECRET_KEY is the built-in development key or too weak.",
                hint="Set DJANGO_SECRET_KEY to 50+ random characters, e.g. the output of "
                "`python -c 'import secrets; print(secrets.token_urlsafe(64))'`.",
                id="viva.E001",
            )
        )
    if len(str(getattr(settings, "VIVA_CHAIN_KEY", "") or "")) < 32:
        errors.append(
            checks.Error(
                "VIVA_CHAIN_KEY is not set (or shorter than 32 characters).",
                hint="Set VIVA_CHAIN_KEY to 32+ random characters kept outside the database; it "
                "signs the event-log head anchors (docs/spec/audit-chain.md).",
                id="viva.E010",
            )
        )
    if settings.DEBUG:
        errors.append(
            checks.Error(
                "DEBUG is on in a deployment.",
                hint="Set DJANGO_DEBUG=false.",
                id="viva.E002",
            )
        )
    return errors


@checks.register(checks.Tags.security, deploy=True)
def check_production_services(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """A deployment runs on Postgres and Redis; SQLite and in-memory layers are for one machine."""
    errors: list[checks.CheckMessage] = []
    if not settings.DATABASE_URL:
        errors.append(
            checks.Error(
                "No DATABASE_URL: the embedded SQLite database is not for deployments.",
                hint="Set DATABASE_URL=postgres://user:password@host:5432/dbname.",
                id="viva.E003",
            )
        )
    if not settings.REDIS_URL:
        errors.append(
            checks.Error(
                "No REDIS_URL: the in-memory channel layer cannot span processes.",
                hint="Set REDIS_URL=redis://host:6379/0.",
                id="viva.E004",
            )
        )
    return errors


@checks.register(checks.Tags.security, deploy=True)
def check_production_hosts_and_cookies(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """No wildcard host (it would also let any Origin open a WebSocket) and cookies that only
    travel over HTTPS and never reach scripts."""
    errors: list[checks.CheckMessage] = []
    wild = [h for h in settings.ALLOWED_HOSTS if "*" in h or h.strip() in {"", "."}]
    if wild:
        errors.append(
            checks.Error(
                f"DJANGO_ALLOWED_HOSTS holds a wildcard ({', '.join(repr(h) for h in wild)}).",
                hint="List the exact host names, e.g. DJANGO_ALLOWED_HOSTS=viva.example.edu.",
                id="viva.E007",
            )
        )
    insecure = [
        name
        for name in ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY")
        if not getattr(settings, name, False)
    ]
    if insecure:
        errors.append(
            checks.Error(
                f"Insecure cookies: {', '.join(insecure)} off.",
                hint="Unset DJANGO_SECURE_COOKIES (it follows DEBUG) or set it to true.",
                id="viva.E008",
            )
        )
    return errors


@checks.register(checks.Tags.security, deploy=True)
def check_production_origin(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """WebSocket origins are matched exactly against VIVA_PUBLIC_URL: it must be the https
    address users open."""
    if not settings.VIVA_PUBLIC_URL.startswith("https://"):
        return [
            checks.Error(
                f"VIVA_PUBLIC_URL={settings.VIVA_PUBLIC_URL!r} is not an https:// address.",
                hint="Set VIVA_PUBLIC_URL to the address users open, e.g. https://viva.example.edu.",
                id="viva.E009",
            )
        ]
    return []


@checks.register()
def check_bot_runner(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """The Celery bot runner needs a broker that other processes can reach."""
    if settings.VIVA_BOT_RUNNER not in {"inline", "celery"}:
        return [
            checks.Error(
                f"VIVA_BOT_RUNNER={settings.VIVA_BOT_RUNNER!r} is not a runner.",
                hint="Use 'inline' or 'celery'.",
                id="viva.E005",
            )
        ]
    if settings.VIVA_BOT_RUNNER == "celery" and settings.CELERY_TASK_ALWAYS_EAGER:
        return [
            checks.Error(
                "VIVA_BOT_RUNNER=celery but no broker is configured, so no worker could run bots.",
                hint="Set REDIS_URL, or use VIVA_BOT_RUNNER=inline.",
                id="viva.E006",
            )
        ]
    return []


@checks.register()
def check_languages(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """The site's languages are exactly the ones exams can be conducted in (docs/i18n.md): a
    language with runtime tables but no page translations, or the reverse, is refused."""
    site = [code for code, _ in settings.LANGUAGES]
    if sorted(site) == sorted(SUPPORTED_LANGUAGES):
        return []
    return [
        checks.Error(
            f"settings.LANGUAGES {site} differ from ioa.languages.SUPPORTED_LANGUAGES "
            f"{list(SUPPORTED_LANGUAGES)}.",
            hint="Add a language in both places (and its runtime table, classifier vocabulary "
            "and catalogues), or in neither.",
            id="viva.E020",
        )
    ]


@checks.register()
def check_outbound_networks(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """VIVA_OUTBOUND_ALLOWED_NETWORKS must name networks (web/outbound.py); a typo would make
    every server-side fetch fail."""
    try:
        allowed_networks()
    except ValueError as error:
        return [
            checks.Error(
                f"VIVA_OUTBOUND_ALLOWED_NETWORKS is not a list of networks: {error}",
                hint="Use CIDR networks separated by commas, e.g. 10.20.0.0/16,fd12::/64.",
                id="viva.E021",
            )
        ]
    return []


@checks.register()
def check_redis_sentinels(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """VIVA_REDIS_SENTINELS must be host:port entries and name its master (config/settings.py):
    a typo would leave a Sentinel unasked, and without a master name none can be found."""
    errors: list[checks.CheckMessage] = []
    if settings.REDIS_SENTINELS_MALFORMED:
        errors.append(
            checks.Error(
                f"VIVA_REDIS_SENTINELS={settings.VIVA_REDIS_SENTINELS!r} has entries that are "
                f"not host:port: {', '.join(repr(e) for e in settings.REDIS_SENTINELS_MALFORMED)}.",
                hint="List the Sentinels as host:port separated by commas, e.g. "
                "10.0.0.5:26379,10.0.0.6:26379 ([::1]:26379 for IPv6).",
                id="viva.E022",
            )
        )
    if settings.REDIS_SENTINELS and not settings.VIVA_REDIS_SENTINEL_MASTER:
        errors.append(
            checks.Error(
                "VIVA_REDIS_SENTINELS is set but VIVA_REDIS_SENTINEL_MASTER is not.",
                hint="Set VIVA_REDIS_SENTINEL_MASTER to the master's name in the Sentinels' "
                "'sentinel monitor <name> ...' line.",
                id="viva.E023",
            )
        )
    return errors
