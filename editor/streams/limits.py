"""How many streams may be open at once: per user and per web process
(``GATEHOUSE_STREAMS_PER_USER``, ``GATEHOUSE_STREAMS_PER_PROCESS``).

A stream holds a slot from the moment its response is made until the response is closed (the
client went away, the stream ended, the server stopped). Counted in the process, under a lock:
the ASGI server's event loop and the WSGI servers' threads share the counts.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from django.conf import settings

__all__ = ["RETRY_AFTER_SECONDS", "TooManyStreams", "claim", "open_streams"]

#: What a refused client is told to wait before trying again.
RETRY_AFTER_SECONDS = 10

_lock = threading.Lock()
_by_user: Counter[int] = Counter()
_total = 0


class TooManyStreams(Exception):
    """Opening one more stream would pass a limit: ``per`` is ``"user"`` or ``"process"``."""

    def __init__(self, per: str, limit: int) -> None:
        self.per = per
        self.limit = limit
        if per == "user":
            message = (
                f"you already have {limit} live streams open, the most one user may have "
                "(GATEHOUSE_STREAMS_PER_USER); close a tab or a stream and try again"
            )
        else:
            message = (
                f"this server already holds {limit} live streams, the most it holds at once "
                "(GATEHOUSE_STREAMS_PER_PROCESS); try again shortly"
            )
        super().__init__(message)
        self.message = message


def claim(user_id: int) -> Callable[[], None]:
    """Take a slot for one more stream of ``user_id``; returns what gives it back (once, however
    often it is called). Raises :class:`TooManyStreams`."""
    global _total
    per_user = settings.GATEHOUSE_STREAMS_PER_USER
    per_process = settings.GATEHOUSE_STREAMS_PER_PROCESS
    with _lock:
        if _by_user[user_id] >= per_user:
            raise TooManyStreams("user", per_user)
        if _total >= per_process:
            raise TooManyStreams("process", per_process)
        _by_user[user_id] += 1
        _total += 1
    released = False

    def release() -> None:
        global _total
        nonlocal released
        with _lock:
            if released:
                return
            released = True
            _by_user[user_id] -= 1
            if _by_user[user_id] <= 0:
                del _by_user[user_id]
            _total -= 1

    return release


def open_streams(user_id: int | None = None) -> int:
    """How many streams are open in this process (of ``user_id``, when given)."""
    with _lock:
        return _total if user_id is None else _by_user[user_id]
