"""Django settings. ``DATABASE_URL`` names the PostgreSQL database; unset, it is the embedded one
under var/ (``crewlet.embedded_db``)."""

import os
from pathlib import Path
from typing import Any

import dj_database_url

from crewlet import secret_key as _secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CREWLET_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Off unless asked for (``make serve`` asks): with it on, an unmapped error answers with a traceback.
DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
# DJANGO_SECRET_KEY, or a random key made once for this var/ folder: no key is written in the source.
# Processes on several hosts share sessions and the queue's signed tasks only with one DJANGO_SECRET_KEY.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or _secret_key.for_folder(VAR_DIR)
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver").split(",")

INSTALLED_APPS = [
    "learning.review.admin_site.LeadAdminConfig",  # django.contrib.admin with the lead's index
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "crewlet.apps.CrewletConfig",
    "django_q",
    "django_htmx",
    "ninja",  # serves /api/v1/docs with its bundled Swagger UI assets (no CDN)
    "core.apps.CoreConfig",
    "learning.apps.LearningConfig",
    "knowledge.apps.KnowledgeConfig",
    "learning.transcripts.apps.TranscriptsConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files (admin, API docs) under gunicorn too
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",  # CONTENT_SECURITY_POLICY below
    "django_htmx.middleware.HtmxMiddleware",
    "crewlet.unavailable.UnavailableMiddleware",  # a database refusing writes: 503 with Retry-After
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

if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"])}
else:
    from crewlet import embedded_db

    DATABASES = {"default": dj_database_url.parse(embedded_db.url(VAR_DIR / "pgdata"))}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("DATABASE_URL must name a PostgreSQL database (postgres://...) with pgvector")
# Persistent connections, pinged before reuse: a request (or an enqueue) does not open a backend
# each time, and one the server dropped (a restart) is replaced before a request uses it.
# CREWLET_DB_CONN_MAX_AGE=0 makes it one connection a request.
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("CREWLET_DB_CONN_MAX_AGE", "60"))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# An approximate vector index (core.vectors.ensure_index) keeps scanning until the seat's rows fill the
# LIMIT rather than stopping at ef_search candidates (pgvector >= 0.8; older servers ignore it).
DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c hnsw.iterative_scan=relaxed_order"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# create_lead and the admin's password forms refuse what these refuse
AUTH_PASSWORD_VALIDATORS: list[dict[str, Any]] = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in ("UserAttributeSimilarityValidator", "MinimumLengthValidator", "CommonPasswordValidator",
                 "NumericPasswordValidator")
]

# HTTPS outside DEBUG: secure cookies, HSTS and a redirect of plain HTTP (``manage.py check --deploy`` is
# clean). Behind a proxy that terminates TLS, DJANGO_SECURE_PROXY_SSL_HEADER names the header it sets
# (HTTP_X_FORWARDED_PROTO); a process served over plain HTTP on loopback (tests, benches, the example)
# sets DJANGO_SECURE_SSL_REDIRECT=0.
SECURE_SSL_REDIRECT = os.environ.get("DJANGO_SECURE_SSL_REDIRECT", "0" if DEBUG else "1") == "1"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = 0 if DEBUG else int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
if os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (os.environ["DJANGO_SECURE_PROXY_SSL_HEADER"], "https")
# No inline script on any page (the lead's pages and the admin): scripts and styles come from static files.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],  # the admin's and htmx's style attributes; no script
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
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
# Where the config may send data and which environment variables it may read secrets from (comma-separated;
# crewlet.config.trust): the operator's lists, which no config file or editor can widen.
CREWLET_ALLOWED_PROVIDER_HOSTS = [
    h.strip() for h in os.environ.get("CREWLET_ALLOWED_PROVIDER_HOSTS", "").split(",") if h.strip()]
CREWLET_ALLOWED_SECRET_ENV = [
    n.strip() for n in os.environ.get("CREWLET_ALLOWED_SECRET_ENV", "").split(",") if n.strip()]

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
