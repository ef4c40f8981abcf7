"""Benchmark of the run engine (spec 04): its own overhead, map concurrency, and resume latency.

Measured in one run, with the in-memory store and with the ORM store on a throwaway SQLite
database (WAL, as ``make run`` uses it):

* **overhead**: a 1,000-node chain of ``echo`` tool nodes, driven start to end; events per
  second and microseconds per node;
* **map concurrency**: a map of 200 items over a tool that sleeps 20 ms, at concurrency 1 and
  8; the speed-up ratio;
* **resume latency**: from a gate's resolution being recorded to the next node's
  ``NodeEntered`` being on record (the drive that a worker starts after a resume), median.

Run it with ``make bench`` (or ``python tests/benchmarks/engine.py``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from django_setup import setup_django  # noqa: E402  (this folder, on sys.path when run)

from editor.engine import (  # noqa: E402
    Engine,
    InMemoryStore,
    Installation,
    Limits,
    ToolEffect,
    ToolSpec,
    prepare_resume,
)
from editor.graph import Edge, GateNode, Graph, MapNode, ToolNode  # noqa: E402
from editor.graph.model import NodeBody  # noqa: E402
from editor.providers import build_registry as build_providers  # noqa: E402
from editor.tools import build_registry as build_tools  # noqa: E402

CHAIN = 1000
MAP_ITEMS = 200
SLEEP = 0.020
RESUMES = 15


class _NoAgents:
    def get(self, agent_hash: str) -> None:
        return None


def installation() -> Installation:
    tools = build_tools()
    tools.register(
        ToolSpec(
            name="nap",
            description="sleeps 20 ms, then returns its input",
            func=lambda value, context: (time.sleep(SLEEP), value)[1],
            effect=ToolEffect.IDEMPOTENT,
        )
    )
    return Installation(tools, build_providers(None, None), _NoAgents())


def chain_graph(length: int) -> Graph:
    nodes = tuple(ToolNode(id=f"n{i:04d}", tool="echo") for i in range(length))
    edges = tuple(Edge(f"n{i:04d}", f"n{i + 1:04d}") for i in range(length - 1))
    return Graph(1, nodes, edges)


def map_graph(concurrency: int) -> Graph:
    return Graph(
        1,
        (
            MapNode(id="each", over="items", concurrency=concurrency, body=NodeBody("nap")),
            ToolNode(id="nap", tool="nap"),
        ),
    )


def gate_graph() -> Graph:
    return Graph(
        1,
        (
            GateNode(id="approve", approval_schema={"type": "object"}),
            ToolNode(id="after", tool="echo"),
        ),
        (Edge("approve", "after"),),
    )


class Backend:
    """Creates runs and drives them on one kind of store."""

    name = ""

    def start(self, graph: Graph, value: Any) -> str:
        raise NotImplementedError

    def engine(self) -> Engine:
        raise NotImplementedError

    def drive(self, run_id: str) -> str:
        return self.engine().drive(run_id)

    def events(self, run_id: str) -> int:
        raise NotImplementedError

    def record(self, run_id: str, events: list, status: dict) -> None:
        raise NotImplementedError

    def load(self, run_id: str) -> Any:
        raise NotImplementedError


class Memory(Backend):
    name = "in-memory store"

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.installation = installation()

    def start(self, graph: Graph, value: Any) -> str:
        return self.store.start(graph, value)

    def engine(self) -> Engine:
        return Engine(self.store, self.installation, limits=Limits())

    def events(self, run_id: str) -> int:
        return len(self.store.events[run_id])

    def record(self, run_id: str, events: list, status: dict) -> None:
        self.store.record(run_id, events, status)

    def load(self, run_id: str) -> Any:
        return self.store.load_run(run_id)


class Orm(Backend):
    name = "ORM store, SQLite"

    def __init__(self, directory: Path) -> None:
        setup_django(directory, database="engine.sqlite3")
        from editor.store import OrmRunStore

        self.installation = installation()
        self.owner = f"bench:{uuid.uuid4().hex[:8]}"
        self.store = OrmRunStore(self.owner, 60)

    def start(self, graph: Graph, value: Any) -> str:
        from editor.engine import start_event
        from editor.models import FrozenGraph, Run
        from editor.services.documents.graphs import save_graph

        digest = save_graph(graph).graph
        run = Run.objects.create(graph=FrozenGraph.objects.get(hash=digest), input=value)
        first = start_event(str(run.id), digest, value, None, datetime.now(UTC))
        self.store.record(str(run.id), [first], {"state": "queued"})
        return str(run.id)

    def engine(self) -> Engine:
        return Engine(self.store, self.installation, limits=Limits())

    def drive(self, run_id: str) -> str:
        if not self.store.claim(run_id):
            raise RuntimeError("could not claim the run")
        return super().drive(run_id)

    def events(self, run_id: str) -> int:
        from editor.models import RunEvent

        return RunEvent.objects.filter(run_id=run_id).count()

    def record(self, run_id: str, events: list, status: dict) -> None:
        self.store.record(run_id, events, status)

    def load(self, run_id: str) -> Any:
        return self.store.load_run(run_id)


def overhead(backend: Backend) -> tuple[float, float, int]:
    run_id = backend.start(chain_graph(CHAIN), {"n": 1})
    started = time.perf_counter()
    state = backend.drive(run_id)
    elapsed = time.perf_counter() - started
    assert state == "completed", state
    events = backend.events(run_id)
    return events / elapsed, elapsed / CHAIN * 1e6, events


def map_time(backend: Backend, concurrency: int) -> float:
    run_id = backend.start(map_graph(concurrency), {"items": list(range(MAP_ITEMS))})
    started = time.perf_counter()
    state = backend.drive(run_id)
    elapsed = time.perf_counter() - started
    assert state == "completed", state
    return elapsed


def resume_latency(backend: Backend) -> float:
    samples = []
    for _ in range(RESUMES):
        run_id = backend.start(gate_graph(), {"x": 1})
        assert backend.drive(run_id) == "suspended"
        events, status = prepare_resume(
            backend.load(run_id), {"input": {}}, "bench", datetime.now(UTC)
        )
        started = time.perf_counter()
        backend.record(run_id, events, status)
        assert backend.drive(run_id) == "completed"
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def report(backend: Backend) -> None:
    rate, per_node, events = overhead(backend)
    print(f"{backend.name}:")
    print(
        f"  overhead, {CHAIN}-node chain of echo tools: {events} events, "
        f"{rate:,.0f} events/s, {per_node:,.0f} us per node"
    )
    one = map_time(backend, 1)
    eight = map_time(backend, 8)
    print(
        f"  map of {MAP_ITEMS} items over a {SLEEP * 1000:.0f} ms tool: concurrency 1 {one:.2f} s, "
        f"concurrency 8 {eight:.2f} s, speed-up {one / eight:.1f}x"
    )
    print(
        f"  resume to completion of the next node (record + drive), median of {RESUMES}: "
        f"{resume_latency(backend) * 1000:.1f} ms"
    )


def main() -> None:
    print(f"engine benchmark (Python {sys.version.split()[0]})")
    report(Memory())
    with tempfile.TemporaryDirectory(prefix="gatehouse-engine-bench-") as directory:
        report(Orm(Path(directory)))


if __name__ == "__main__":
    main()
