"""Django settings. ``DATABASE_URL`` selects the engine; the default is an SQLite file under var/."""

import os
from pathlib import Path
from typing import Any

from crewlet import sqlite_driver

sqlite_driver.install()

import dj_database_url  # noqa: E402

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CREWLET_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-not-secret-crewlet")
# Off unless asked for (``make serve`` asks): with it on, an unmapped error answers with a traceback.
DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver").split(",")

INSTALLED_APPS = [
    "learning.admin_site.LeadAdminConfig",  # django.contrib.admin with the lead's index
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "crewlet.apps.CrewletConfig",  # before django_q: its qcluster command wraps django-q2's
    "django_q",
    "django_htmx",
    "ninja",  # serves /api/v1/docs with its bundled Swagger UI assets (no CDN)
    "core.apps.CoreConfig",
    "learning.apps.LearningConfig",
    "knowledge.apps.KnowledgeConfig",
    "learning.transcripts.apps.TranscriptsConfig",
]

MIDDLEWARE = [
    "core.after_response.AfterResponseMiddleware",  # a view's ``later`` work runs once its response is sent
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files (admin, API docs) under gunicorn too
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "crewlet.urls"
WSGI_APPLICATION = "crewlet.wsgi.application"

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
            ]
        },
    }
]

_default_sqlite = f"sqlite:///{VAR_DIR / 'crewlet.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(os.environ.get("DATABASE_URL", _default_sqlite))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file test database (not :memory:) so threaded tests and qcluster workers share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
    # cached_statements: the driver's cache of prepared statements per connection (pysqlite3: 100 by default)
    # keeps the most used ones and, once full, evicts the newest entry for each statement it has not seen:
    # two statements first run after it filled (a migration fills it: ~400 one-off statements) then evicted
    # each other on every run and were prepared again each time -- in bench/recall.py's interleaved loop
    # the fused statement read 1.4-2.1 ms against 0.55-0.6 ms alone (tau-bench seat), and in
    # bench/prefetch_latency.py every statement of a turn start was prepared every turn (a rich turn start,
    # the cache filled first as a migration fills it: 20.2-22.1 ms of CPU, 18.5 with 1,024). A prepared
    # ORM statement holds about 6 kB, so 1,024 of them are a few MB per connection at most.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE", "cached_statements": 1024}
else:
    DATABASES["default"].setdefault("TEST", {})
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "crewlet.pg_backend"  # bulk inserts within the server's 65,535 parameters
    # Parameters bound by the server, and a statement run twice on a connection prepared there (parsed
    # and planned once): a reflection pass costs about a fifth less CPU, client and server together
    # (bench/reflect_throughput.py). Behind a pooler in transaction mode, CREWLET_PG_PREPARE_THRESHOLD=off.
    _prepare = os.environ.get("CREWLET_PG_PREPARE_THRESHOLD", "2").strip().lower()
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=None if _prepare in ("", "off", "none") else int(_prepare))
# SQLite's fsync policy for every connection (WAL mode). FULL (the default) syncs the log on every
# commit, so a turn answered 202 survives a power loss. NORMAL syncs only at checkpoints: several
# times the commit rate, but a power loss (not a process crash) can drop the last commits -- turns
# that were already answered as stored. Opt in only where that is acceptable.
SQLITE_SYNCHRONOUS_LEVELS = ("FULL", "NORMAL", "EXTRA")
CREWLET_SQLITE_SYNCHRONOUS = os.environ.get("CREWLET_SQLITE_SYNCHRONOUS", "FULL").strip().upper()
if CREWLET_SQLITE_SYNCHRONOUS not in SQLITE_SYNCHRONOUS_LEVELS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        f"CREWLET_SQLITE_SYNCHRONOUS must be one of {', '.join(SQLITE_SYNCHRONOUS_LEVELS)}, not {CREWLET_SQLITE_SYNCHRONOUS!r}"
    )
# Persistent connections, checked before reuse: a request (or an enqueue) no longer opens a backend
# or reloads sqlite-vec each time. CREWLET_DB_CONN_MAX_AGE=0 goes back to one connection a request.
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("CREWLET_DB_CONN_MAX_AGE", "60"))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS: list[dict[str, Any]] = []
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = True  # serve straight from the apps' static folders: no collectstatic step
LOGIN_URL = "/admin/login/"

# A request body past this is answered 413 before it is parsed (crewlet.api); every text and list
# field also has its own cap (learning.limits), so a body inside this size is bounded per field.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# crewlet.toml: the applied config file; a running process re-reads it when its content changes.
# the project's auxiliary purposes: ONE list, loaded by the first lookup (core.purposes.get)
CREWLET_PURPOSES = "learning.purposes.PURPOSES"

CREWLET_CONFIG_PATH = os.environ.get("CREWLET_CONFIG", str(BASE_DIR / "crewlet.toml"))

# django-q2: ORM broker on the same database by default; CREWLET_Q_REDIS switches to Redis.
Q_CLUSTER: dict[str, Any] = {
    "name": "crewlet",
    "workers": int(os.environ.get("CREWLET_Q_WORKERS", "2")),
    "timeout": 300,
    "retry": 360,
    "max_attempts": 1,
    "queue_limit": 50,
    "bulk": 10,
    "orm": "default",
    "catch_up": False,
    "sync": os.environ.get("CREWLET_Q_SYNC", "0") == "1",
}
if os.environ.get("CREWLET_Q_REDIS"):
    Q_CLUSTER.pop("orm")
    Q_CLUSTER["redis"] = os.environ["CREWLET_Q_REDIS"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(levelname)s %(name)s: %(message)s"}},
    "filters": {"no_per_task_enqueue_line": {"()": "crewlet.log_filters.DropPerTaskEnqueueLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        # configured here, django-q2 adds no handler of its own; its per-enqueue INFO line is dropped, the
        # rest at the queue's own level as before (the cluster's "ready for work at PID" lines included)
        "django-q": {"handlers": ["console"], "level": Q_CLUSTER.get("log_level", "INFO"),
                     "filters": ["no_per_task_enqueue_line"], "propagate": False},
        "crewlet": {"handlers": ["console"], "level": os.environ.get("CREWLET_LOG_LEVEL", "INFO")},
        "learning": {"handlers": ["console"], "level": os.environ.get("CREWLET_LOG_LEVEL", "INFO")},
        "knowledge": {"handlers": ["console"], "level": os.environ.get("CREWLET_LOG_LEVEL", "INFO")},
    },
}
