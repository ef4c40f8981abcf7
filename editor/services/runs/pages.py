"""What the run pages show (spec 06, *Runs*), composed from :mod:`editor.services.runs`.

* :func:`run_page`: a run's status (with a link to the inbox card of each item it waits for,
  and the node it failed at), its canvas (every node it reached marked by its state, at every
  level, and the edges it walked), the newest page of its timeline
  (:mod:`editor.services.runs.timeline`), the run it was forked from and its forks; ``None``
  when the page already shows its latest event (the live answer is then empty);
* :func:`suggested_input`: what **Start run** offers as the input of a graph.

The page costs the same few queries whatever the log's length: the run, its document and
starter, the events that mark the canvas (node, scope and case only, read in the database),
one page of the timeline, and its forks. A node's detail is :mod:`editor.services.runs.nodes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

import orjson
from django.db.models.fields.json import KT

from editor.engine import TERMINAL, Levels, RunState, RunTrace, level_of, levels, run_trace
from editor.engine.ports import Envelope
from editor.engine.status import instant
from editor.graph import Graph
from editor.graph.dot import RunMarks
from editor.graph.jsonio import pretty_json
from editor.graph.model import (
    FoldNode,
    MapNode,
    NodeBody,
    SubgraphBody,
    SubgraphPath,
    input_schema_of,
)
from editor.models import Run, RunEvent
from editor.services import runs
from editor.services.documents import canvas, graphs
from editor.services.links import card_id
from editor.services.runs.agent_runs import agent_names
from editor.services.runs.forks import fork_children
from editor.services.runs.timeline import TimelinePage, newest, since

__all__ = [
    "TRACE_KINDS",
    "RunPage",
    "WaitingItem",
    "is_live",
    "run_graph",
    "run_marks",
    "run_page",
    "run_trace_of",
    "suggested_input",
]

#: The events that mark the canvas.
TRACE_KINDS = (
    "NodeEntered",
    "NodeExited",
    "NodeSkipped",
    "BranchTaken",
    "Suspended",
    "Resumed",
    "BudgetExceeded",
    "BudgetRaised",
    "ReconciliationNeeded",
    "Reconciled",
    "RunFailed",
)

_WAITING_WORDS = {
    "gate": "a decision at the gate",
    "budget": "a raised budget at",
    "reconciliation": "the outcome of a cut-off write at",
}


@dataclass(frozen=True, slots=True)
class WaitingItem:
    """One item a parked run waits for: with the inbox card that resolves it, or for a
    signal wait (a system owes the input, spec 08), nobody's card: its reason and schema."""

    kind: str
    node: str
    name: str
    #: Where inside maps and folds (``m[2]``), empty at the top.
    where: str
    #: The inbox card; ``None`` for a signal wait.
    card_url: str | None
    #: Where the wait was recorded in the log (what the run page's resume form names).
    seq: int | None = None
    signal: bool = False
    reason: str = ""
    #: The recorded ``input_schema``, indented JSON (signal waits).
    schema_json: str = ""
    #: When the wait was recorded (signal waits).
    since: datetime | None = None

    @property
    def words(self) -> str:
        return _WAITING_WORDS.get(self.kind, "a person at")


@dataclass(frozen=True, slots=True)
class RunPage:
    run: runs.RunInfo
    timeline: TimelinePage
    canvas: canvas.DrawnCanvas
    trace: RunTrace
    #: The run can still change (the page listens for it); a parked run rests meanwhile.
    live: bool
    waiting: list[WaitingItem]
    #: The node the run failed at (its name), and the node at the top to retry from.
    failed_name: str | None = None
    failed_url: str | None = None
    retry_node: str | None = None
    document_title: str | None = None
    #: The run's document was deleted (kept, for its frozen versions, without its editor).
    document_deleted: bool = False
    started_by: str | None = None
    #: A completed run's output, indented JSON.
    output_json: str | None = None
    #: The runs forked from this one.
    forks: tuple[runs.RunInfo, ...] = ()
    #: A fork may start from this run now (it rests, and waits for no reconciliation).
    forkable: bool = False
    #: For a live update: the number of events the page shows afterwards.
    seen: int = 0
    #: An agent run's agent name, when the agent has one.
    agent_name: str | None = None

    @property
    def waiting_people(self) -> list[WaitingItem]:
        """The items a person resolves on an inbox card."""
        return [item for item in self.waiting if not item.signal]

    @property
    def waiting_systems(self) -> list[WaitingItem]:
        """The signal waits: nobody's card; operators may answer them on the run page."""
        return [item for item in self.waiting if item.signal]


