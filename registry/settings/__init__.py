"""Settings, all from the environment (docs/reference/configuration.md); ``env`` reads them."""

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from registry.devenv import env_load
from registry.logs import logging_config
from registry.settings.apps import PROTOCOL_APPS, REGISTRY_PROTOCOL_APPS
from registry.settings.env import env_bool, env_int, env_list
from registry.settings.metrics import metrics_dirs
from registry.settings.replicas import replica_settings

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env_load()  # the checkout's .env (make run writes it), beneath the environment


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: run `make run` once in the checkout (it writes .env), or "
            "set SECRET_KEY to a long random string; only DEBUG=1 has a development key"
        )
    SECRET_KEY = "insecure-local-development-key-set-SECRET_KEY-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# The registry's public base URL (scheme, host, port; no path): every absolute URL the
# registry writes (its own card, card URLs, the queue URLs of generated cards) starts with
# it, whichever request or job writes. Required outside DEBUG.
REGISTRY_BASE_URL = os.environ.get("REGISTRY_BASE_URL", "").rstrip("/")
if not REGISTRY_BASE_URL:
    if not DEBUG:
        raise ImproperlyConfigured(
            "REGISTRY_BASE_URL is not set: run `make run` once in the checkout (it writes "
            ".env), or set it to the public URL (https://registry.example.com)"
        )
    REGISTRY_BASE_URL = "http://127.0.0.1:8000"
if urlsplit(REGISTRY_BASE_URL).scheme not in ("http", "https") or urlsplit(REGISTRY_BASE_URL).path:
    raise ImproperlyConfigured(
        f"REGISTRY_BASE_URL must be an http(s) origin without a path, not {REGISTRY_BASE_URL!r}"
    )
REGISTRY_NAME = os.environ.get("REGISTRY_NAME", "A2A Agent Registry")
REGISTRY_VERSION = "1.0.0"

# Card URLs must be absolute https; plain http is accepted only when this is on
# (by default, in DEBUG, for agents running on a developer's machine).
A2A_ALLOW_HTTP_URLS = env_bool("A2A_ALLOW_HTTP_URLS", DEBUG)
# Largest accepted request body, in bytes.
REGISTRY_MAX_BODY_BYTES = env_int("REGISTRY_MAX_BODY_BYTES", 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = REGISTRY_MAX_BODY_BYTES
# Deepest JSON nesting accepted in a request body.
REGISTRY_MAX_JSON_DEPTH = env_int("REGISTRY_MAX_JSON_DEPTH", 64)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "registry",
    "web",
]
# The protocol apps installed (registry/settings/apps.py).
INSTALLED_APPS += [
    package for app, package in PROTOCOL_APPS.items() if app in REGISTRY_PROTOCOL_APPS
]

MIDDLEWARE = [
    "registry.observability.requests.RequestObservedMiddleware",  # outermost: id, metrics
    "registry.fastpath.replicas.ReplicaReadMiddleware",  # a public read's replica, if any
    "django.middleware.security.SecurityMiddleware",
    "registry.http.security.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # ETag on every GET that has none, and 304s for If-None-Match / If-Modified-Since.
    "django.middleware.http.ConditionalGetMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "registry.access.audit.AuditActorMiddleware",
    "registry.outbound.deadlines.FetchBudgetMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Innermost: errors that Django answers in HTML (DEBUG's 404 page, 405s, the CSRF
    # failure page) become problem+json, and the middleware above still add their headers.
    "registry.http.problems.ProblemFallbackMiddleware",
]
if "ard" in REGISTRY_PROTOCOL_APPS:  # Link: rel="ai-catalog" on / and the registry's card
    MIDDLEWARE.insert(1, "protocols.ard.catalog.middleware.CatalogLinkMiddleware")

