"""An in-memory :class:`~editor.engine.ports.RunStore`, for tests and benchmarks.

It keeps the same promises as the ORM store: appends are atomic and strict, a second writer
at the same ``seq`` loses (``RunLost``), nothing follows a terminal event, and an append that
would move the run along a transition the state table forbids is refused
(``TransitionRefused``), with nothing written.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from editor.engine.errors import RunLost
from editor.engine.events import TERMINAL_KINDS, check_append
from editor.engine.forks import fork_events, plan_fork
from editor.engine.ports import CallClaim, Envelope, RunRecord, SystemClock
from editor.engine.records import start_event
from editor.engine.status import run_status
from editor.engine.transitions import check_append_states
from editor.graph import Graph, canonical_graph, graph_hash, hash_bytes

__all__ = ["InMemoryStore"]


class InMemoryStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.graphs: dict[str, bytes] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.events: dict[str, list[Envelope]] = {}
        self._claims: dict[tuple[str, str], CallClaim] = {}
        self._claims_lock = threading.Lock()

    # --- set-up helpers (what the services do on the Django side) -------------------

    def add_graph(self, graph: Graph | bytes) -> str:
        data = graph if isinstance(graph, bytes) else canonical_graph(graph)
        digest = graph_hash(graph) if isinstance(graph, Graph) else hash_bytes(data)
        self.graphs[digest] = data
        return digest

    def start(
        self,
        graph: Graph | str,
        input: Any = None,
        labels: dict[str, str] | None = None,
        *,
        now: datetime | None = None,
    ) -> str:
        """Store a graph (or use a stored hash) and a queued run of it; return the run id."""
        digest = graph if isinstance(graph, str) else self.add_graph(graph)
        run_id = str(uuid.uuid4())
        first = start_event(run_id, digest, input, labels, now or SystemClock().now())
        with self._lock:
            self.runs[run_id] = {"graph_hash": digest, "input": input, "labels": labels or {}}
            self.events[run_id] = [first]
            self.runs[run_id]["status"] = run_status([first])
        return run_id

    def fork(self, origin: str, from_node: str, acknowledged: Sequence[int] = ()) -> str:
        """Store a fork of ``origin`` from ``from_node`` (what the services do); its id."""
        record = self.load_run(origin)
        plan = plan_fork(record, from_node, acknowledged)
        run_id = str(uuid.uuid4())
        events, status = fork_events(plan, record, run_id)
        with self._lock:
            self.runs[run_id] = {
                "graph_hash": record.graph_hash,
                "input": record.input,
                "labels": dict(record.labels),
                "status": {"state": "queued"},
            }
            self.events[run_id] = []
        self.record(run_id, events, status)
        return run_id

    def status(self, run_id: str) -> dict[str, Any]:
        status: dict[str, Any] = self.runs[run_id]["status"]
        return status

    def kinds(self, run_id: str) -> list[str]:
        return [envelope.kind for envelope in self.events[run_id]]

    # --- the port ---------------------------------------------------------------------

    def load_run(self, run_id: str) -> RunRecord:
        with self._lock:
            run = self.runs[run_id]
            return RunRecord(
                run_id, run["graph_hash"], run["input"], tuple(self.events[run_id]), run["labels"]
            )

    def load_graph(self, graph_hash: str) -> bytes | None:
        return self.graphs.get(graph_hash)

    def append(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        self.record(run_id, events, status)

    def record(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        """Append for anyone (a resume, an abandon): the ``seq`` decides who wins."""
        with self._lock:
            log = self.events[run_id]
            if events and events[0].seq != len(log):
                raise RunLost(f"event {events[0].seq} was taken: the log has {len(log)} events")
            # As the ORM store: the strict checks on the new events, then the run's end, then
            # the state table.
            check_append(len(log), None, events)
            if log and log[-1].kind in TERMINAL_KINDS:
                raise RunLost(f"the run ended with {log[-1].kind}; nothing can follow it")
            current = self.runs[run_id]["status"]["state"]
            check_append_states(current, [envelope.kind for envelope in events], status["state"])
            log.extend(events)
            self.runs[run_id]["status"] = status

    def claim_call(self, tool: str, key: str, run_id: str, input: Any) -> CallClaim:
        with self._claims_lock:
            return self._claims.setdefault((tool, key), CallClaim(run_id, input))

    def settle_call(self, tool: str, key: str, run_id: str, output: Any) -> None:
        with self._claims_lock:
            held = self._claims.get((tool, key))
            if held is not None and held.run_id == run_id:
                self._claims[(tool, key)] = CallClaim(run_id, held.input, True, output)

    def release_thread(self) -> None:
        return None
