"""Django for the benchmarks: production-like settings on a throwaway database.

Shared by the benchmarks that need the app (live validation, the engine's ORM store, the inbox).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def worker_environment(directory: Path, url: str, **extra: str) -> dict[str, str]:
    """The environment of the processes a benchmark starts (``db_worker``, and Django in the
    benchmark when it sets itself up from it): production-like settings on ``url``, files
    under ``directory``, and ``extra`` on top."""
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL_FILE"}
    env.update(
        DJANGO_SETTINGS_MODULE="editor.settings",
        DEBUG="false",
        SECRET_KEY="benchmark-only-secret-key-" + "x" * 30,
        ALLOWED_HOSTS="127.0.0.1",
        GATEHOUSE_VAR_DIR=str(directory),
        GATEHOUSE_LOG_LEVEL="WARNING",
        DATABASE_URL=url,
        PYTHONPATH=str(ROOT),
        **extra,
    )
    return env


def setup_django(
    directory: Path, *, database: str = "bench.sqlite3", respect_url: bool = False
) -> None:
    """Configure and migrate Django with ``DEBUG`` off, on SQLite under ``directory`` (or on
    ``DATABASE_URL`` when ``respect_url`` and it is set: then it must be an empty database)."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="editor.settings",
        DEBUG="false",
        SECRET_KEY="benchmark-only-secret-key-" + "x" * 30,
        ALLOWED_HOSTS="testserver",
        GATEHOUSE_SECURE_COOKIES="false",
        GATEHOUSE_VAR_DIR=str(directory),
    )
    os.environ.setdefault("GATEHOUSE_LOG_LEVEL", "WARNING")
    sqlite = f"sqlite:///{directory / database}"
    if respect_url:
        os.environ.setdefault("DATABASE_URL", sqlite)
    else:
        os.environ["DATABASE_URL"] = sqlite
    for name in ("DATABASE_URL_FILE", "SECRET_KEY_FILE"):
        os.environ.pop(name, None)
    import django

    # WhiteNoise warns that collectstatic has not run; the pages' static files are not served.
    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    # The pages' templates name static files; no collectstatic here, so plain storage.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0, interactive=False)
    from editor.apps import settle_start_up

    # As the servers do once started (editor/asgi.py).
    settle_start_up()
