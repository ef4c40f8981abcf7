"""What every supported database can store.

PostgreSQL refuses the NUL character (U+0000) in text columns and in ``jsonb``, where SQLite
takes it. The services refuse it up front, on every database, so a request gets the same
answer whichever one is configured.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NUL", "nul_path"]

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
