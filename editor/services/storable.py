"""What every supported database can store.

PostgreSQL refuses the NUL character (U+0000) in text columns and in ``jsonb``, where SQLite
takes it. The services refuse it up front, on every database, so a request gets the same
answer whichever one is configured. Where a NUL is in a JSON value is the graph package's
:func:`~editor.graph.jsonio.nul_path` (the forms read typed JSON with it too), re-exported here.
"""

from __future__ import annotations

from typing import Any

from editor.graph.jsonio import NUL, nul_path
from editor.services.errors import InvalidRequest

__all__ = ["NUL", "check_storable", "nul_path", "storable_text"]


def check_storable(value: Any) -> None:
    """Refuse a request body (a JSON object) that holds a NUL anywhere, naming where.

    Raises :class:`InvalidRequest` whose ``field`` is the body's top-level key."""
    where = nul_path(value)
    if where is not None:
        field = where.split(".", 1)[0].split("[", 1)[0] or None
        raise InvalidRequest(f"`{where or '$'}` cannot contain the NUL character (U+0000)", field)


def storable_text(text: str) -> str:
    """``text`` with each NUL replaced by U+FFFD, for text Gatehouse writes itself about what a
    person did (a revision's summary naming a node id): kept readable, never refused."""
    return text.replace(NUL, "\ufffd")
