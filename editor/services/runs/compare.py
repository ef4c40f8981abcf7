"""Two runs of one document side by side, node by node (``GET /v1/runs/{a}/compare/{b}``).

Test runs or not, of one version or another: each top-level node either run reached, in the
order first reached, with each side's state, what it received and gave (and a JSON diff of
both), how long it took and the tokens its model calls reported. Read from the two logs alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.engine.routing import Routing
from editor.graph import MISSING
from editor.models import Run, RunEvent
from editor.services.errors import NotComparable
from editor.services.runs.pages import run_graph
from editor.services.runs.rows import RunInfo, info, run_row

__all__ = ["MAX_DIFFERENCES", "Comparison", "NodeSide", "compare_runs", "json_diff"]

#: Differences listed per value; past it the diff says it was cut.
MAX_DIFFERENCES = 200
#: What a comparison reads of a log: a node's moves, its model usage; never a call's input
#: or output (a tool call's events are half a log, and its values the largest).
COMPARED_KINDS = (
    "NodeEntered",
    "NodeExited",
    "NodeSkipped",
    "BranchTaken",
    "RunFailed",
    "Suspended",
    "BudgetExceeded",
    "ReconciliationNeeded",
    "SleepStarted",
    "Resumed",
    "BudgetRaised",
    "Reconciled",
    "SleepCompleted",
    "ModelCallCompleted",
)


@dataclass(frozen=True, slots=True)
class NodeSide:
    """One node in one run: ``state`` is ``unreached``, ``entered``, ``exited``, ``pinned``,
    ``skipped``, ``parked`` or ``failed``."""

    state: str
    input: Any = None
    output: Any = None
    duration_ms: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class NodeComparison:
    node: str
    a: NodeSide
    b: NodeSide
    same: bool
    input_diff: list[dict[str, Any]]
    output_diff: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Comparison:
    a: RunInfo
    b: RunInfo
    nodes: list[NodeComparison]


def compare_runs(first: str, second: str, *, older_first: bool = False) -> Comparison:
    """Compare two runs of the same document (:class:`NotComparable` otherwise); with
    ``older_first``, the one started first is ``a`` whichever was named first (the page reads
    older → newer; the API keeps the order it was asked in)."""
    row_a, row_b = run_row(first), run_row(second)
    if row_a.document_id is None or row_a.document_id != row_b.document_id:
        raise NotComparable("only two runs of the same document can be compared")
    # When each started: the time its first event was recorded (one layout, sorts as text).
    if older_first and (row_b.first_recorded_at, str(row_b.id)) < (
        row_a.first_recorded_at,
        str(row_a.id),
    ):
        row_a, row_b = row_b, row_a
    sides_a, order_a = _sides(row_a.graph_id, row_a.input, _log(row_a))
    sides_b, order_b = _sides(row_b.graph_id, row_b.input, _log(row_b))
    order = [*order_a, *(node for node in order_b if node not in sides_a)]
    unreached = NodeSide("unreached")
    nodes = []
    for node in order:
        a, b = sides_a.get(node, unreached), sides_b.get(node, unreached)
        input_diff = json_diff(a.input, b.input)
        output_diff = json_diff(a.output, b.output)
        nodes.append(
            NodeComparison(
                node=node,
                a=a,
                b=b,
                same=a.state == b.state and not input_diff and not output_diff,
                input_diff=input_diff,
                output_diff=output_diff,
            )
        )
    return Comparison(info(row_a), info(row_b), nodes)


def _log(run: Run) -> list[Envelope]:
    """The events of ``run`` a comparison reads (:data:`COMPARED_KINDS`), as plain rows."""
    rows = (
        RunEvent.objects.filter(run=run, kind__in=COMPARED_KINDS)
        .order_by("seq")
        .values_list("seq", "recorded_at", "kind", "payload")
    )
    key = str(run.id)
    return [Envelope(key, seq, at, kind, payload) for seq, at, kind, payload in rows]


def _sides(
    graph_hash: str, run_input: Any, log: list[Envelope]
) -> tuple[dict[str, NodeSide], list[str]]:
    _graph, graph_levels = run_graph(graph_hash)
    routing = Routing(graph_levels, run_input, log)
    states: dict[str, str] = {}
    entered: dict[str, str] = {}
    exited: dict[str, str] = {}
    outputs: dict[str, Any] = {}
    tokens: dict[str, list[int]] = {}
    order: list[str] = []
    for envelope in log:
        payload = envelope.payload
        if payload.get("scope") or "node" not in payload:
            continue
        node, kind = str(payload["node"]), envelope.kind
        if node not in states:
            order.append(node)
        if kind == "NodeEntered":
            states[node] = "entered"
            entered[node] = envelope.recorded_at
        elif kind == "NodeExited":
            states[node] = "pinned" if payload.get("pinned") else "exited"
            exited[node] = envelope.recorded_at
            outputs[node] = payload.get("output")
        elif kind == "NodeSkipped":
            states[node] = "skipped"
        elif kind == "RunFailed":
            states[node] = "failed"
        elif kind in {"Suspended", "BudgetExceeded", "ReconciliationNeeded", "SleepStarted"}:
            states[node] = "parked"
        elif kind in {"Resumed", "BudgetRaised", "Reconciled", "SleepCompleted"}:
            states[node] = "entered"
        elif kind == "ModelCallCompleted":
            found = payload.get("usage")
            usage: dict[str, Any] = found if isinstance(found, dict) else {}
            counts = tokens.setdefault(node, [0, 0])
            counts[0] += _count(usage.get("input_tokens"))
            counts[1] += _count(usage.get("output_tokens"))
    sides = {}
    for node in order:
        routed = routing.routed((), node)
        start, end = event_time(entered.get(node)), event_time(exited.get(node))
        duration = None if start is None or end is None else (end - start).total_seconds()
        used = tokens.get(node, [0, 0])
        sides[node] = NodeSide(
            state=states.get(node, "entered"),
            input=None if routed is MISSING else routed,
            output=outputs.get(node),
            duration_ms=None if duration is None else round(duration * 1000),
            input_tokens=used[0],
            output_tokens=used[1],
        )
    return sides, order


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def json_diff(a: Any, b: Any, path: str = "$") -> list[dict[str, Any]]:
    """Where two JSON values differ: ``[{"path", "change": "added" | "removed" | "changed",
    "a"?, "b"?}]``, objects by key and arrays by index, at most :data:`MAX_DIFFERENCES`
    (then a last ``{"path", "change": "cut"}``)."""
    found: list[dict[str, Any]] = []
    _diff(a, b, path, found)
    if len(found) > MAX_DIFFERENCES:
        found = [*found[:MAX_DIFFERENCES], {"path": path, "change": "cut"}]
    return found


def _diff(a: Any, b: Any, path: str, found: list[dict[str, Any]]) -> None:
    if len(found) > MAX_DIFFERENCES:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(key for key in b if key not in a)]:
            where = f"{path}.{key}"
            if key not in b:
                found.append({"path": where, "change": "removed", "a": a[key]})
            elif key not in a:
                found.append({"path": where, "change": "added", "b": b[key]})
            else:
                _diff(a[key], b[key], where, found)
        return
    if isinstance(a, list) and isinstance(b, list):
        for index in range(max(len(a), len(b))):
            where = f"{path}[{index}]"
            if index >= len(b):
                found.append({"path": where, "change": "removed", "a": a[index]})
            elif index >= len(a):
                found.append({"path": where, "change": "added", "b": b[index]})
            else:
                _diff(a[index], b[index], where, found)
        return
    # JSON equality: 1 and 1.0 are one number, true is not 1.
    if type(a) is bool or type(b) is bool:
        equal = a is b
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        equal = a == b
    else:
        equal = type(a) is type(b) and a == b
    if not equal:
        found.append({"path": path, "change": "changed", "a": a, "b": b})
