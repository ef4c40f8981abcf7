"""A large completed run for the attacker to read: a chain of echo calls of a big text.

Driven in memory by the engine, then stored as the ORM store keeps a run (``stored_run`` of
the run-page benchmark), so building it costs seconds of the set-up, not minutes of a worker.
Runs inside the set-up child process, with Django set up.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

#: Bytes of text in the run's input: each echo node records it about 3 times.
TEXT_BYTES = 256 * 1024


def chain(length: int) -> dict[str, Any]:
    """Echo → echo → … ``length`` nodes, each passing on the whole value it was given."""
    ids = [f"echo-{index}" for index in range(length)]
    return {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": id_, "tool": "echo"}} for id_ in ids],
        "edges": [{"from": a, "to": b} for a, b in itertools.pairwise(ids)],
    }


def build_large_run(owner: Any, megabytes: float) -> dict[str, Any]:
    """A completed run whose events hold about ``megabytes`` MB; its id, events and bytes."""
    from run_page import stored_run  # tests/benchmarks, on sys.path in the set-up child

    from editor.engine import Engine, InMemoryStore, run_status
    from editor.services.documents import graphs
    from editor.services.installation import installation, limits

    # Each node records the text about 3.25 times (its call, its input and output, its exit).
    length = max(2, round(megabytes * 1_000_000 / (3.25 * TEXT_BYTES)))
    stored = graphs.store_graph(owner, json.dumps(chain(length)))
    data = graphs.export_graph(stored.graph)
    text = ("lorem ipsum " * (TEXT_BYTES // 12 + 1))[:TEXT_BYTES]
    run_input = {"text": text}
    store = InMemoryStore()
    store.graphs[stored.graph] = data
    run_id = store.start(stored.graph, run_input)
    engine = Engine(store, installation(), limits=limits())
    state = engine.drive(run_id)
    events = list(store.events[run_id])
    if state != "completed" or run_status(events)["state"] != "completed":
        raise RuntimeError(f"the large run ended {state}, not completed: {run_status(events)}")
    size = sum(len(json.dumps(event.payload)) for event in events)
    return {
        "run": stored_run(stored.graph, events, owner, run_input),
        "events": len(events),
        "bytes": size,
    }


def build_pruned_run(owner: Any) -> str:
    """A small completed run whose log lost every event after its first, its count unchanged:
    what a prune interrupted between two batches leaves (its stream must end, not wait for
    the events that are gone)."""
    from editor.models import RunEvent

    run = str(build_large_run(owner, 0.5)["run"])
    RunEvent.objects.filter(run_id=run, seq__gte=1).delete()
    return run
