"""Settings, read from the environment in one place.

Two shapes, chosen by what the environment provides (see docs/architecture.md):

* embedded default (nothing set): SQLite under ``var/``, the in-memory channel layer, bots run
  inline in the ASGI process and Celery tasks run eagerly in-process;
* real services: ``DATABASE_URL`` (Postgres through psycopg 3) and ``REDIS_URL`` (Channels Redis
  layer, Celery broker and result backend).

Every variable is listed in docs/configuration.md. Invariants are enforced by system checks in
``config.checks`` (``manage.py check --deploy`` fails on an insecure production configuration).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dj_database_url
import django_stubs_ext

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VIVA_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean variable; accepts 1/0, true/false, yes/no, on/off (any case)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean; use true or false")


def env_list(name: str, default: list[str]) -> list[str]:
    """Read a comma-separated list variable."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# Marks the built-in development key; config.checks refuses it in a deploy check.
INSECURE_SECRET_KEY_PREFIX = "django-insecure-"  # noqa: S105 (a marker, not a secret)

DEBUG = env_bool("DJANGO_DEBUG", default=True)
SECRET_KEY = os.environ.get(
    "DJANGO_SECRET_KEY", INSECURE_SECRET_KEY_PREFIX + "embedded-default-do-not-deploy"
)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# Generic Django classes (ModelAdmin[M], QuerySet[M], ...) are subscriptable at run time, as
# django-stubs types them.
django_stubs_ext.monkeypatch()

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "config.apps.ConfigAppConfig",
    "accounts",
    "authoring",
    "publishing",
    "sessions.apps.ExamSessionsConfig",
    "proctoring",
    "bot",
    "marking",
    "lti_tool",
    "lti",
    "webhooks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The browser's language for staff pages; candidate pages use the exam's (docs/i18n.md).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    # A body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413: the JSON one on /api/, the site's page
    # elsewhere (web/body_limit.py; config.urls.handler400 for bodies read later).
    "web.body_limit.BodyLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.login_throttle.LoginLockoutMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    # A Redis, broker or database outage is a clear 503, never a traceback (web/unavailable.py).
    "web.unavailable.ServiceUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",  # {{ csp_nonce }}
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
# Behind a transaction-pooling PgBouncer (docs/operations.md "PgBouncer"): consecutive
# transactions of one Django connection may run on different server connections, so no
# server-side cursors, and no prepared statements unless the pooler keeps them (PgBouncer 1.21+
# with max_prepared_statements: VIVA_DB_PREPARED_STATEMENTS=1).
VIVA_DB_TRANSACTION_POOLING = os.environ.get("VIVA_DB_TRANSACTION_POOLING", "") in {"1", "true"}
VIVA_DB_PREPARED_STATEMENTS = os.environ.get(
    "VIVA_DB_PREPARED_STATEMENTS", "0" if VIVA_DB_TRANSACTION_POOLING else "1"
) in {"1", "true"}
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = VIVA_DB_TRANSACTION_POOLING
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(Path(os.environ.get("VIVA_SQLITE_PATH", VAR_DIR / "viva.sqlite3"))),
            # WAL lets the ASGI server read while an inline bot writes.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL;",
            },
            # A file, not memory, so server processes started by tests share the test database.
            "TEST": {"NAME": str(VAR_DIR / "test_viva.sqlite3")},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: channel layer, Celery, cache ---------------------------------------------------------
# Redis Sentinel (docs/operations.md, "Redis failover"): with VIVA_REDIS_SENTINELS set, every Redis
# user (channel layer, cache, Celery broker and results, /healthz) asks these Sentinels for the
# current master of VIVA_REDIS_SENTINEL_MASTER instead of connecting to REDIS_URL's host, so a
# failover needs no restart. REDIS_URL then only gives the master's user, password and database
# number (its host and port are not used; unset, it is redis://<master name>/0).
VIVA_REDIS_SENTINELS = os.environ.get("VIVA_REDIS_SENTINELS", "").strip()
VIVA_REDIS_SENTINEL_MASTER = os.environ.get("VIVA_REDIS_SENTINEL_MASTER", "").strip()
VIVA_REDIS_SENTINEL_PASSWORD = os.environ.get("VIVA_REDIS_SENTINEL_PASSWORD", "")
SENTINEL_DEFAULT_PORT = 26379


