"""Reading settings from the environment: strict helpers, and the URLs that name a database
or a mail server.

:mod:`editor.settings` reads every variable through these. A value they cannot read stops
start-up with :class:`ImproperlyConfigured` naming the variable, rather than falling back to a
default that hides a typo. Secrets may instead be given as a file path in ``NAME_FILE``
(Docker and Kubernetes secrets).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

__all__ = [
    "base_url",
    "database_from_url",
    "email_from_url",
    "env_bool",
    "env_int",
    "env_list",
    "env_optional_int",
    "env_secret",
    "env_str",
    "header_name",
    "llm_env_names",
    "one_of",
    "require_unless_debug",
    "resolve_path",
    "smtp_mailer",
    "sqlite_database",
    "webhook_urls",
]

_DIGITS = re.compile(r"[0-9]+")


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's text, or ``default`` when it is unset or empty."""
    value = os.environ.get(name, "")
    return value if value else default


def env_bool(name: str, default: bool) -> bool:
    """``true`` or ``false`` exactly; anything else stops start-up."""
    value = os.environ.get(name)
    if value is None:
        return default
    if value == "true":
        return True
    if value == "false":
        return False
    raise ImproperlyConfigured(f'{name} must be "true" or "false", not {value!r}')


def env_int(name: str, default: int, *, minimum: int = 1) -> int:
    """A whole number written in decimal digits, at least ``minimum``."""
    value = os.environ.get(name)
    if value is None:
        return default
    if not _DIGITS.fullmatch(value.strip()):
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}")
    number = int(value)
    if number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {number}")
    return number


def env_optional_int(name: str, *, minimum: int = 1) -> int | None:
    """Like :func:`env_int`, but unset or empty means ``None`` (no value: no limit)."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return env_int(name, minimum, minimum=minimum)


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """A comma-separated list; blank items are dropped."""
    value = os.environ.get(name)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def env_secret(name: str) -> str | None:
    """``NAME``, or the contents of the file named by ``NAME_FILE`` (one of them, not both).

    A single trailing newline in the file is ignored, as editors and ``echo`` add one.
    """
    file_name = f"{name}_FILE"
    value = env_str(name)
    path = env_str(file_name)
    if value is not None and path is not None:
        raise ImproperlyConfigured(f"set {name} or {file_name}, not both")
    if path is None:
        return value
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ImproperlyConfigured(f"{file_name}: cannot read {path}: {error}") from None
    text = text.removesuffix("\n").removesuffix("\r")
    return text or None


_EMAIL_SCHEMES = {
    "smtp": (False, False),
    "smtp+tls": (True, False),  # STARTTLS
    "smtps": (False, True),  # TLS from the first byte
}


def email_from_url(url: str, *, timeout: int = 10) -> dict[str, Any]:
    """The default mailer (Django's ``MAILERS["default"]``) for a ``GATEHOUSE_EMAIL_URL``:
    ``smtp://[user:pass@]host[:port]`` (``smtp+tls://`` for STARTTLS, ``smtps://`` for implicit
    TLS), or ``console://`` to print the messages instead of sending them."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "console":
        return {"BACKEND": "django.core.mail.backends.console.EmailBackend"}
    if scheme not in _EMAIL_SCHEMES:
        raise ImproperlyConfigured(
            "GATEHOUSE_EMAIL_URL must start with smtp://, smtp+tls://, smtps:// or console://"
        )
    if not parts.hostname:
        raise ImproperlyConfigured("GATEHOUSE_EMAIL_URL must name the mail server: smtp://HOST")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured("GATEHOUSE_EMAIL_URL has a port that is not a number") from None
    use_tls, use_ssl = _EMAIL_SCHEMES[scheme]
    return smtp_mailer(
        parts.hostname,
        port or (465 if use_ssl else 587 if use_tls else 25),
        unquote(parts.username or ""),
        unquote(parts.password or ""),
        use_tls=use_tls,
        use_ssl=use_ssl,
        timeout=timeout,
    )


def smtp_mailer(
    host: str,
    port: int,
    username: str,
    password: str,
    *,
    use_tls: bool,
    use_ssl: bool,
    timeout: int,
) -> dict[str, Any]:
    if use_tls and use_ssl:
        raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be true")
    return {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {
            "host": host,
            "port": port,
            "username": username,
            "password": password,
            "use_tls": use_tls,
            "use_ssl": use_ssl,
            "timeout": timeout,
        },
    }


def database_from_url(url: str, *, base_dir: Path) -> dict[str, Any]:
    """Django's ``DATABASES["default"]`` for a ``DATABASE_URL``.

    ``sqlite:///relative/path`` (relative to the project), ``sqlite:////absolute/path``,
    ``sqlite:///:memory:``, and ``postgres://`` or ``postgresql://user:password@host:port/name``
    with query parameters passed on as connection options (``?sslmode=require``).
    """
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return sqlite_database(_sqlite_path(parts.netloc, parts.path, base_dir))
    if parts.scheme in ("postgres", "postgresql"):
        name = unquote(parts.path.removeprefix("/"))
        if not name:
            raise ImproperlyConfigured("DATABASE_URL must name the database: postgres://…/NAME")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured("DATABASE_URL has a port that is not a number") from None
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "OPTIONS": dict(parse_qsl(parts.query)),
            # A new connection costs ~12 ms here (TCP and SCRAM sign-in), a query on an open
            # one ~0.2 ms: each process keeps its connection for a minute, checked before
            # reuse so a server restart costs one reconnect, not an error.
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL must start with sqlite://, postgres:// or postgresql://, "
        f"not {parts.scheme + '://' if parts.scheme else repr(url)}"
    )


