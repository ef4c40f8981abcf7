"""How the pages show stored values: JSON pretty-printed and an event's time (the graph
core's and the engine's own, re-exported here for the services that show them; a short hash is
``editor.graph.short_hash``)."""

from __future__ import annotations

from editor.engine.history import event_time
from editor.graph.jsonio import pretty_json

__all__ = ["event_time", "pretty_json"]
