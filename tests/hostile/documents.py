"""Documents too large or too regular to write by hand, for the Python cases under ``cases/``."""

from __future__ import annotations

import random
from typing import Any

__all__ = ["dense_graph", "wide_graph"]


def dense_graph(seed: int, nodes: int = 400, edges: int = 1900) -> dict[str, Any]:
    """A valid graph of ``nodes`` echo tools and ``edges`` random forward edges: under the
    drawing cap (500 nodes, 2,000 edges), and yet ``dot`` takes ten seconds and more to lay it
    out (about 13 s on the development machine)."""
    chosen = random.Random(seed)
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < edges:
        a, b = chosen.sample(range(nodes), 2)
        pairs.add((min(a, b), max(a, b)))
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": f"s{seed}n{n}", "tool": "echo"}}
            for n in range(nodes)
        ],
        "edges": [{"from": f"s{seed}n{a}", "to": f"s{seed}n{b}"} for a, b in sorted(pairs)],
    }


def wide_graph(seed: int, nodes: int, id_length: int) -> dict[str, Any]:
    """``nodes`` unconnected echo tools with ids of ``id_length`` characters: every node is an
    entry and a terminal, so the graph's summary (``GET /v1/graphs``) lists every id twice."""
    prefix = f"w{seed}-"
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "tool",
                "payload": {"id": f"{prefix}{n:0{id_length - len(prefix)}d}", "tool": "echo"},
            }
            for n in range(nodes)
        ],
        "edges": [],
    }
