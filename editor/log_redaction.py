"""Credentials in a query string never reach a log line.

Gatehouse refuses a token sent as ``?token=…`` (only ``Authorization: Bearer`` authenticates),
but the access logs of the servers (uvicorn's, under gunicorn or alone, and Django's development
server) write every request's path with its query string, so a client that tried would have
left its token in the log. :class:`QueryCredentialsFilter` replaces the value of every query
parameter whose name says it holds a credential (``token``, ``access_token``, ``api_key``,
``password``, ``secret``, ``session``, ``auth``…) with ``[redacted]`` in each record's message
and arguments. It is installed on the handler of Django's ``LOGGING`` (every record the project
logs) and on the servers' access loggers, whose handlers are the servers' own
(:func:`install`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["ACCESS_LOGGERS", "REDACTED", "QueryCredentialsFilter", "install", "redact"]

REDACTED = "[redacted]"

#: The loggers that write a request's path with its query string.
ACCESS_LOGGERS = ("uvicorn.access", "gunicorn.access", "django.server")

# A parameter (after `?`, `&` or `;`) whose name holds one of these words, and its value up to
# the next separator, quote or space. Names are matched percent-encoded or not.
_CREDENTIAL_WORDS = r"token|key|secret|passw|pwd|auth|session|signature|credential|bearer"
_PARAMETER = re.compile(
    rf"(?P<name>[?&;][^=&;#\s\"']*?(?:{_CREDENTIAL_WORDS})[^=&;#\s\"']*=)[^&;#\s\"']*",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` with the value of every credential-named query parameter replaced."""
    if "=" not in text:
        return text
    return _PARAMETER.sub(lambda match: match["name"] + REDACTED, text)


class QueryCredentialsFilter(logging.Filter):
    """Redacts query-string credentials in a record; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: _redacted(value) for key, value in record.args.items()}
        return True


def _redacted(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


def install() -> None:
    """Puts the filter on the servers' access loggers (once per process)."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(known, QueryCredentialsFilter) for known in logger.filters):
            logger.addFilter(QueryCredentialsFilter())