def _sqlite_path(netloc: str, path: str, base_dir: Path) -> str:
    if netloc == ":memory:" or path in ("/:memory:", ":memory:"):
        return ":memory:"
    if netloc:
        raise ImproperlyConfigured(
            "DATABASE_URL: a SQLite URL has three slashes before a relative path "
            "(sqlite:///var/db.sqlite3) and four before an absolute one"
        )
    relative = path.removeprefix("/")
    if not relative:
        raise ImproperlyConfigured("DATABASE_URL must name the SQLite file: sqlite:///PATH")
    return str(base_dir / unquote(relative))


def sqlite_database(name: str) -> dict[str, Any]:
    # The web process and the run worker write at once: WAL and immediate transactions with a
    # busy timeout make concurrent writers queue instead of failing with "database is locked".
    # editor.sqlite is Django's backend keeping the file and var/ private (editor.local_state).
    return {
        "ENGINE": "editor.sqlite",
        "NAME": name,
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            # WAL with synchronous=NORMAL: a commit costs no fsync (the WAL is synced at
            # checkpoints), still safe against a process crash; a power cut may lose the
            # last commits. SQLite's own advice for WAL, and 5-10x cheaper appends.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # Tests run on an in-memory database, as Django makes one for its own SQLite backend,
        # said outright so that pytest-django (which knows only Django's backend by name) keeps
        # it there in each of its processes instead of a file named after this one.
        "TEST": {"NAME": ":memory:"},
    }


def resolve_path(path: str, base_dir: Path) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else base_dir / candidate


def require_unless_debug(name: str, value: Any, debug: bool) -> None:
    if not value and not debug:
        raise ImproperlyConfigured(f"{name} is required when DEBUG is off (see .env.example)")


def base_url(value: str) -> str:
    """``GATEHOUSE_BASE_URL`` without its trailing slash: an http:// or https:// address."""
    value = value.rstrip("/")
    if value and not re.fullmatch(r"https?://[^/\s?#]+(/[^\s?#]*)?", value):
        raise ImproperlyConfigured(
            "GATEHOUSE_BASE_URL must be an http:// or https:// address such as "
            f"https://gatehouse.example.org, not {value!r}"
        )
    return value


def webhook_urls(name: str, value: str | None) -> list[str]:
    """A comma-separated list of http:// or https:// URLs without user info. A URL may carry a
    secret (a chat tool's incoming webhook does, in its path), so a bad one is named by its
    position, never quoted."""
    urls = [item.strip() for item in (value or "").split(",") if item.strip()]
    for position, url in enumerate(urls, start=1):
        try:
            split = urlsplit(url)
            split.port  # noqa: B018  (reading it checks it)
        except ValueError:
            split = None
        if (
            split is None
            or split.scheme not in ("http", "https")
            or not split.hostname
            or split.username is not None
            or split.password is not None
            or re.search(r"\s", url)
        ):
            raise ImproperlyConfigured(
                f"{name}: entry {position} is not an http:// or https:// URL without user info"
            )
    return urls


def header_name(name: str, value: str | None) -> str | None:
    """``value`` when it is an HTTP header's name (letters, digits, ``-``), or unset."""
    if value and not re.fullmatch(r"[A-Za-z0-9-]+", value):
        raise ImproperlyConfigured(f"{name} must be a header name, not {value!r}")
    return value


def one_of(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices``."""
    if value not in choices:
        expected = f"{', '.join(choices[:-1])} or {choices[-1]}"
        raise ImproperlyConfigured(f"{name} must be {expected}, not {value!r}")
    return value


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
#: Gatehouse's own secrets: never readable by an agent file, whatever an allow-list says.
_OWN_SECRETS = ("SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD")


def llm_env_names(name: str, values: list[str]) -> list[str]:
    """``values`` (``GATEHOUSE_LLM_ENV_ALLOW``'s items) checked: each an environment variable
    name, and none of Gatehouse's own settings (``GATEHOUSE_…``, ``SECRET_KEY``, …), which an
    agent file must never be able to read."""
    for value in values:
        if not _ENV_NAME.fullmatch(value):
            raise ImproperlyConfigured(
                f"{name}: `{value}` is not an environment variable name (letters, digits, `_`)"
            )
        base = value.removesuffix("_FILE")
        if base.startswith("GATEHOUSE_") or base in _OWN_SECRETS:
            raise ImproperlyConfigured(
                f"{name}: `{value}` is one of Gatehouse's own settings; an agent file must "
                "never read it (name a variable of its own for the model's endpoint or key)"
            )
    return values