def is_live(state: str) -> bool:
    """Whether a run in ``state`` can still change (the page keeps listening to it)."""
    return state not in {terminal.value for terminal in TERMINAL}


def is_forkable(state: str) -> bool:
    """Whether a fork may start from a run in ``state``: it rests, and no cut-off write of it
    waits to be settled (spec 05's refusals)."""
    return state not in (
        RunState.QUEUED.value,
        RunState.RUNNING.value,
        RunState.NEEDS_RECONCILIATION.value,
    )


@lru_cache(maxsize=64)
def run_graph(graph_hash: str) -> tuple[Graph, Levels]:
    """A frozen graph and its levels, read once per process (frozen graphs never change)."""
    graph = graphs.load_graph(graph_hash)
    return graph, levels(graph)


def _trace_events(run_id: str, count: int) -> list[Envelope]:
    """The events that mark the canvas, with only the fields the trace reads (picked out by
    the database, so a node's output is never read for it)."""
    rows = (
        RunEvent.objects.filter(run_id=run_id, kind__in=TRACE_KINDS, seq__lt=count)
        .order_by("seq")
        # As text: the scope is read here, with none of a JSON field's per-row conversion.
        .values_list("seq", "kind", KT("payload__node"), KT("payload__scope"), KT("payload__case"))
    )
    events = []
    for seq, kind, node, scope, case in rows:
        payload: dict[str, Any] = {}
        if node is not None:
            payload["node"] = node
        if scope:
            payload["scope"] = orjson.loads(scope)
        if case is not None:
            payload["case"] = case
        events.append(Envelope(run_id, seq, "", kind, payload))
    return events


def run_trace_of(info: runs.RunInfo) -> RunTrace:
    """The run's trace as its row counts its log (read-only: it may be shared)."""
    return _trace(info.run, info.event_count, info.state, info.graph_hash)


@lru_cache(maxsize=256)
def _trace(run_id: str, count: int, state: str, graph_hash: str) -> RunTrace:
    # A log only grows: the same run with as many events and the same state has the same
    # trace, so a run that rests is traced once per process, whoever opens its page.
    _graph, graph_levels = run_graph(graph_hash)
    return run_trace(graph_levels, _trace_events(run_id, count), state)


def canvas_link(level: SubgraphPath, node: str) -> str:
    """A node's detail, relative to the run's page (so the drawing is the same for every run
    in the same state, and its layout is cached once)."""
    return "node/?" + urlencode([*(("in", owner) for owner in level), ("node", node)])


def run_marks(trace: RunTrace) -> RunMarks:
    """What the canvas draws of a run: each reached node's state and note (``×3``, the case a
    branch took), and the edges walked (the run page's canvas, and the editor's results)."""
    notes = {}
    for key, mark in trace.marks.items():
        parts = []
        if mark.instances > 1:
            parts.append(f"×{mark.instances}")
        if len(mark.cases) == 1:
            parts.append(f"case {mark.cases[0]}")
        elif mark.cases:
            parts.append(f"{len(mark.cases)} cases")
        if parts:
            notes[key] = " · ".join(parts)
    return RunMarks(
        states={key: mark.state for key, mark in trace.marks.items()},
        notes=notes,
        walked=frozenset(trace.walked),
    )


def _display(graph_levels: Levels, scope: Any, node: str) -> tuple[str, str]:
    """A node's name (or id) and where it sits, from an item's ``scope``."""
    pairs = [(str(owner), int(index)) for owner, index in scope or ()]
    level = level_of(graph_levels, pairs)
    found = graph_levels.node(level, node) if level is not None else None
    name = found.name if found is not None and found.name else node
    where = " › ".join(f"{owner}[{index}]" for owner, index in pairs)
    return name, where