def parse_sentinels(raw: str) -> tuple[list[tuple[str, int]], list[str]]:
    """``host:port,host:port`` (``host`` alone: port 26379; IPv6 as ``[::1]:26379``) -> the
    well-formed addresses and the malformed entries (config.checks reports them: viva.E022)."""
    sentinels: list[tuple[str, int]] = []
    malformed: list[str] = []
    for entry in (item.strip() for item in raw.split(",") if item.strip()):
        match = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?", entry)
        port = int(match.group(2) or SENTINEL_DEFAULT_PORT) if match else 0
        if match is None or not 0 < port < 65536:
            malformed.append(entry)
            continue
        sentinels.append((match.group(1).strip("[]"), port))
    return sentinels, malformed


REDIS_SENTINELS, REDIS_SENTINELS_MALFORMED = parse_sentinels(VIVA_REDIS_SENTINELS)
if VIVA_REDIS_SENTINELS and not REDIS_SENTINELS:
    # Nothing to ask for the master: every Redis user would fail. Refused like a bad boolean.
    raise ValueError(
        f"VIVA_REDIS_SENTINELS={VIVA_REDIS_SENTINELS!r} names no Sentinel; "
        "use host:port,host:port (e.g. 10.0.0.5:26379,10.0.0.6:26379)"
    )
REDIS_URL = os.environ.get("REDIS_URL", "").strip() or (
    f"redis://{VIVA_REDIS_SENTINEL_MASTER or 'sentinel'}/0" if REDIS_SENTINELS else ""
)
SERVICES_MODE = "services" if (DATABASE_URL and REDIS_URL) else "embedded"

# What a connection to the master sends (REDIS_URL's user, password, database), and how a
# connection to a Sentinel is made (it answers in milliseconds or is down: 2 s timeouts).
_redis_url = urlsplit(REDIS_URL)
REDIS_MASTER_CREDENTIALS: dict[str, str | int] = {
    "db": int(_redis_url.path.strip("/") or 0) if REDIS_SENTINELS else 0,
    **({"username": unquote(_redis_url.username)} if _redis_url.username else {}),
    **({"password": unquote(_redis_url.password)} if _redis_url.password else {}),
}
REDIS_SENTINEL_KWARGS: dict[str, str | float] = {
    "socket_timeout": 2,
    "socket_connect_timeout": 2,
    **({"password": VIVA_REDIS_SENTINEL_PASSWORD} if VIVA_REDIS_SENTINEL_PASSWORD else {}),
}
# channels_redis finds the master through the Sentinels itself (channels_redis.utils.create_pool).
_channel_redis_host: dict[str, object] = (
    {
        "sentinels": REDIS_SENTINELS,
        "master_name": VIVA_REDIS_SENTINEL_MASTER,
        "sentinel_kwargs": REDIS_SENTINEL_KWARGS,
        **REDIS_MASTER_CREDENTIALS,
    }
    if REDIS_SENTINELS
    else {"address": REDIS_URL}
)

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 times out reads after 5 s while channels_redis blocks 5 s waiting for
            # messages: without a longer socket timeout an idle consumer dies with 1011.
            # The pool (per process) refuses a call beyond its size rather than waiting:
            # sessions.broadcast keeps at most 16 sends in flight, far below it, and socket
            # joins and presence updates wait for a free connection (sessions.layer_pool).
            "CONFIG": {
                "hosts": [
                    {
                        **_channel_redis_host,
                        "socket_timeout": 30,
                        "max_connections": int(
                            os.environ.get("VIVA_CHANNEL_REDIS_POOL_SIZE", "100")
                        ),
                    }
                ],
                "capacity": 1500,
                "expiry": 60,
            },
        }
    }
    # Django's RedisCache knows no Sentinel: with Sentinels its client talks to the master that
    # they name (config/redis_sentinel_cache.py).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": os.environ.get("VIVA_CACHE_PREFIX", "viva"),
        }
        if not REDIS_SENTINELS
        else {
            "BACKEND": "config.redis_sentinel_cache.SentinelRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": os.environ.get("VIVA_CACHE_PREFIX", "viva"),
            "OPTIONS": {
                "sentinels": REDIS_SENTINELS,
                "master_name": VIVA_REDIS_SENTINEL_MASTER,
                "sentinel_kwargs": REDIS_SENTINEL_KWARGS,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: work that must not be lost. Without Redis, tasks run eagerly in-process.
# With Sentinels: sentinel://[:password@]host:port/db;sentinel://... (kombu and Celery ask each
# in turn for the master named in the transport options below).
_redis_userinfo = REDIS_URL.partition("://")[2].rpartition("@")[0]
_celery_redis_url = (
    ";".join(
        f"sentinel://{_redis_userinfo + '@' if _redis_userinfo else ''}"
        f"{f'[{host}]' if ':' in host else host}:{port}/{REDIS_MASTER_CREDENTIALS['db']}"
        for host, port in REDIS_SENTINELS
    )
    if REDIS_SENTINELS
    else REDIS_URL
)
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", _celery_redis_url or "memory://")
CELERY_RESULT_BACKEND = os.environ.get(
    "CELERY_RESULT_BACKEND", _celery_redis_url or "cache+memory://"
)
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "bot.tasks.*": {"queue": "bots"},
    "marking.tasks.*": {"queue": "marking"},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Redis redelivers an unacknowledged task after this long; longer than the longest task.
# A Redis that does not answer is an outage reported in seconds (a 503), never a request that
# hangs (issue #33): connecting to the broker or the result backend gives up after 2 s, and the
# result backend retries twice in about a second instead of Celery's 20 x 1 s. Bot starts keep
# no result at all (``bot.tasks.run_session_bot``), so a start never touches the backend.
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
    "visibility_timeout": 3 * 3600,
    "socket_connect_timeout": 2,
}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 2
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS: dict[str, object] = {
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
}
if REDIS_SENTINELS:
    _sentinel_transport: dict[str, object] = {
        "master_name": VIVA_REDIS_SENTINEL_MASTER,
        "sentinel_kwargs": REDIS_SENTINEL_KWARGS,
    }
    CELERY_BROKER_TRANSPORT_OPTIONS.update(_sentinel_transport)
    CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS.update(_sentinel_transport)

# The operator's metrics (config/metrics.py, GET /metrics, Prometheus text format): off unless a
# token is set; the scraper sends "Authorization: Bearer <token>".
VIVA_METRICS_TOKEN = os.environ.get("VIVA_METRICS_TOKEN", "")

# Webhooks (docs/webhooks.md): signed deliveries of exam.completed, marks.locked and
# irregularity.reported, retried with exponential back-off (base * 2^(n-1), capped) by Celery.
# Their targets pass the outbound address guard (web/outbound.py, VIVA_OUTBOUND_ALLOWED_NETWORKS).
VIVA_WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("VIVA_WEBHOOK_MAX_ATTEMPTS", "8"))
VIVA_WEBHOOK_RETRY_BASE_SECONDS = float(os.environ.get("VIVA_WEBHOOK_RETRY_BASE_SECONDS", "30"))
VIVA_WEBHOOK_RETRY_MAX_SECONDS = float(os.environ.get("VIVA_WEBHOOK_RETRY_MAX_SECONDS", "3600"))
VIVA_WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("VIVA_WEBHOOK_TIMEOUT_SECONDS", "10"))
# A delivery whose task was lost (Redis restarted, its worker killed) is enqueued again by the
# outbox relay's sweep once it is this late (webhooks.receivers.sweep_lost_deliveries).
VIVA_WEBHOOK_RESEND_GRACE_SECONDS = float(
    os.environ.get("VIVA_WEBHOOK_RESEND_GRACE_SECONDS", "120")
)