ROOT_URLCONF = "registry.urls"
WSGI_APPLICATION = "registry.wsgi.application"
APPEND_SLASH = False

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        # Off by default, as in Django: on, every request pays a "SELECT 1" round trip
        # before its first query; off, a connection broken since its last use (a database
        # restart) fails one request, and is then replaced.
        conn_health_checks=env_bool("DB_CONN_HEALTH_CHECKS", False),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # JIT and parallel workers (DB_PARALLEL_WORKERS a statement) pay off for long analytic
    # queries; the registry's are short, and workers take the cores other requests need.
    _parallel = env_int("DB_PARALLEL_WORKERS", 0)
    _options = f"-c jit=off -c max_parallel_workers_per_gather={_parallel}"
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", _options)
    # The card read binds its parameter on the server, and psycopg prepares it after this
    # many runs on a connection (PostgreSQL then no longer plans it every request); other
    # queries bind on the client. 0: never (a transaction-pooling PgBouncer before 1.21).
    _prepare = env_int("DB_PREPARE_THRESHOLD", 5)
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", _prepare or None)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several writers (gunicorn workers, tests with threads) wait for the lock
    # instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # Tests use a file, not shared-cache memory: concurrent tests then wait for the write
    # lock as production does instead of failing with "table is locked".
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"registry-test-{os.getpid()}.sqlite3")
    }

globals().update(replica_settings(DATABASES))  # DATABASE_REPLICA_URLS … and the router

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# REDIS_URL: the shared cache (rate limits, cached reads) in Redis, an accelerator: calls wait
# REDIS_TIMEOUT_MS at most, a failure leaves it alone REDIS_RETRY_SECONDS (access.shared_cache).
REDIS_URL = os.environ.get("REDIS_URL", "")
REDIS_TIMEOUT_MS = env_int("REDIS_TIMEOUT_MS", 100)
REDIS_RETRY_SECONDS = env_int("REDIS_RETRY_SECONDS", 5)
_SHARED = {"LOCATION": REDIS_URL, "KEY_PREFIX": "registry"}
CACHES = {
    "default": {"BACKEND": "registry.access.shared_cache.SharedRedisCache", **_SHARED}
    if REDIS_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# Rate limits (N/sec|min|hour|day): reads per key or IP, writes per key, heartbeats per key
# apart, fetches (by domain or URL, verify, AAP) per key and stricter per IP, failed
# authentications per IP (then 429, no key lookup). TRUSTED_PROXY_COUNT proxies trusted.
RATE_LIMIT_READ = os.environ.get("RATE_LIMIT_READ", "1200/min")
RATE_LIMIT_WRITE = os.environ.get("RATE_LIMIT_WRITE", "120/min")
RATE_LIMIT_HEARTBEAT = os.environ.get("RATE_LIMIT_HEARTBEAT", "6000/min")
RATE_LIMIT_FETCH = os.environ.get("RATE_LIMIT_FETCH", "30/min")
RATE_LIMIT_FETCH_ANON = os.environ.get("RATE_LIMIT_FETCH_ANON", "6/min")
RATE_LIMIT_AUTH_FAILURES = os.environ.get("RATE_LIMIT_AUTH_FAILURES", "60/min")
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)

# Idempotency-Key (registry.access.idempotency): answers replayed for TTL; a duplicate waits
# WAIT for the request in flight (then 409); one in flight past STALE is run again.
IDEMPOTENCY_TTL_SECONDS = env_int("IDEMPOTENCY_TTL_SECONDS", 86400)
IDEMPOTENCY_WAIT_SECONDS = env_int("IDEMPOTENCY_WAIT_SECONDS", 5)
IDEMPOTENCY_STALE_SECONDS = env_int("IDEMPOTENCY_STALE_SECONDS", 120)
IDEMPOTENCY_PRUNE_INTERVAL_SECONDS = env_int("IDEMPOTENCY_PRUNE_INTERVAL_SECONDS", 3600)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# Where collectstatic puts the static files that whitenoise serves outside DEBUG.
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
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

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["registry.access.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["registry.access.auth.ReadOnlyOrApiKey"],
    "DEFAULT_PARSER_CLASSES": ["registry.http.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "registry.schema.RegistryAutoSchema",
    "EXCEPTION_HANDLER": "registry.http.problems.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "registry.access.throttles.ReadThrottle",
        "registry.access.throttles.WriteThrottle",
    ],
    "NUM_PROXIES": TRUSTED_PROXY_COUNT or None,
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "A2A Agent Registry API",
    "DESCRIPTION": (
        "Register agents natively or by their A2A agent card, fetch cards, discover agents."
    ),
    "VERSION": REGISTRY_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/docs loads Swagger UI from the registry's own static files
    # (drf-spectacular-sidecar): the docs work offline and load nothing from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Readable component names: one enum per set of values, named for what it is.
    "ENUM_NAME_OVERRIDES": {
        "TransportEnum": "registry.agents.models.Endpoint.Transport",
        "ProtocolEnum": "registry.agents.models.Endpoint.Protocol",
        "LivenessModelEnum": "registry.agents.models.Endpoint.Liveness",
        "ProbeCategoryEnum": "registry.agents.serializers.PROBE_CATEGORIES",
        "VisibilityEnum": "registry.agents.models.Visibility",
        "ApiKeyScopeEnum": ["agent", "admin"],
        "AAPRuleStatusEnum": ["pass", "fail", "warn", "skip"],
        "AAPRuleLevelEnum": ["MUST", "SHOULD"],
        "SubscriptionStatusEnum": ["pending", "active", "disabled"],
        "DeliveryStatusEnum": ["pending", "delivered", "failed", "withheld"],
    },
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "registry.events.openapi.events_schema_hook",
        "registry.schema.links_hook",
    ],
}

