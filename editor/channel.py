"""How a web process learns that a run's log grew: PostgreSQL's ``NOTIFY`` on commit.

Every append (the store's, in the append's own transaction) announces ``"<run id> <event
count>"`` on :data:`CHANNEL`. PostgreSQL delivers a notification only when its transaction
commits, and never one of a transaction that rolled back, so a listener hears of exactly the
appends that happened. On SQLite there is no such channel: the streams poll instead
(:mod:`editor.streams.hub`).
"""

from __future__ import annotations

from django.db import connection

__all__ = ["CHANNEL", "announce_append", "parse_announcement"]

#: The channel every web process listens on.
CHANNEL = "gatehouse_run_appended"


def announce_append(run_id: str, event_count: int) -> None:
    """Announce, when the current transaction commits, that ``run_id``'s log now holds
    ``event_count`` events. Nothing on a database without ``NOTIFY``."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, f"{run_id} {event_count}"])


def parse_announcement(payload: str) -> tuple[str, int] | None:
    """``(run id, event count)`` of a notification, or ``None`` for one we did not send."""
    run_id, _, count = payload.partition(" ")
    if not run_id or not count.isdigit():
        return None
    return run_id, int(count)
