"""Django settings for Gatehouse, read from the environment only.

Every variable is documented in ``.env.example``. The helpers that read them are strict
(:mod:`editor.environment`): a value they cannot read stops start-up with
:class:`ImproperlyConfigured` naming the variable. Secrets may instead be given as a file path
in ``NAME_FILE`` (Docker and Kubernetes secrets).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.utils.csp import CSP

from editor.environment import (
    base_url,
    database_from_url,
    email_from_url,
    env_bool,
    env_int,
    env_list,
    env_optional_int,
    env_secret,
    env_str,
    header_name,
    llm_env_names,
    one_of,
    require_unless_debug,
    resolve_path,
    smtp_mailer,
    sqlite_database,
    webhook_urls,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Core ---------------------------------------------------------------------------------

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_secret("SECRET_KEY")
require_unless_debug("SECRET_KEY", SECRET_KEY, DEBUG)
if not SECRET_KEY:
    # Only reachable with DEBUG on, for a local development server.
    SECRET_KEY = "django-insecure-gatehouse-local-development-only"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
require_unless_debug("ALLOWED_HOSTS", ALLOWED_HOSTS, DEBUG)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
if env_bool("GATEHOUSE_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

#: Local state: the SQLite database by default, and the first user's password file.
GATEHOUSE_VAR_DIR = resolve_path(env_str("GATEHOUSE_VAR_DIR") or "var", BASE_DIR)
GATEHOUSE_ADMIN_PASSWORD_FILE = GATEHOUSE_VAR_DIR / "admin-password"

# --- Limits (spec 07, "Limits and bad input") -----------------------------------------------

GATEHOUSE_MAX_BODY_BYTES = env_int("GATEHOUSE_MAX_BODY_BYTES", 8 * 1024 * 1024)
GATEHOUSE_MAX_NODES = env_int("GATEHOUSE_MAX_NODES", 10_000)
GATEHOUSE_MAX_EDGES = env_int("GATEHOUSE_MAX_EDGES", 50_000)
# The canvas: Graphviz's layout time limit in seconds, and the largest graph it is asked to draw.
GATEHOUSE_GRAPHVIZ_TIMEOUT = env_int("GATEHOUSE_GRAPHVIZ_TIMEOUT", 5)
# At most this many `dot` processes per web process; a view that finds them all busy waits at
# most GATEHOUSE_GRAPHVIZ_WAIT seconds for one, then shows "busy, try again" (editor.rendering).
GATEHOUSE_GRAPHVIZ_MAX_PROCESSES = env_int("GATEHOUSE_GRAPHVIZ_MAX_PROCESSES", 2)
GATEHOUSE_GRAPHVIZ_WAIT = env_int("GATEHOUSE_GRAPHVIZ_WAIT", 2, minimum=0)
GATEHOUSE_DRAW_MAX_NODES = env_int("GATEHOUSE_DRAW_MAX_NODES", 500)
GATEHOUSE_DRAW_MAX_EDGES = env_int("GATEHOUSE_DRAW_MAX_EDGES", 2000)
# Saved states of a draft kept per document (undo, redo, History); the oldest are pruned.
GATEHOUSE_DRAFT_HISTORY = env_int("GATEHOUSE_DRAFT_HISTORY", 500, minimum=2)
# Rendered canvases kept in the canvas cache (a table of the database, shared by every web
# process): past it, a quarter of them is dropped (docs/operations.md, "The canvas cache").
GATEHOUSE_CANVAS_CACHE_ENTRIES = env_int("GATEHOUSE_CANVAS_CACHE_ENTRIES", 2000, minimum=10)
# Django's own caps agree with ours: a form body, or an uploaded file, up to the cap is read
# into memory (never spooled to disk); editor.middleware refuses a larger body before either.
DATA_UPLOAD_MAX_MEMORY_SIZE = GATEHOUSE_MAX_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = GATEHOUSE_MAX_BODY_BYTES

# --- Runs (spec 04) ---------------------------------------------------------------------------

# A worker's claim on a run lasts this long unless renewed (every third of it, and with each
# append); a run whose claim ran out is re-enqueued by the sweep every worker runs.
GATEHOUSE_RUN_LEASE_SECONDS = env_int("GATEHOUSE_RUN_LEASE_SECONDS", 30)
GATEHOUSE_SWEEP_SECONDS = env_int("GATEHOUSE_SWEEP_SECONDS", 10)
# Between sweeps, each worker takes every unleased sleeping run whose wake_at has passed this
# often (spec 08's waker: one query on the wake_at index when nothing is due).
GATEHOUSE_WAKE_POLL_SECONDS = env_int("GATEHOUSE_WAKE_POLL_SECONDS", 1)
# How long an idle worker waits before it looks at the queue again (db_worker --interval).
GATEHOUSE_WORKER_POLL_MS = env_int("GATEHOUSE_WORKER_POLL_MS", 100, minimum=10)
# The run limits of editor.engine.Limits: crossing one fails the run, naming it.
GATEHOUSE_RUN_MAX_NODES = env_int("GATEHOUSE_RUN_MAX_NODES", 10_000)
GATEHOUSE_RUN_MAX_MAP_ITEMS = env_int("GATEHOUSE_RUN_MAX_MAP_ITEMS", 10_000)
GATEHOUSE_RUN_WALL_TIME = env_int("GATEHOUSE_RUN_WALL_TIME", 3600)
GATEHOUSE_TOOL_TIMEOUT = env_int("GATEHOUSE_TOOL_TIMEOUT", 30)
GATEHOUSE_MODEL_TIMEOUT = env_int("GATEHOUSE_MODEL_TIMEOUT", 120)
GATEHOUSE_EVENT_MAX_BYTES = env_int("GATEHOUSE_EVENT_MAX_BYTES", 1024 * 1024)
# The payloads of all a run's events together: crossing it fails the run, naming it.
GATEHOUSE_RUN_MAX_BYTES = env_int("GATEHOUSE_RUN_MAX_BYTES", 256 * 1024 * 1024)
# Payload bytes one page of GET /v1/runs/{id}/events may hold (at least one event).
GATEHOUSE_EVENTS_PAGE_BYTES = env_int("GATEHOUSE_EVENTS_PAGE_BYTES", 1024 * 1024)
GATEHOUSE_TOOL_RETRIES = env_int("GATEHOUSE_TOOL_RETRIES", 0, minimum=0)
# Map items in flight at once in one drive (nested maps included), whatever a map asks for.
GATEHOUSE_RUN_MAP_CONCURRENCY = env_int("GATEHOUSE_RUN_MAP_CONCURRENCY", 16)
# Model calls of an agent loop whose definition sets no `max_steps` (crossing it parks the run).
GATEHOUSE_AGENT_MAX_STEPS = env_int("GATEHOUSE_AGENT_MAX_STEPS", 50)
# Drives of one run that may crash or be cut off (worker killed, lease run out, database lost)
# before the run fails; the n-th retry waits GATEHOUSE_RUN_RETRY_BACKOFF × 2^(n-1) seconds.
GATEHOUSE_RUN_MAX_ATTEMPTS = env_int("GATEHOUSE_RUN_MAX_ATTEMPTS", 3)
GATEHOUSE_RUN_RETRY_BACKOFF = env_int("GATEHOUSE_RUN_RETRY_BACKOFF", 5, minimum=0)
# A drive still going this many seconds after its run's wall time is stopped by the worker's
# watchdog; one stuck that long again after that takes its worker process down (see
# docs/engine.md, "The watchdog").
GATEHOUSE_RUN_WATCHDOG_GRACE = env_int("GATEHOUSE_RUN_WATCHDOG_GRACE", 30)
# Data retention: `manage.py prune` removes the runs that finished (completed, failed or
# abandoned) more than this many days ago, with their event logs. Unset: kept forever.
GATEHOUSE_FINISHED_RUN_RETENTION_DAYS = env_optional_int("GATEHOUSE_FINISHED_RUN_RETENTION_DAYS")
# ... and the test runs of drafts (the editor's Test run) that finished more than this many
# days ago, whatever the setting above says.
GATEHOUSE_TEST_RUN_RETENTION_DAYS = env_int("GATEHOUSE_TEST_RUN_RETENTION_DAYS", 14)
# ... and the draft revisions (History) saved more than this many days ago, but for the draft's
# current state and the revisions frozen as versions. Unset: kept forever (GATEHOUSE_DRAFT_HISTORY
# still bounds their number).
GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS = env_optional_int(
    "GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS"
)
# The installation's own tools (importable module paths), and the hosts http_request may call.
GATEHOUSE_TOOL_MODULES = env_list("GATEHOUSE_TOOL_MODULES")
GATEHOUSE_HTTP_ALLOW = env_list("GATEHOUSE_HTTP_ALLOW")
# URLs that receive a JSON message when a gate's reminder, escalation or due time acts (chat
# tools' incoming webhooks); empty: none. Each URL's own host and port are what may be reached,
# with http_request's checks (docs/operations.md, "Webhooks"). May be given as a file
# (GATEHOUSE_WEBHOOKS_FILE): such URLs carry their secret.
GATEHOUSE_WEBHOOKS = webhook_urls("GATEHOUSE_WEBHOOKS", env_secret("GATEHOUSE_WEBHOOKS"))
# The operator's catalogue of MCP servers (a TOML file; docs/registries.md): the only thing that
# can make Gatehouse start a tool server's process or connect to one. `manage.py check` reads it.
GATEHOUSE_MCP_SERVERS = env_str("GATEHOUSE_MCP_SERVERS")
# Seconds an MCP server may take to start and answer `initialize` (and each page of its listing).
GATEHOUSE_MCP_START_TIMEOUT = env_int("GATEHOUSE_MCP_START_TIMEOUT", 10)
# The largest MCP tool result recorded, in bytes of its JSON; a larger one fails the call.
GATEHOUSE_MCP_MAX_RESULT_BYTES = env_int("GATEHOUSE_MCP_MAX_RESULT_BYTES", 1024 * 1024)
# An OpenAI-compatible chat-completions endpoint for `openai:<model>` agents.
GATEHOUSE_OPENAI_BASE_URL = env_str("GATEHOUSE_OPENAI_BASE_URL")
GATEHOUSE_OPENAI_API_KEY = env_secret("GATEHOUSE_OPENAI_API_KEY")
# The environment variables an agent file's `[llm] base_url_env` / `api_key_env` may name
# (`claude-…` models over the Anthropic Messages protocol); any other is refused at registration
# and never read, so an author cannot send a server secret to an endpoint of their own.
GATEHOUSE_LLM_ENV_ALLOW = llm_env_names(
    "GATEHOUSE_LLM_ENV_ALLOW", env_list("GATEHOUSE_LLM_ENV_ALLOW")
)

# --- Quotas and rates (editor.services.quotas; docs/operations.md, "Quotas and rates") ------

# What one user may keep: bytes stored (draft revisions, agent definitions, frozen graphs),
# documents, aliases (old slugs kept by renames) and active API tokens. An operator may give a
# user other limits on the admin's usage page.
GATEHOUSE_QUOTA_STORED_BYTES = env_int("GATEHOUSE_QUOTA_STORED_BYTES", 1024 * 1024 * 1024)
GATEHOUSE_QUOTA_DOCUMENTS = env_int("GATEHOUSE_QUOTA_DOCUMENTS", 1000)
GATEHOUSE_QUOTA_ALIASES = env_int("GATEHOUSE_QUOTA_ALIASES", 1000)
GATEHOUSE_QUOTA_TOKENS = env_int("GATEHOUSE_QUOTA_TOKENS", 50)
# Rates, each counted in a fixed window (the clock hour, the clock minute) in the database.
GATEHOUSE_RATE_RUNS_PER_HOUR = env_int("GATEHOUSE_RATE_RUNS_PER_HOUR", 1000)
GATEHOUSE_RATE_WRITES_PER_MINUTE = env_int("GATEHOUSE_RATE_WRITES_PER_MINUTE", 300)
GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE = env_int("GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE", 1200)

# --- Live streams (spec 05, the events stream; spec 06, pages that update themselves) --------

# A waiting stream sends a keep-alive comment this often (seconds), so proxies keep it open.
GATEHOUSE_STREAM_KEEPALIVE_SECONDS = env_int("GATEHOUSE_STREAM_KEEPALIVE_SECONDS", 15)
# On SQLite (no NOTIFY), how often a web process looks for new events of the runs its streams
# watch, in milliseconds: one query per period for all of them.
GATEHOUSE_STREAM_POLL_MS = env_int("GATEHOUSE_STREAM_POLL_MS", 100)
# The most streams open at once for one user, and in one web process: one more is a 429.
GATEHOUSE_STREAMS_PER_USER = env_int("GATEHOUSE_STREAMS_PER_USER", 20)
GATEHOUSE_STREAMS_PER_PROCESS = env_int("GATEHOUSE_STREAMS_PER_PROCESS", 1000)
# An open stream checks this often (seconds) that its token, session and user still let it in.
GATEHOUSE_STREAM_RECHECK_SECONDS = env_int("GATEHOUSE_STREAM_RECHECK_SECONDS", 5)
# Threads per web process (ASGI) for the synchronous part of requests (views, middleware, the
# ORM), each keeping its database connection; event streams take none of them (editor/asgi.py).
GATEHOUSE_WEB_THREADS = env_int("GATEHOUSE_WEB_THREADS", 4)

# --- Applications ---------------------------------------------------------------------------

INSTALLED_APPS = [
    # Before staticfiles, so the development server serves static files the way production does.
    "whitenoise.runserver_nostatic",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    # For /v1/docs: ninja's Swagger UI from our static files, not from a CDN.
    "ninja",
    "editor.apps.EditorConfig",
    # After editor: its `db_worker` command (with the lease sweep) overrides this app's own.
    "django_tasks_db",
    # Counts failed sign-ins (editor.sign_in; the settings under "Sign-in and security").
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything that may answer early (a 413, a 404 of /v1), so every answer has them.
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # /v1: refuses bodies over the route's cap (editor.body_limits); JSON envelopes only.
    "editor.middleware.ApiBoundaryMiddleware",
    # Pages: a body over the route's cap is refused with a plain 413 page before anything reads it.
    "editor.middleware.BodySizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Write requests a minute, per user and per address: 429 past either (editor.write_rate).
    "editor.write_rate.WriteRateMiddleware",
    # Every view needs a signed-in user unless it is marked @login_not_required.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A document's old slug, answered 404, leads to its new one.
    "editor.middleware.RenamedDocumentMiddleware",
    # A service error a page view lets through becomes its 404, 403 or 400 page.
    "editor.middleware.ServiceErrorPageMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into the "too many attempts" page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "editor.urls"
WSGI_APPLICATION = "editor.wsgi.application"
ASGI_APPLICATION = "editor.asgi.application"

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
                # The inbox count in the navigation bar (one COUNT, only where shown).
                "editor.views.inbox.nav_context",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------

_database_url = env_secret("DATABASE_URL")
DATABASES: dict[str, dict[str, Any]] = {
    "default": (
        database_from_url(_database_url, base_dir=BASE_DIR)
        if _database_url
        else sqlite_database(str(GATEHOUSE_VAR_DIR / "gatehouse.sqlite3"))
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Tasks ----------------------------------------------------------------------------------

# Runs are driven by `manage.py db_worker`. The queue only dispatches: a run's durability lives
# in its lease and its event log, so any other django.tasks backend can replace this one.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

# The canvas cache (editor.rendering): SVG by the SHA-256 of its DOT source, in a table of the
# database (created by a migration, editor.models.CanvasCacheEntry) that every web process on
# every machine shares, so a graph is laid out once per installation. The default cache is
# each process's own memory (nothing shared is kept in it).
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "canvas": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "gatehouse_canvas_cache",
        "TIMEOUT": None,
        "OPTIONS": {"MAX_ENTRIES": GATEHOUSE_CANVAS_CACHE_ENTRIES, "CULL_FREQUENCY": 4},
    },
}

# --- Email (spec 07): approvers are told when a gate waits for them ---------------------------

# GATEHOUSE_EMAIL_URL (smtp://user:password@host:port, smtp+tls://, smtps://, console://) or
# the standard EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS and
# EMAIL_USE_SSL variables; either becomes Django's default mailer (MAILERS). Neither set: nothing
# is queued or sent at all (the inbox count in the navigation bar still updates).
_email_url = env_secret("GATEHOUSE_EMAIL_URL")
_email_timeout = env_int("EMAIL_TIMEOUT", 10)
# Unconfigured, the default mailer sends nothing (editor.mail.EmailDisabled).
MAILERS: dict[str, dict[str, Any]] = {"default": {"BACKEND": "editor.mail.EmailDisabled"}}
GATEHOUSE_EMAIL_ENABLED = bool(_email_url or env_str("EMAIL_HOST"))
if _email_url:
    MAILERS["default"] = email_from_url(_email_url, timeout=_email_timeout)
elif env_str("EMAIL_HOST"):
    MAILERS["default"] = smtp_mailer(
        env_str("EMAIL_HOST") or "",
        env_int("EMAIL_PORT", 25),
        env_str("EMAIL_HOST_USER", "") or "",
        env_secret("EMAIL_HOST_PASSWORD") or "",
        use_tls=env_bool("EMAIL_USE_TLS", False),
        use_ssl=env_bool("EMAIL_USE_SSL", False),
        timeout=_email_timeout,
    )
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "gatehouse@localhost")
# Where people reach this installation (links in emails): https://gatehouse.example.org
GATEHOUSE_BASE_URL = base_url(env_str("GATEHOUSE_BASE_URL") or "")

# --- Sign-in and security -------------------------------------------------------------------

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Secure cookies whenever DEBUG is off, unless a plain-HTTP deployment (or test) turns them off.
GATEHOUSE_SECURE_COOKIES = env_bool("GATEHOUSE_SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_SECURE = GATEHOUSE_SECURE_COOKIES
CSRF_COOKIE_SECURE = GATEHOUSE_SECURE_COOKIES
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"

# HTTPS (spec 07): with GATEHOUSE_TLS on, plain HTTP is redirected to HTTPS (except /healthz,
# which load balancers and the Docker health check ask over plain HTTP) and browsers are told
# to use HTTPS only (HSTS). Behind a proxy that terminates TLS, GATEHOUSE_BEHIND_TLS_PROXY must
# be on too, or every request looks like plain HTTP and is redirected forever.
GATEHOUSE_TLS = env_bool("GATEHOUSE_TLS", False)
SECURE_SSL_REDIRECT = GATEHOUSE_TLS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int(
    "GATEHOUSE_HSTS_SECONDS", 365 * 24 * 3600 if GATEHOUSE_TLS else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("GATEHOUSE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("GATEHOUSE_HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    # Asking browsers to preload the domain is its owner's decision (and hard to undo), not a
    # default: `check --deploy` need not remind us that it is off.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
# The security headers, spelt out although they are Django's defaults: what a reader checks.
SECURE_CONTENT_TYPE_NOSNIFF = True  # X-Content-Type-Options: nosniff
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Sign-in attempts (spec 07): 5 failures lock out the username, and separately the address
# they came from, until 15 minutes pass without a failure; a success clears both counts.
# django-axes keeps the counts in the database, so every web process on every machine shares
# them. Only the sign-in forms are counted: API tokens never pass through authenticate().
# Then a person's roles (permissions) read in one query (editor.roles.RoleBackend, which signs
# no one in), and Django's own password check.
AUTHENTICATION_BACKENDS = [
    "editor.sign_in.SignInLimitBackend",
    "editor.roles.RoleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "editor.sign_in.locked_out"
AXES_CLIENT_IP_CALLABLE = "editor.sign_in.client_address"
# Failures are kept until their cool-off ends; successful sign-ins are not logged by Axes.
AXES_DISABLE_ACCESS_LOG = True
# What Axes keeps of a failed attempt's form is masked for these fields (beside `password`):
# the Account page's password change counts too (editor.services.password_attempts).
AXES_SENSITIVE_PARAMETERS = [
    "username",
    "ip_address",
    "old_password",
    "new_password1",
    "new_password2",
]
AXES_VERBOSE = False  # no banner at every start; failures and lockouts are still logged
# Where a proxy in front puts the client's address (X-Forwarded-For, X-Real-IP): its last
# entry is the one the proxy itself wrote. Unset: the address of the connection.
GATEHOUSE_CLIENT_IP_HEADER = header_name(
    "GATEHOUSE_CLIENT_IP_HEADER", env_str("GATEHOUSE_CLIENT_IP_HEADER")
)

# No inline script anywhere: scripts, styles and images come from our own static files.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# --- Static files ---------------------------------------------------------------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, compressed names from `collectstatic` (run when the Docker image is built).
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- Internationalisation -------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Logging --------------------------------------------------------------------------------

# One line per record on standard error, where gunicorn, the worker, Docker and systemd collect
# it. Django's own default would log nothing of a failed request with DEBUG off (its console
# handler is for DEBUG only; otherwise it emails ADMINS), so a 500 would leave no trace.
GATEHOUSE_LOG_LEVEL = one_of(
    "GATEHOUSE_LOG_LEVEL",
    env_str("GATEHOUSE_LOG_LEVEL") or "INFO",
    ("DEBUG", "INFO", "WARNING", "ERROR"),
)
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "line": {"format": "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"},
    },
    # A credential sent in a query string (?token=…) is never written (editor.log_redaction).
    "filters": {"query_credentials": {"()": "editor.log_redaction.QueryCredentialsFilter"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "line",
            "filters": ["query_credentials"],
        }
    },
    "root": {"handlers": ["stderr"], "level": GATEHOUSE_LOG_LEVEL},
    "loggers": {
        # In place of Django's default handlers (console with DEBUG only, email to ADMINS).
        "django": {"handlers": ["stderr"], "level": GATEHOUSE_LOG_LEVEL, "propagate": False},
    },
}
