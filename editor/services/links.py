"""Absolute links to this installation, for email (spec 07: *absolute links use
``GATEHOUSE_BASE_URL``*).

A link in an email is read away from the page, so it must carry the scheme and host. The
base is ``GATEHOUSE_BASE_URL``; when that is unset, the best guess this process can make: the
first concrete name in ``ALLOWED_HOSTS`` (``https`` when ``GATEHOUSE_TLS`` is on), else the
address ``manage.py runserver`` serves by default. ``manage.py check --deploy`` warns when email
is configured without ``GATEHOUSE_BASE_URL`` (``editor.checks``), and ``make run`` sets it to the
address it serves.
"""

from __future__ import annotations

from django.conf import settings

__all__ = ["LOCAL_BASE_URL", "absolute_url", "base_url", "base_url_is_set", "card_id"]

#: What ``manage.py runserver`` serves when told nothing else.
LOCAL_BASE_URL = "http://127.0.0.1:8000"


def base_url_is_set() -> bool:
    return bool(getattr(settings, "GATEHOUSE_BASE_URL", ""))


def base_url() -> str:
    """Where people reach this installation, without a trailing slash."""
    configured = str(getattr(settings, "GATEHOUSE_BASE_URL", "") or "").rstrip("/")
    if configured:
        return configured
    scheme = "https" if getattr(settings, "GATEHOUSE_TLS", False) else "http"
    for host in getattr(settings, "ALLOWED_HOSTS", []):
        name = str(host).strip()
        if name and name != "*" and not name.startswith("."):
            return f"{scheme}://{name}"
    return LOCAL_BASE_URL


def absolute_url(path: str) -> str:
    """``path`` (``/inbox/#card-…``) on this installation."""
    return base_url() + (path if path.startswith("/") else "/" + path)


def card_id(run: str, seq: int | None = None) -> str:
    """An inbox card's element id, ``card-<run>-<seq>``, which links name as their fragment
    (``/inbox/#card-…``); ``card-<run>`` when the post did not say which item it was."""
    return f"card-{run}" if seq is None else f"card-{run}-{seq}"