# Every server-side fetch (webhooks, LTI registration and keysets, single sign-on) reaches only
# public addresses (web/outbound.py) unless its address is in one of these networks (CIDR, comma-
# separated): peers on the deployment's own network, the tests' peers on 127.0.0.1. Cloud
# metadata addresses stay refused. VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true (before issue #32)
# still allows the private and loopback networks.
VIVA_OUTBOUND_ALLOWED_NETWORKS = env_list("VIVA_OUTBOUND_ALLOWED_NETWORKS", []) + (
    ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "::1/128", "fc00::/7"]
    if env_bool("VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False)
    else []
)

# How bots run: "inline" (asyncio task in the ASGI process) or "celery" (the bots queue).
VIVA_BOT_RUNNER = os.environ.get("VIVA_BOT_RUNNER", "celery" if REDIS_URL else "inline")

# --- Auth ---------------------------------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "accounts:login"
# Local passwords: ModelBackend with the sign-in throttle (a locked pair is refused before any
# password check). Staff single sign-on through OpenID Connect (accounts/sso.py, docs/sso.md):
# off unless VIVA_OIDC_ISSUER is set; local passwords stay on.
AUTHENTICATION_BACKENDS = [
    "accounts.login_throttle.ThrottledModelBackend",
    "accounts.sso.StaffOIDCBackend",
]
VIVA_OIDC_ISSUER = os.environ.get("VIVA_OIDC_ISSUER", "")
VIVA_OIDC_NAME = os.environ.get("VIVA_OIDC_NAME", "your organisation's sign-in")
VIVA_OIDC_ROLE_CLAIM = os.environ.get("VIVA_OIDC_ROLE_CLAIM", "groups")
VIVA_OIDC_ROLE_MAP = os.environ.get("VIVA_OIDC_ROLE_MAP", "")
OIDC_RP_CLIENT_ID = os.environ.get("VIVA_OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("VIVA_OIDC_CLIENT_SECRET", "")
OIDC_RP_SIGN_ALGO = os.environ.get("VIVA_OIDC_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("VIVA_OIDC_SCOPES", "openid email profile")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("VIVA_OIDC_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("VIVA_OIDC_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("VIVA_OIDC_USERINFO_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("VIVA_OIDC_JWKS_ENDPOINT", "")
# Endpoints left empty are discovered from VIVA_OIDC_ISSUER + /.well-known/openid-configuration
# (accounts/sso_discovery.py), kept this long. PKCE (S256) is always sent.
VIVA_OIDC_DISCOVERY_MAX_AGE_SECONDS = int(
    os.environ.get("VIVA_OIDC_DISCOVERY_MAX_AGE_SECONDS", "3600")
)
OIDC_USE_PKCE = True
OIDC_PKCE_CODE_CHALLENGE_METHOD = "S256"
OIDC_AUTHENTICATION_CALLBACK_URL = "accounts:sso-callback"
OIDC_TIMEOUT = 10
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/?sso=failed"
# Staff single sign-on through SAML 2.0 (accounts/saml.py, docs/sso.md): off unless
# VIVA_SAML_IDPS (JSON: {"slug": {"entity_id", "metadata_url" or "metadata_file", "name",
# "role_attributes", "role_map", "id_attribute"}}) names a provider.
VIVA_SAML_IDPS = json.loads(os.environ.get("VIVA_SAML_IDPS", "") or "{}")
VIVA_SAML_BASE_URL = os.environ.get("VIVA_SAML_BASE_URL", "")
VIVA_SAML_SP_ENTITY_ID = os.environ.get("VIVA_SAML_SP_ENTITY_ID", "")
VIVA_SAML_KEY_FILE = os.environ.get("VIVA_SAML_KEY_FILE", "")
VIVA_SAML_CERT_FILE = os.environ.get("VIVA_SAML_CERT_FILE", "")
VIVA_SAML_REQUIRE_SIGNED_ASSERTIONS = env_bool("VIVA_SAML_REQUIRE_SIGNED_ASSERTIONS", True)
VIVA_SAML_CLOCK_SKEW_SECONDS = int(os.environ.get("VIVA_SAML_CLOCK_SKEW_SECONDS", "60"))
VIVA_SAML_REQUEST_LIFETIME_SECONDS = int(
    os.environ.get("VIVA_SAML_REQUEST_LIFETIME_SECONDS", "600")
)
VIVA_SAML_METADATA_MAX_AGE_SECONDS = int(
    os.environ.get("VIVA_SAML_METADATA_MAX_AGE_SECONDS", "3600")
)
# LTI Dynamic Registration: activate the deployment a platform registers at once (docs/lms.md).
VIVA_LTI_DYNAMIC_REGISTRATION_ACTIVATE = env_bool("VIVA_LTI_DYNAMIC_REGISTRATION_ACTIVATE", False)
# How long a registration URL from `lti_register --dynamic-registration-url` is accepted.
VIVA_LTI_REGISTRATION_TOKEN_MAX_AGE_SECONDS = int(
    os.environ.get("VIVA_LTI_REGISTRATION_TOKEN_MAX_AGE_SECONDS", str(7 * 24 * 3600))
)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed staff logins allowed per (username, client address) and per address, per window.
VIVA_LOGIN_MAX_FAILURES = int(os.environ.get("VIVA_LOGIN_MAX_FAILURES", "5"))
VIVA_LOGIN_MAX_FAILURES_PER_ADDRESS = int(
    os.environ.get("VIVA_LOGIN_MAX_FAILURES_PER_ADDRESS", "20")
)
VIVA_LOGIN_WINDOW_SECONDS = int(os.environ.get("VIVA_LOGIN_WINDOW_SECONDS", "900"))
# The chain anchors (sessions.chain_anchor): the MAC key is never stored in the database.
VIVA_CHAIN_KEY = os.environ.get("VIVA_CHAIN_KEY", "")
# Personal data (docs/privacy.md): days after a session ends before ``manage.py
# erase_personal_data --expired`` pseudonymises it; 0 keeps personal data until erased on request.
VIVA_RETENTION_DAYS = int(os.environ.get("VIVA_RETENTION_DAYS", "0") or 0)
VIVA_CHAIN_ANCHOR_DIR = os.environ.get("VIVA_CHAIN_ANCHOR_DIR", "") or str(
    VAR_DIR / "chain-anchors"
)
# Untrusted JSON (API bodies, WebSocket frames, the WebRTC offer): web.json_input.
VIVA_JSON_MAX_BYTES = int(os.environ.get("VIVA_JSON_MAX_BYTES", str(2 * 1024 * 1024)))
VIVA_JSON_MAX_DEPTH = int(os.environ.get("VIVA_JSON_MAX_DEPTH", "64"))
# Candidate invitation links: lifetime unless the inviter sets one.
VIVA_INVITATION_TTL_HOURS = int(os.environ.get("VIVA_INVITATION_TTL_HOURS", "168"))
# Base URL printed in invitation links (the site's public address).
VIVA_PUBLIC_URL = os.environ.get("VIVA_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
# Invitation emails (sessions.scheduling): sent only when a sender address is set; otherwise the
# roster shows the links to copy. Mail goes through EMAIL_HOST (SMTP), or to the console in
# development when no host is set.
VIVA_INVITATION_EMAIL_FROM = os.environ.get("VIVA_INVITATION_EMAIL_FROM", "").strip()
EMAIL_HOST = os.environ.get("EMAIL_HOST", "").strip() or "localhost"
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
if DEBUG and not os.environ.get("EMAIL_HOST", "").strip():
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
# How long a proctor action waits for the session's bot to confirm it (proctoring.actions).
VIVA_PROCTOR_ACTION_TIMEOUT_SECONDS = float(
    os.environ.get("VIVA_PROCTOR_ACTION_TIMEOUT_SECONDS", "10")
)
# Heartbeat of the session event sockets (sessions.consumers); a candidate socket that misses two
# is no longer counted as connected (proctoring.presence).
VIVA_WS_HEARTBEAT_SECONDS = float(os.environ.get("VIVA_WS_HEARTBEAT_SECONDS", "15"))
# A candidate without a connection this long during a running exam raises an overview alert.
VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS = float(
    os.environ.get("VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS", "20")
)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
# Content Security Policy (Django's built-in): no inline script anywhere, same-origin everything.
from django.utils.csp import CSP  # noqa: E402

SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.NONCE],  # nonce: the studio editor's runtime <style> elements
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF, "ws:", "wss:"],
    "media-src": [CSP.SELF, "blob:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
# LiveKit (docs/voice.md): besides the signalling WebSocket (ws:/wss: above), livekit-client asks
# the server's HTTP side why a connection failed (/rtc/validate). Allow that origin when one is set.
_livekit_url = urlsplit(os.environ.get("VIVA_LIVEKIT_URL", "").strip())
if _livekit_url.scheme in {"ws", "wss", "http", "https"} and _livekit_url.netloc:
    _livekit_http = "https" if _livekit_url.scheme in {"wss", "https"} else "http"
    SECURE_CSP["connect-src"].append(f"{_livekit_http}://{_livekit_url.netloc}")
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Address of the client for rate limiting: trust X-Forwarded-For only behind a known proxy.
VIVA_TRUST_X_FORWARDED_FOR = env_bool("VIVA_TRUST_X_FORWARDED_FOR", default=False)

# --- REST API -----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first so an anonymous request gets 401 with `WWW-Authenticate: Token`. Named keys
        # issued from /accounts/tokens/; only their SHA-256 digest is stored (accounts.api_tokens).
        "accounts.api_tokens.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "web.api.parsers.BoundedJSONParser",  # size, depth and string limits (json_input)
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "web.api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "web.api.schema.ApiAutoSchema",  # + the shared error body
    "EXCEPTION_HANDLER": "web.api.errors.exception_handler",
    # Per client (anonymous: by address; signed in: by user). docs/configuration.md.
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("VIVA_API_RATE_ANON", "60/min"),
        "user": os.environ.get("VIVA_API_RATE_USER", "600/min"),
    },
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Viva platform API",
    "DESCRIPTION": (
        "REST API of the AI-conducted oral assessment platform (IOA-ORM). Authenticate with the "
        "browser session or with `Authorization: Token <key>`. Errors share one body: "
        '`{"error": {"code", "message", "details"}}`.'
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

# --- Static files, i18n -------------------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
# In development whitenoise serves straight from the source folders (no collectstatic needed).
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
# The languages exams are conducted in (ioa.languages.SUPPORTED_LANGUAGES); docs/i18n.md.
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("VIVA_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
