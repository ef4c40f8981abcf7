"""What the run pages show (spec 06, *Runs*), composed from :mod:`editor.services.runs`.

* :func:`run_page`: a run's status, its event timeline and its canvas coloured by node state;
  ``None`` when the page already shows its latest event (the polling answer is then empty).
* :func:`suggested_input`: what **Start run** offers as the input of a graph.

Node states on the canvas come from the run's projection (:func:`editor.engine.graph_projection`):
``exited`` is *done*, ``skipped`` *skipped*, a parked node *waiting*; a node entered and not
exited is *running* while the run lives, *failed* when the run failed, *stopped* when it was
abandoned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from editor.engine import EVENT_FIELDS, TERMINAL, compact_json
from editor.graph import Graph
from editor.graph.model import FoldNode, NodeBody, SubgraphBody, input_schema_of
from editor.models import Run
from editor.services import canvas, graphs, runs

__all__ = [
    "EVENT_SUMMARY_CHARS",
    "RunPage",
    "TimelineEvent",
    "is_live",
    "node_states",
    "run_page",
    "suggested_input",
]

#: The timeline shows each payload as compact JSON cut to this many characters.
EVENT_SUMMARY_CHARS = 300


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    seq: int
    at: datetime | None
    kind: str
    node: str | None
    #: The payload (without ``node``, shown apart) as compact JSON, cut to a readable length.
    summary: str
    #: ``False`` for a kind this version does not model: it is shown raw under its kind.
    known: bool


@dataclass(frozen=True, slots=True)
class RunPage:
    run: runs.RunInfo
    events: list[TimelineEvent]
    #: More events exist than one page holds (the API pages them).
    more_events: bool
    canvas: canvas.DrawnCanvas
    states: dict[str, str]
    live: bool
    document_title: str | None = None
    started_by: str | None = None
    #: A completed run's output, indented JSON.
    output_json: str | None = None


def is_live(state: str) -> bool:
    """Whether a run in ``state`` can still change on its own (the page keeps polling)."""
    return state not in {terminal.value for terminal in TERMINAL}


def node_states(projection: dict[str, Any], run_state: str) -> dict[str, str]:
    """Top-level node id → ``running``, ``done``, ``skipped``, ``waiting``, ``failed`` or
    ``stopped`` (a key of :data:`editor.graph.dot.RUN_STATES`)."""
    unfinished = {"failed": "failed", "abandoned": "stopped"}.get(run_state, "running")
    states: dict[str, str] = {}
    for entry in projection.get("nodes", ()):
        if entry.get("parked"):
            states[entry["node"]] = "waiting"
        elif entry["state"] == "exited":
            states[entry["node"]] = "done"
        elif entry["state"] == "skipped":
            states[entry["node"]] = "skipped"
        else:
            states[entry["node"]] = unfinished
    return states


def _moment(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _summary(value: Any) -> str:
    text = compact_json(value) if value else ""
    if len(text) > EVENT_SUMMARY_CHARS:
        text = text[: EVENT_SUMMARY_CHARS - 1] + "…"
    return text


def _timeline(envelopes: list[dict[str, Any]]) -> list[TimelineEvent]:
    events = []
    for envelope in envelopes:
        event = envelope.get("event") or {}
        kind = str(event.get("kind", ""))
        payload = dict(event.get("payload") or {})
        known = kind in EVENT_FIELDS
        node = payload.get("node") if known else None
        if known:
            payload.pop("node", None)
        events.append(
            TimelineEvent(
                seq=int(envelope["seq"]),
                at=_moment(str(envelope.get("recorded_at", ""))),
                kind=kind,
                node=None if node is None else str(node),
                summary=_summary(payload) if known else compact_json(payload),
                known=known,
            )
        )
    return events


def run_page(run_id: str, *, seen: int | None = None) -> RunPage | None:
    """Everything the run page shows; ``None`` when the run is live and still has the
    ``seen`` events the page shows (nothing to redraw). Raises ``UnknownRun``."""
    info = runs.get_run(run_id)
    live = is_live(info.state)
    if seen is not None and live and info.event_count == seen:
        return None
    page = runs.run_events(run_id)
    states = node_states(runs.run_graph(run_id), info.state)
    drawn = canvas.draw(graphs.load_graph(info.graph_hash), states=states)
    extra = _extras([info.run]).get(info.run, {})
    output = None
    if "output" in info.status:
        output = json.dumps(info.status["output"], indent=2, ensure_ascii=False)
    return RunPage(
        info,
        _timeline(page.events),
        page.next is not None,
        drawn,
        states,
        live,
        document_title=extra.get("document__title"),
        started_by=extra.get("created_by__username"),
        output_json=output,
    )


def _extras(run_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per run id: its document's title and its starter's username (what RunInfo lacks)."""
    rows = Run.objects.filter(id__in=run_ids).values(
        "id", "document__title", "created_by__username"
    )
    return {str(row["id"]): row for row in rows}


def _entry_schema(graph: Graph) -> Any:
    """The ``input_schema`` of what receives the run input: the one entry node, or, for a
    fold (whose first pass gets the fold's input), the entry of its body."""
    bodies = {
        node.body.node for node in graph.nodes if isinstance(getattr(node, "body", None), NodeBody)
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
    return json.dumps(value, indent=2, ensure_ascii=False)
