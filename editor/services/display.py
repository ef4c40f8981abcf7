"""How the pages show stored values: JSON pretty-printed, an event's time, a short hash
(the first two are the graph core's and the engine's own, re-exported here)."""

from __future__ import annotations

from editor.engine.history import event_time
from editor.graph.jsonio import pretty_json

__all__ = ["ShowsGraphHash", "event_time", "pretty_json", "short_graph_hash"]


def short_graph_hash(graph_hash: str) -> str:
    """The first 8 hex digits of a graph hash, as the cards show it."""
    return graph_hash.removeprefix("sha256:")[:8]


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
