"""Benchmark of the graph core: ``validate_document`` against ``json.loads``.

Builds documents of 1,000 and 10,000 nodes (every node kind, 0.10's delays and
folds' ``on_bound`` among them, about 1.2 edges per node, labelled branches, maps
and folds with body nodes, gates with one of
three schemas, display names on a third of the nodes) and prints, measured in
this one run, the time of parse + validate + hash as a ratio to ``json.loads``
of the same bytes, and the 10k/1k cost ratio; and where the time goes, with the editor's hints
(``editor.graph.hints``, made once per draft text, not part of the verdict) beside the phases.
Run it with ``make bench``.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from editor.graph import validate_document
from editor.graph.hints import document_hints
from editor.graph.jsonio import read_json
from editor.graph.parsing import parse_graph
from editor.graph.validation import validate
from editor.graph.wire import graph_hash

AGENT_HASH = "sha256:" + "ab" * 32
RECORD_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "score": {"type": "number"}},
    "required": ["text"],
}
GATE_SCHEMAS = (
    {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]},
    {
        "type": "object",
        "properties": {
            "draft": {"type": "string", "maxLength": 20000, "title": "Draft"},
            "approved": {"type": "boolean", "title": "Approve"},
            "comment": {"type": "string"},
        },
        "required": ["draft", "approved"],
    },
    {
        "type": "object",
        "properties": {"choice": {"enum": ["a", "b", "c"]}, "weight": {"type": "integer"}},
    },
)


def build_document(node_target: int) -> dict[str, Any]:
    """A valid document of about ``node_target`` nodes, built from 10-node blocks."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []

    def add(kind: str, payload: dict[str, Any]) -> None:
        if len(nodes) % 3 == 0:
            payload["name"] = f"Step {len(nodes)} ({kind})"
        nodes.append({"kind": kind, "payload": payload})

    block = 0
    previous_fold: str | None = None
    while len(nodes) + 10 <= node_target:
        i = block
        agent, gate, branch = f"draft{i}", f"review{i}", f"route{i}"
        accept, reject = f"accept{i}", f"reject{i}"
        fan, fan_body, loop, loop_body = (
            f"each{i}",
            f"each{i}_body",
            f"refine{i}",
            f"refine{i}_body",
        )
        add("agent", {"id": agent, "agent_hash": AGENT_HASH, "output_schema": RECORD_SCHEMA})
        add("gate", {"id": gate, "prompt": "Approve?", "approval_schema": GATE_SCHEMAS[i % 3]})
        add(
            "branch",
            {
                "id": branch,
                "cases": [
                    {"name": "yes", "when": {"kind": "expression", "value": "approved == true"}},
                    {"name": "no", "when": {"kind": "expression", "value": "!(approved == true)"}},
                ],
            },
        )
        add(
            "tool",
            {"id": accept, "tool": "echo", "input": {"text": "draft", "score": "meta.score"}},
        )
        add("tool", {"id": reject, "tool": "echo", "input_schema": RECORD_SCHEMA})
        add(
            "map",
            {
                "id": fan,
                "over": "items",
                "concurrency": 4,
                "body": {"kind": "node", "value": fan_body},
            },
        )
        add("tool", {"id": fan_body, "tool": "score_text"})
        wait = f"cooloff{i}"
        add("delay", {"id": wait, "seconds": 3600 * (1 + i % 3)})
        add(
            "fold",
            {
                "id": loop,
                "body": {"kind": "node", "value": loop_body},
                "max_iterations": 3,
                "stop_when": "score >= 0.85 && done == true",
                "join": {"kind": "best_by", "value": "score"},
                **({"on_bound": "fail" if i % 4 == 1 else "join"} if i % 2 else {}),
            },
        )
        add("agent", {"id": loop_body, "agent_hash": AGENT_HASH})
        if previous_fold is not None:
            edges.append({"from": previous_fold, "to": agent})
        edges.extend(
            [
                {"from": agent, "to": gate},
                {"from": gate, "to": branch},
                {"from": branch, "to": accept, "label": "yes"},
                {"from": branch, "to": reject, "label": "no"},
                {"from": accept, "to": fan},
                {"from": reject, "to": fan},
                {"from": fan, "to": wait},
                {"from": wait, "to": loop},
                {"from": agent, "to": fan},
                {"from": gate, "to": loop},
                {"from": agent, "to": reject},
            ]
        )
        previous_fold = loop
        block += 1
    while len(nodes) < node_target:
        add("tool", {"id": f"tail{len(nodes)}", "tool": "echo"})
    return {"schema_version": 1, "nodes": nodes, "edges": edges}


def measure(function: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``function`` in seconds.

    The collector is paused while timing, as :mod:`timeit` does, for both sides of
    every ratio: a collection in the middle of a run measures the heap, not the code.
    """
    samples = []
    for _ in range(repeats):
        gc.disable()
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
        gc.enable()
    return statistics.median(samples)


def main() -> None:
    rows = []
    costs = {}
    phases = {}
    cold = {}
    for size, repeats in ((1_000, 31), (10_000, 11)):
        document = build_document(size)
        data = json.dumps(document).encode()
        start = time.perf_counter()
        body = validate_document(data)
        cold[size] = time.perf_counter() - start
        assert body["valid"], body.get("errors", [])[:3]
        edges = len(document["edges"])
        loads = measure(lambda data=data: json.loads(data), repeats)
        ours = measure(lambda data=data: validate_document(data), repeats)
        costs[size] = ours
        rows.append((size, edges, len(data), loads, ours))
        value = read_json(data)
        graph = parse_graph(read_json(data))
        phases[size] = (
            loads,
            {
                "read_json": measure(lambda data=data: read_json(data), repeats),
                "parse_graph": measure(lambda value=value: parse_graph(value), repeats),
                "validate": measure(lambda graph=graph: validate(graph), repeats),
                "graph_hash": measure(lambda value=value: graph_hash(parse_graph(value)), repeats)
                - measure(lambda value=value: parse_graph(value), repeats),
                # The editor's hints (never part of validate_document): made once per draft text.
                "hints": measure(lambda graph=graph: document_hints(graph), repeats),
            },
        )
    print("validate_document (strict parse + validate + hash) vs json.loads, median of runs")
    print(f"{'nodes':>7} {'edges':>7} {'bytes':>10} {'json.loads':>11} {'ours':>9} {'ratio':>6}")
    for size, edges, length, loads, ours in rows:
        print(
            f"{size:>7} {edges:>7} {length:>10} {loads * 1000:>9.1f}ms "
            f"{ours * 1000:>7.1f}ms {ours / loads:>5.2f}x"
        )
    print(f"10k/1k cost ratio: {costs[10_000] / costs[1_000]:.2f}")
    print()
    print("where the time goes, as multiples of json.loads of the same bytes")
    for size, (loads, parts) in phases.items():
        shares = "  ".join(f"{name} {cost / loads:.2f}x" for name, cost in parts.items())
        print(f"{size:>7} nodes: {shares}")
    print()
    print("first call in this process (memo caches empty), as a multiple of json.loads")
    for size, _edges, _length, loads, _ours in rows:
        print(f"{size:>7} nodes: {cold[size] * 1000:.1f}ms, {cold[size] / loads:.2f}x")


if __name__ == "__main__":
    main()