# One handler on the root logger (registry.logs); LOG_FORMAT=json: one JSON object a line.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain")
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'plain' or 'json', not {LOG_FORMAT!r}")
LOGGING = logging_config(LOG_FORMAT, os.environ.get("LOG_LEVEL", "INFO"))

# Served over HTTPS (REGISTRY_HTTPS=1, the production setting): plain-HTTP requests are
# redirected, browsers are told to use HTTPS only (HSTS, SECURE_HSTS_SECONDS, a year by
# default), cookies are sent over HTTPS only. Behind a TLS-terminating proxy
# (TRUSTED_PROXY_COUNT > 0) its X-Forwarded-Proto says which scheme the client used.
REGISTRY_HTTPS = env_bool("REGISTRY_HTTPS", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", REGISTRY_HTTPS)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if REGISTRY_HTTPS else 0)
# The registry's own subdomains (of its host name, not its parent domain's) included.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", REGISTRY_HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", REGISTRY_HTTPS)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", REGISTRY_HTTPS)
CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", REGISTRY_HTTPS)
if REGISTRY_HTTPS and TRUSTED_PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# /healthz and /readyz answer load balancers over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]

# Outbound HTTP (outbound/fetch.py). FETCH_ALLOWED_HOSTS skip the private-address guard,
# FETCH_ALLOW_HTTP_HOSTS may use plain http: local development and tests only.
FETCH_CONNECT_TIMEOUT = env_int("FETCH_CONNECT_TIMEOUT", 5)
FETCH_READ_TIMEOUT = env_int("FETCH_READ_TIMEOUT", 10)
# One deadline over each whole fetch (DNS, connect, TLS, headers, body), one budget over all
# the fetches of an incoming request: well under the web workers' timeout (30 s).
FETCH_TOTAL_TIMEOUT = env_int("FETCH_TOTAL_TIMEOUT", 10)
FETCH_REQUEST_BUDGET = env_int("FETCH_REQUEST_BUDGET", 20)
FETCH_MAX_BYTES = env_int("FETCH_MAX_BYTES", 1024 * 1024)
FETCH_MAX_REDIRECTS = env_int("FETCH_MAX_REDIRECTS", 3)
FETCH_ALLOWED_HOSTS = env_list("FETCH_ALLOWED_HOSTS")
FETCH_ALLOW_HTTP_HOSTS = env_list("FETCH_ALLOW_HTTP_HOSTS")
FETCH_CA_BUNDLE = os.environ.get("FETCH_CA_BUNDLE") or None

# Facet counts are exact for up to this many matching agents; beyond, estimated from a
# uniform sample of as many (registry/discovery/facets.py; how far off: docs/internals/search.md).
DISCOVERY_FACET_EXACT = env_int("DISCOVERY_FACET_EXACT", 500)
# Search by meaning (registry/semantic/): the embedding service's Unix socket
# (manage.py semantic_serve); empty: each process embeds and searches itself, holding the
# model (about 130 MB) and every vector. The Procfiles run the service and set it.
SEMANTIC_SOCKET = os.environ.get("SEMANTIC_SOCKET", "")
# Registration by domain (protocols/a2a/registration/bootstrap.py, txt_records.py): DNS
# servers for the _agent TXT lookup (empty: the system's), its timeout, and what an
# interface on another host means: "flag" (stored and shown) or "reject" (it fails).
DISCOVERY_DNS_NAMESERVERS = env_list("DISCOVERY_DNS_NAMESERVERS")
DISCOVERY_DNS_PORT = env_int("DISCOVERY_DNS_PORT", 53)
DISCOVERY_DNS_TIMEOUT = float(os.environ.get("DISCOVERY_DNS_TIMEOUT", "3"))
A2A_ORIGIN_POLICY = os.environ.get("A2A_ORIGIN_POLICY", "flag")
if A2A_ORIGIN_POLICY not in {"flag", "reject"}:
    raise ImproperlyConfigured("A2A_ORIGIN_POLICY must be 'flag' or 'reject'")

# Background jobs (Celery; registry/celery.py). Without CELERY_BROKER_URL the jobs still
# run, through kombu's filesystem transport in VAR_DIR: one machine, nothing to set up
# (make run). CELERY_BROKER_URL=redis://127.0.0.1:6379/0 or amqp://guest:guest@127.0.0.1//
# switches to Redis or RabbitMQ, for workers on several machines.
VAR_DIR = Path(os.environ.get("REGISTRY_VAR_DIR") or BASE_DIR / "var")
# GET /metrics: registry/settings/metrics.py
PROMETHEUS_MULTIPROC_DIR, METRICS_SCRAPE_DIR = metrics_dirs(VAR_DIR)
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "filesystem://localhost//"  # a host name, or kombu warns (unused)
    _queue_dir = VAR_DIR / "broker"
    (_queue_dir / "processed").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "control_folder": str(_queue_dir / "control"),  # its exchange tables: VAR_DIR too
        "processed_folder": str(_queue_dir / "processed"),
        "store_processed": False,
    }
    # Remote control needs broadcast, which the filesystem transport lacks.
    CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