def _waiting(info: runs.RunInfo, graph_levels: Levels) -> list[WaitingItem]:
    items = []
    for item in info.pending:
        node = str(item.get("node"))
        name, where = _display(graph_levels, item.get("scope"), node)
        seq = item.get("seq") if isinstance(item.get("seq"), int) else None
        kind = str(item.get("kind"))
        if item.get("wait") == "signal":
            reason, schema = str(item.get("reason") or ""), pretty_json(item.get("input_schema"))
            since = instant(item.get("at"))
            items.append(
                WaitingItem(kind, node, name, where, None, seq, True, reason, schema, since)
            )
            continue
        card = f"/inbox/?{urlencode({'run': info.run})}#{card_id(info.run, item.get('seq'))}"
        items.append(WaitingItem(kind, node, name, where, card, seq))
    return items


def run_page(run_id: str, *, seen: int | None = None) -> RunPage | None:
    """Everything the run page shows; ``None`` when the run is live and still has the
    ``seen`` events the page shows (nothing to redraw). Raises ``UnknownRun``."""
    info = runs.get_run(run_id)
    live = is_live(info.state)
    if seen is not None and live and info.event_count == seen:
        return None
    count = info.event_count
    timeline = newest(info.run, count) if seen is None else since(info.run, count, seen)
    graph, graph_levels = run_graph(info.graph_hash)
    trace = run_trace_of(info)
    drawn = canvas.draw(graph, marks=run_marks(trace), node_url=canvas_link)
    extra = _extras([info.run]).get(info.run, {})
    output = None
    if "output" in info.status:
        output = pretty_json(info.status["output"])
    failed_name = failed_url = retry = None
    if trace.failed_at is not None:
        scope, node = trace.failed_at
        failed_name, _where = _display(graph_levels, [list(pair) for pair in scope], node)
        if trace.failed is not None:
            failed_url = "node/?" + urlencode(
                [*(("in", owner) for owner in trace.failed[0]), ("node", node)]
            )
        top = scope[0][0] if scope else node
        retry = top if top in trace.entered else None
    return RunPage(
        info,
        timeline,
        drawn,
        trace,
        live,
        _waiting(info, graph_levels),
        failed_name=failed_name,
        failed_url=failed_url,
        retry_node=retry,
        document_title=extra.get("document__title"),
        document_deleted=extra.get("document__deleted_at") is not None,
        started_by=extra.get("created_by__username"),
        output_json=output,
        forks=tuple(fork_children(info.run)) if seen is None else (),
        forkable=is_forkable(info.state),
        seen=info.event_count,
        agent_name=(
            agent_names({info.agent_def_hash}).get(info.agent_def_hash)
            if info.agent_def_hash and seen is None
            else None
        ),
    )


def _extras(run_ids: list[str]) -> dict[str, Mapping[str, Any]]:
    """Per run id: its document's title and its starter's username (what RunInfo lacks)."""
    rows = Run.objects.filter(id__in=run_ids).values(
        "id", "document__title", "document__deleted_at", "created_by__username"
    )
    return {str(row["id"]): row for row in rows}


def _entry_schema(graph: Graph) -> Any:
    """The ``input_schema`` of what receives the run input: the one entry node, or, for a
    fold (whose first pass gets the fold's input), the entry of its body."""
    bodies = {
        node.body.node
        for node in graph.nodes
        if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
    }
    inbound = {edge.target for edge in graph.edges}
    entries = [node for node in graph.nodes if node.id not in inbound and node.id not in bodies]
    if len(entries) != 1:
        return None
    entry = entries[0]
    if isinstance(entry, FoldNode):
        if isinstance(entry.body, SubgraphBody):
            return _entry_schema(entry.body.graph)
        body = next((node for node in graph.nodes if node.id == entry.body.node), None)
        return input_schema_of(body) if body is not None else None
    return input_schema_of(entry)


def suggested_input(graph: Graph) -> str:
    """The JSON text **Start run** is filled with: the entry node's ``input_schema``
    ``default``, or an object of its properties' defaults, else ``null``."""
    schema = _entry_schema(graph)
    value: Any = None
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if "default" in schema:
            value = schema["default"]
        elif isinstance(properties, dict):
            defaults = {
                key: spec["default"]
                for key, spec in properties.items()
                if isinstance(spec, dict) and "default" in spec
            }
            value = defaults or None
    return pretty_json(value)
