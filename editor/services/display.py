"""How the pages show stored values: JSON pretty-printed, an event's time, a short hash."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

__all__ = ["ShowsGraphHash", "event_time", "pretty_json", "short_graph_hash"]


def pretty_json(value: Any) -> str:
    """``value`` as JSON for people: indented by two spaces, non-ASCII text as it is."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def short_graph_hash(graph_hash: str) -> str:
    """The first 8 hex digits of a graph hash, as the cards show it."""
    return graph_hash.removeprefix("sha256:")[:8]


def event_time(text: str | None) -> datetime | None:
    """An event's ``recorded_at`` (RFC 3339, ``Z``) as a datetime; ``None`` when there is
    none or it cannot be read."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


class ShowsGraphHash:
    """For a record with a ``graph_hash``: the hash as the pages show it and link it."""

    __slots__ = ()
    graph_hash: str

    @property
    def short_hash(self) -> str:
        return short_graph_hash(self.graph_hash)

    @property
    def hex_digest(self) -> str:
        return self.graph_hash.removeprefix("sha256:")