# The jobs report through the database and their logs; results are kept only if asked.
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_IGNORE_RESULT = CELERY_RESULT_BACKEND is None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = CELERY_TASK_SOFT_TIME_LIMIT + 60
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# JSON logs: the job processes log through the root handler too, not Celery's own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
# Liveness (registry/liveness.py): how long an Ephemeral endpoint whose TTL ran out is kept
# before a job removes it, and how often that job runs.
EPHEMERAL_RETENTION_SECONDS = env_int("EPHEMERAL_RETENTION_SECONDS", 3600)
LIVENESS_SWEEP_INTERVAL_SECONDS = env_int("LIVENESS_SWEEP_INTERVAL_SECONDS", 60)
# Active probes (registry/liveness/probes.py): each Persistent http(s) endpoint about every
# PROBE_INTERVAL_SECONDS; the job runs every PROBE_SWEEP_SECONDS and probes at most
# PROBE_BATCH due endpoints, PROBE_CONCURRENCY at a time, each within PROBE_TIMEOUT_SECONDS.
PROBE_INTERVAL_SECONDS = env_int("PROBE_INTERVAL_SECONDS", 300)
PROBE_SWEEP_SECONDS = env_int("PROBE_SWEEP_SECONDS", 60)
PROBE_BATCH = env_int("PROBE_BATCH", 500)
PROBE_CONCURRENCY = env_int("PROBE_CONCURRENCY", 8)
PROBE_TIMEOUT_SECONDS = env_int("PROBE_TIMEOUT_SECONDS", 5)
# Each web process keeps the most recently fetched cards, up to this many MiB, answered on
# the lean lane without a database read (PostgreSQL only: a committed change reaches every
# process's cache by a LISTEN/NOTIFY notice, registry.fastpath.notices). The cards are kept in two
# unlinked files per process under CARD_CACHE_DIR (default: the system's temporary
# directory), so in the kernel's page cache, not in the worker's memory: the worker keeps
# an index of about 40 bytes per card (registry.fastpath.spool). 0: no cache.
CARD_CACHE_MB = env_int("CARD_CACHE_MB", 512)
CARD_CACHE_DIR = os.environ.get("CARD_CACHE_DIR", "") or None
# Ownership transfers and domain claims expire this long after they were made, unanswered.
TRANSFER_EXPIRY_SECONDS = env_int("TRANSFER_EXPIRY_SECONDS", 7 * 86400)
DOMAIN_CLAIM_EXPIRY_SECONDS = env_int("DOMAIN_CLAIM_EXPIRY_SECONDS", 86400)

# The protocol apps' own settings (A2A, the queue relay, AAP, entity cards).
from registry.settings.identity import *  # noqa: E402, F403
from registry.settings.metrics import *  # noqa: E402, F403
from registry.settings.moderation import *  # noqa: E402, F403
from registry.settings.protocols import *  # noqa: E402, F403
from registry.settings.trust import *  # noqa: E402, F403
from registry.settings.webhooks import *  # noqa: E402, F403
