"""What every supported database can store.

PostgreSQL refuses the NUL character (U+0000) in text columns and in ``jsonb``, where SQLite
takes it. The services refuse it up front, on every database, so a request gets the same
answer whichever one is configured.
"""

from __future__ import annotations

from typing import Any

from editor.services.errors import InvalidRequest

__all__ = ["NUL", "check_storable", "nul_path", "storable_text"]

NUL = "\x00"


def nul_path(value: Any, path: str = "") -> str | None:
    """Where the first NUL character in a JSON value is (``""`` for the value itself), or None."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                return where
            found = nul_path(item, where)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = nul_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


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
