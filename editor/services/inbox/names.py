"""Node names, read once per graph per process: the cards show a gate's name, and frozen
graphs never change, so a graph's canonical bytes are read the first time a process meets it
and its names kept (at most ``_NAMES_LIMIT`` graphs)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from typing import Any

import orjson

from editor.models import FrozenGraph

__all__ = ["forget_node_names", "node_names"]

_NAMES_LIMIT = 512
_names: dict[str, dict[str, str]] = {}
_names_lock = threading.Lock()


def _collect_names(value: Any, names: dict[str, str]) -> None:
    """Every node's ``name`` in a graph's wire form, embedded subgraphs included (a node of
    a map's body subgraph can be a gate too); the first of two equal ids wins."""
    if isinstance(value, dict):
        payload = value.get("payload")
        if "kind" in value and isinstance(payload, dict):
            node_id, name = payload.get("id"), payload.get("name")
            if isinstance(node_id, str) and isinstance(name, str):
                names.setdefault(node_id, name)
        for item in value.values():
            if isinstance(item, dict | list):
                _collect_names(item, names)
    elif isinstance(value, list):
        for item in value:
            _collect_names(item, names)


def node_names(hashes: Iterable[str]) -> dict[str, dict[str, str]]:
    """``graph hash → {node id: name}`` for these graphs: at most one query, for the graphs
    this process has not read yet."""
    wanted = set(hashes)
    with _names_lock:
        missing = [digest for digest in wanted if digest not in _names]
    if missing:
        rows = FrozenGraph.objects.filter(hash__in=missing).values_list("hash", "canonical")
        read: dict[str, dict[str, str]] = {}
        for digest, canonical in rows:
            names: dict[str, str] = {}
            # Stored graphs are canonical JSON; a row that is not would only lose its names.
            with contextlib.suppress(orjson.JSONDecodeError):
                _collect_names(orjson.loads(bytes(canonical)), names)
            read[digest] = names
        with _names_lock:
            if len(_names) + len(read) > _NAMES_LIMIT:
                _names.clear()
            _names.update(read)
    with _names_lock:
        return {digest: _names.get(digest, {}) for digest in wanted}


def forget_node_names() -> None:
    """Empty the node-name cache (for tests that count queries from a cold start)."""
    with _names_lock:
        _names.clear()
