"""A run whose log is large, for the attacks on reads (cases 60–64): a real run of one ``echo``
node, then, written straight into the store as a long agent's log would be, ``calls`` more
tool calls of that node, each asking and answering with a value of about ``value_kib`` KiB
(under the event cap), before the node exits and the run completes."""

from __future__ import annotations

from typing import Any

#: The graph whose run is made large: one echo node.
GRAPH = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": "t", "tool": "echo"}}],
    "edges": [],
}

_SEED = """
from django.db import transaction
from editor.models import Run, RunEvent
run = Run.objects.get(id={run!r})
log = list(RunEvent.objects.filter(run=run).order_by("seq"))
asked = next(row for row in log if row.kind == "ToolCallRequested")
answered = next(row for row in log if row.kind == "ToolCallCompleted")
cut = log.index(answered) + 1
value = ["x" * 100 + str(n) for n in range({value_kib} * 1024 // 110)]
extra = []
for call in range(2, {calls} + 2):
    extra.append(RunEvent(run=run, seq=0, recorded_at=asked.recorded_at, kind=asked.kind,
                          payload={{**asked.payload, "call": call, "input": value}}))
    extra.append(RunEvent(run=run, seq=0, recorded_at=answered.recorded_at,
                          kind=answered.kind,
                          payload={{**answered.payload, "call": call, "output": value}}))
rows = log[:cut] + extra + log[cut:]
for seq, row in enumerate(rows):
    row.pk = None
    row.seq = seq
with transaction.atomic():
    RunEvent.objects.filter(run=run).delete()
    for start in range(0, len(rows), 20):
        RunEvent.objects.bulk_create(rows[start : start + 20])
    Run.objects.filter(id=run.id).update(event_count=len(rows))
print("EVENTS", len(rows))
"""


def seed_steps(calls: int = 60, value_kib: int = 800) -> list[dict[str, Any]]:
    """Steps that leave ``{{run}}`` a completed run of ``2 * calls`` large events (about
    ``2 * calls * value_kib`` KiB) and saves its event count as ``{{events}}``."""
    return [
        {"do": "store_graph", "graph": GRAPH},
        {"do": "start_run", "input": {"hello": "world"}},
        {"do": "wait_run", "expect": {"status": {"state": "completed"}}},
        {"do": "python", "call": lambda corpus: seed(corpus, calls, value_kib)},
    ]


def seed(corpus: Any, calls: int, value_kib: int) -> None:
    code = _SEED.format(run=corpus.names["run"], calls=calls, value_kib=value_kib)
    corpus.names["events"] = int(corpus.shell(code).split("EVENTS ")[-1].strip())
