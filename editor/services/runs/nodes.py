"""A node's detail on the run page (spec 06, *Runs*): what it received and gave, when, its
tool and model calls, what it waited for, and the error it failed with; once for a node at the
top, once per item or pass for a node inside a map's or fold's body.

The detail is read in one pass over the log, a slice at a time
(:func:`editor.services.runs.log_reads.log_envelopes`): the node's own events are kept with each
value they carry already written out and cut to :data:`SHOWN_VALUE_CHARS` (saying so, and which
event holds the whole of it), the routing keeps the outputs nodes exited with, and the trace is
the run page's (payloads reduced to ``node``, ``scope`` and ``case``). Inputs are found the way
the walk routed them (:mod:`editor.engine.routing`). A node run for many items shows
:data:`SHOWN_INSTANCES` of them, those that failed, wait or run first; the totals count them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from editor.engine import RunTrace, fork_origin, level_of
from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.engine.routing import Routing
from editor.engine.status import PARKING_KINDS, RESOLUTION_KINDS, scope_key
from editor.graph import MISSING
from editor.graph.jsonio import pretty_json
from editor.graph.model import Node, SubgraphPath
from editor.services.errors import InvalidRequest
from editor.services.runs.log_reads import log_envelopes
from editor.services.runs.pages import is_forkable, run_graph, run_trace_of
from editor.services.runs.rows import RunInfo, info, run_row
from editor.services.runs.timeline import node_url, scope_text

__all__ = [
    "SHOWN_INSTANCES",
    "SHOWN_VALUE_CHARS",
    "CallView",
    "InstanceView",
    "NodeDetail",
    "node_detail",
]

#: Instances of a node shown in full (the rest are counted).
SHOWN_INSTANCES = 20
#: A value (an input, an output, a reply) is shown up to this many characters of indented JSON.
SHOWN_VALUE_CHARS = 16 * 1024
#: The payload fields that carry a node's values.
VALUE_FIELDS = ("input", "output", "reply")
#: What routing reads of the log.
ROUTING_KINDS = frozenset({"NodeExited", "NodeSkipped", "BranchTaken"})


class Shown(str):
    """A value already written out for the page (and cut when it was long)."""


def shown_text(value: Any, seq: int | None = None, limit: int | None = SHOWN_VALUE_CHARS) -> str:
    """``value`` as indented JSON, cut to ``limit`` characters with a line saying so (``None``:
    whole)."""
    if isinstance(value, Shown):
        return str(value)
    text = pretty_json(value)
    if limit is None or len(text) <= limit:
        return text
    where = f" (the whole of it is event #{seq}'s payload)" if seq is not None else ""
    return f"{text[:limit]}\n… cut: {len(text):,} characters in all{where}"


def _shrunk(envelope: Envelope, limit: int | None) -> Envelope:
    """The envelope with each value it carries written out (and cut past ``limit``)."""
    payload = envelope.payload
    if not any(name in payload for name in VALUE_FIELDS):
        return envelope
    kept = {
        name: Shown(shown_text(value, envelope.seq, limit)) if name in VALUE_FIELDS else value
        for name, value in payload.items()
    }
    return replace(envelope, payload=kept)


_ORDER = {"failed": 0, "waiting": 1, "running": 2, "stopped": 3, "done": 4, "skipped": 5}

Scope = tuple[tuple[str, int], ...]


def duration_text(start: str | None, end: str | None) -> str | None:
    """How long between two ``recorded_at``: ``0.042 s``, ``12.5 s``, ``3 min 4 s``."""
    began, ended = event_time(start), event_time(end)
    if began is None or ended is None:
        return None
    seconds = max(0.0, (ended - began).total_seconds())
    if seconds < 1:
        return f"{seconds:.3f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@dataclass(slots=True)
class CallView:
    """One tool or model call of a node."""

    kind: str  # "tool" or "model"
    number: int
    name: str
    effect: str | None = None
    #: How many times it was asked for (a write run again after a reconciliation: twice).
    attempts: int = 0
    input_text: str | None = None
    output_text: str | None = None
    #: ``completed``, ``reconciled``, ``in flight``, ``cut off``, ``failed``, ``stopped``.
    outcome: str = "in flight"
    requested_at: str | None = None
    completed_at: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def took(self) -> str | None:
        return duration_text(self.requested_at, self.completed_at)


@dataclass(slots=True)
class InstanceView:
    """One instance of the node: at the top, or one map item or fold pass."""

    scope: Scope
    state: str
    input_text: str | None = None
    output_text: str | None = None
    entered_at: str | None = None
    left_at: str | None = None
    calls: list[CallView] = field(default_factory=list)
    #: What it waited for or was given by a person (a gate's prompt and decision, a budget).
    waits: list[str] = field(default_factory=list)
    error: str | None = None
    #: Recorded by the run this one was forked from, and replayed here.
    replayed: bool = False

    @property
    def where(self) -> str:
        return scope_text([list(pair) for pair in self.scope])

    @property
    def took(self) -> str | None:
        return duration_text(self.entered_at, self.left_at)

    @property
    def entered_moment(self) -> datetime | None:
        return event_time(self.entered_at)


@dataclass(slots=True)
class NodeDetail:
    run: RunInfo
    level: SubgraphPath
    node: Node
    state: str | None
    instances: list[InstanceView]
    instance_count: int
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: A fork may start here: a node entered at the top of a run that rests.
    forkable: bool = False
    #: For a fork, the origin's detail of this node (where it was recorded before).
    origin_url: str | None = None

    @property
    def name(self) -> str:
        return self.node.name or self.node.id

    @property
    def hidden(self) -> int:
        return self.instance_count - len(self.instances)


def _calls(events: Sequence[Envelope]) -> list[CallView]:
    calls: dict[tuple[str, int], CallView] = {}
    for envelope in events:
        kind, payload = envelope.kind, envelope.payload
        number = payload.get("call")
        if not isinstance(number, int):
            continue
        if kind in ("ToolCallRequested", "ToolCallCompleted", "ReconciliationNeeded", "Reconciled"):
            call = calls.setdefault(("tool", number), CallView("tool", number, ""))
        elif kind in ("ModelCallRequested", "ModelCallCompleted"):
            call = calls.setdefault(("model", number), CallView("model", number, ""))
        else:
            continue
        if kind == "ToolCallRequested":
            call.name = str(payload.get("tool", ""))
            call.effect = payload.get("effect")
            call.attempts += 1
            call.input_text = shown_text(payload.get("input"))
            call.requested_at = envelope.recorded_at
            call.outcome = "in flight"
        elif kind == "ModelCallRequested":
            call.name = str(payload.get("model", ""))
            call.attempts += 1
            call.requested_at = envelope.recorded_at
        elif kind in ("ToolCallCompleted", "ModelCallCompleted"):
            call.outcome = "completed"
            call.completed_at = envelope.recorded_at
            if kind == "ToolCallCompleted":
                call.output_text = shown_text(payload.get("output"))
            else:
                call.output_text = shown_text(payload.get("reply"))
                usage = found if isinstance(found := payload.get("usage"), dict) else {}
                call.input_tokens = _count(usage.get("input_tokens"))
                call.output_tokens = _count(usage.get("output_tokens"))
        elif kind == "ReconciliationNeeded":
            call.outcome = "cut off"
        elif kind == "Reconciled" and not payload.get("retry"):
            call.outcome = "reconciled"
            call.completed_at = envelope.recorded_at
            call.output_text = shown_text(payload.get("output"))
    return [calls[key] for key in sorted(calls)]


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _waits(events: Sequence[Envelope]) -> list[str]:
    notes = []
    for envelope in events:
        payload = envelope.payload
        if envelope.kind == "Suspended":
            notes.append(f"Waited for a decision: {payload.get('reason')}")
        elif envelope.kind == "ApprovalVoted":
            comment = payload.get("comment")
            said = f" (“{comment}”)" if comment else ""
            notes.append(
                f"Approved by {payload.get('by')}{said}, of {payload.get('quorum')} needed"
            )
        elif envelope.kind == "Resumed":
            comment = payload.get("comment")
            said = f" (“{comment}”)" if comment else ""
            votes = payload.get("votes")
            votes = votes if isinstance(votes, list) else []
            after = ", ".join(str(vote.get("by")) for vote in votes if isinstance(vote, dict))
            notes.append(
                f"Decided by {payload.get('by')}{said}" + (f", after {after}" if after else "")
            )
        elif envelope.kind == "BudgetExceeded":
            budget = payload.get("budget") or {}
            notes.append(
                f"Its {budget.get('kind')} budget of {budget.get('limit')} was crossed "
                f"({payload.get('observed')} observed)"
            )
        elif envelope.kind == "BudgetRaised":
            limit = f"{payload.get('kind')} limit to {payload.get('limit')}"
            notes.append(f"{payload.get('by')} raised the {limit}")
        elif envelope.kind == "ReconciliationNeeded":
            notes.append(f"The write `{payload.get('tool')}` was cut off: its outcome is unknown")
        elif envelope.kind == "Reconciled":
            what = "ran it again" if payload.get("retry") else "recorded its output"
            notes.append(f"{payload.get('by')} {what}")
    return notes


def node_detail(
    run_id: str,
    node_id: str,
    level: Sequence[str] = (),
    *,
    value_chars: int | None = SHOWN_VALUE_CHARS,
) -> NodeDetail:
    """The detail of node ``node_id`` (inside the subgraph bodies ``level`` names) in a run,
    each value cut to ``value_chars`` (``None``: whole, as the editor's node panel shows it).
    Raises ``UnknownRun``, and ``InvalidRequest`` when the run's graph has no such node."""
    row = run_row(run_id)
    shown = info(row)
    _graph, graph_levels = run_graph(shown.graph_hash)
    where = tuple(level)
    node = graph_levels.node(where, node_id)
    if node is None:
        raise InvalidRequest(f"the graph of this run has no node `{node_id}` there", "node")
    trace: RunTrace = run_trace_of(shown)
    mark = trace.marks.get((where, node_id))
    by_scope: dict[Scope, list[Envelope]] = {}
    failure: dict[str, Any] | None = None
    first: Envelope | None = None
    last: Envelope | None = None
    routed: list[Envelope] = []
    for envelope in log_envelopes(str(row.id)):  # one pass, a slice at a time
        payload = envelope.payload
        first = first or envelope
        last = envelope
        if envelope.kind == "RunFailed":
            failure = payload
        if envelope.kind in ROUTING_KINDS:
            routed.append(envelope)
        if payload.get("node") != node_id:
            continue
        scope = scope_key(payload.get("scope"))
        if level_of(graph_levels, scope) != where:
            continue
        by_scope.setdefault(scope, []).append(_shrunk(envelope, value_chars))
    origin = fork_origin([first] if first is not None else [])
    replayed_through = origin["through_seq"] if origin else -1
    failed_scopes = _failed_scopes(trace) if failure is not None else set()
    if trace.failed_at is not None and trace.failed == (where, node_id):
        by_scope.setdefault(trace.failed_at[0], [])
    states = {
        scope: "failed" if (scope, node_id) in failed_scopes else _state(events, shown.state)
        for scope, events in by_scope.items()
    }
    detail = NodeDetail(shown, where, node, mark.state if mark else None, [], len(by_scope))
    _count_calls(detail, by_scope.values())
    chosen = sorted(by_scope, key=lambda scope: (_ORDER.get(states[scope], 9), scope))
    routing = Routing(graph_levels, row.input, routed)
    for scope in chosen[:SHOWN_INSTANCES]:
        events = by_scope[scope]
        instance = _instance(scope, events, routing, node_id, states[scope], value_chars)
        if failure is not None and states[scope] == "failed":
            instance.error = str(failure.get("error", ""))
            instance.left_at = instance.left_at or _failed_at(last)
        detail.instances.append(instance)
    replayed = [
        scope for scope, events in by_scope.items() if events and events[0].seq <= replayed_through
    ]
    for instance in detail.instances:
        instance.replayed = instance.scope in replayed
    detail.forkable = not where and node_id in trace.entered and is_forkable(shown.state)
    if origin and replayed:
        detail.origin_url = node_url(str(origin.get("run_id")), node_id, where)
    return detail


def _count_calls(detail: NodeDetail, instances: Iterable[list[Envelope]]) -> None:
    """The node's calls and model usage over all its instances."""
    for events in instances:
        tools, models = set(), set()
        for envelope in events:
            payload = envelope.payload
            if envelope.kind == "ToolCallRequested":
                tools.add(payload.get("call"))
            elif envelope.kind == "ModelCallRequested":
                models.add(payload.get("call"))
            elif envelope.kind == "ModelCallCompleted":
                usage = found if isinstance(found := payload.get("usage"), dict) else {}
                detail.input_tokens += _count(usage.get("input_tokens"))
                detail.output_tokens += _count(usage.get("output_tokens"))
        detail.tool_calls += len(tools)
        detail.model_calls += len(models)


def _failed_scopes(trace: RunTrace) -> set[tuple[Scope, str]]:
    """The instance the run failed at, and each map or fold instance it ran inside."""
    if trace.failed_at is None:
        return set()
    scope, node = trace.failed_at
    chain = {(scope, node)}
    for depth in range(len(scope)):
        chain.add((scope[:depth], scope[depth][0]))
    return chain


def _failed_at(last: Envelope | None) -> str | None:
    return last.recorded_at if last is not None and last.kind == "RunFailed" else None


def _state(events: list[Envelope], run_state: str) -> str:
    """An instance's state from its own events (``failed`` is the trace's to say)."""
    parked = left = skipped = False
    for envelope in events:
        kind = envelope.kind
        if kind in PARKING_KINDS:
            parked = True
        elif kind in RESOLUTION_KINDS:
            parked = False
        elif kind == "NodeExited":
            left = True
        elif kind == "NodeSkipped":
            skipped = True
    if left:
        return "done"
    if skipped:
        return "skipped"
    if run_state in ("completed", "failed", "abandoned"):
        return "stopped"
    return "waiting" if parked else "running"


def _instance(
    scope: Scope,
    events: list[Envelope],
    routing: Routing,
    node_id: str,
    state: str,
    value_chars: int | None,
) -> InstanceView:
    view = InstanceView(scope, state, calls=_calls(events), waits=_waits(events))
    if state in ("failed", "stopped"):
        # A call still open when the run ended failed with it, or was cut off by its end.
        for call in view.calls:
            if call.outcome == "in flight":
                call.outcome = "failed" if state == "failed" else "stopped"
    if state != "skipped":
        value = routing.routed(scope, node_id)
        view.input_text = None if value is MISSING else shown_text(value, limit=value_chars)
    for envelope in events:
        if envelope.kind == "NodeEntered":
            view.entered_at = envelope.recorded_at
        elif envelope.kind in ("NodeExited", "NodeSkipped"):
            view.left_at = envelope.recorded_at
            if envelope.kind == "NodeExited":
                view.output_text = shown_text(envelope.payload.get("output"))
    if view.left_at is None and state == "waiting":
        view.left_at = events[-1].recorded_at
    return view
