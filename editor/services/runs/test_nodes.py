"""One node of a draft, and the draft from one node (issue 24): **Execute this node** and
**Test from here**, both test runs (:mod:`editor.services.runs.test_runs`), both an author's.

* :func:`execute_node` runs the selected node alone: a graph of that node (and, for a map or
  fold whose body is a node, that body node) taken from the draft, validated alone (the rest of
  the draft may still be unfinished), stored content-addressed and started through
  ``runs.start_run`` with the input the node received in the latest test run that reached it,
  or a typed one, checked against the node's ``input_schema``. The run is marked with the
  node (``Run.test_node``; the API's ``"test": {…, "node"}``). The node runs for real: no pin
  stands in for it, and the ``write`` tools it calls are confirmed by name, as for any test run.
* :func:`test_from_here` forks a run of the document (by default its latest test run that
  entered the node) at the node onto the draft as it is now: the fork's log opens with the
  origin's events before the node's entry, replayed as recorded (even where the draft has
  changed those nodes since, as pinned data would be), and the draft runs from the node on.
  The reference's fork rules hold (:mod:`editor.engine.forks`: the boundary, a dry run that
  previews the recorded writes it would run again, ``write_replay_hazard`` until each is
  acknowledged); the child is a test run of the current revision with the document's pins.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from editor.engine import ForkPlan, RunRecord
from editor.engine.routing import Routing
from editor.engine.schemas import first_violation
from editor.graph import MISSING, BranchNode, FoldNode, Graph, MapNode, graph_hash, wire_json
from editor.graph.model import NodeBody, input_schema_of
from editor.models import Document, Run, RunEvent
from editor.services.documents.drafts import held_error, parsed_draft
from editor.services.documents.graphs import check_graph, save_graph, validate_graph_document
from editor.services.documents.rows import document_row, require_author
from editor.services.errors import (
    DraftInvalid,
    InvalidForkNode,
    InvalidGraph,
    InvalidRequest,
    WritesUnconfirmed,
)
from editor.services.runs import TestOf, start_run
from editor.services.runs.forks import ForkOutcome, origin_of, plan_of, store_fork
from editor.services.runs.log_reads import log_envelopes
from editor.services.runs.pages import run_graph
from editor.services.runs.rows import RunInfo
from editor.services.runs.test_runs import draft_graph, stored_pins, tool_names, write_tools

__all__ = [
    "RECENT_RUNS_SEARCHED",
    "Received",
    "execute_node",
    "node_write_tools",
    "offered_input",
    "offered_value",
    "received_input",
    "test_from_here",
]

#: How many of a document's latest test runs are searched for the one that reached a node.
RECENT_RUNS_SEARCHED = 50

#: What the routing of a node's input reads of a log.
_ROUTING_KINDS = ("NodeExited", "NodeSkipped", "BranchTaken")


@dataclass(frozen=True, slots=True)
class Received:
    """The input a node received in a run of the document, and that run."""

    run: str
    value: Any


# --- The input a node received ------------------------------------------------------------


def _reached(document: Document, node: str) -> Run | None:
    """The newest of the document's last :data:`RECENT_RUNS_SEARCHED` test runs that entered
    ``node`` at the top of its graph."""
    newest = list(
        Run.objects.filter(document=document, test_revision__isnull=False)
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)[:RECENT_RUNS_SEARCHED]
    )
    if not newest:
        return None
    entered = (
        RunEvent.objects.filter(run_id__in=newest, kind="NodeEntered", payload__node=node)
        .values_list("run_id", "payload")
        .iterator()
    )
    found = {run_id for run_id, payload in entered if not payload.get("scope")}
    chosen = next((run_id for run_id in newest if run_id in found), None)
    return Run.objects.select_related("document").get(pk=chosen) if chosen else None


def received_input(slug: str, node: str) -> Received | None:
    """What ``node`` received in the latest test run of the document that reached it (at the
    top of the graph), or ``None`` when none has, or the log no longer holds what it got."""
    run = _reached(document_row(slug), node)
    if run is None:
        return None
    value = _routed(run, node)
    return None if value is MISSING else Received(str(run.id), value)


def offered_input(slug: str, node: str) -> Received | None:
    """What the editor's pickers offer the paths of: what ``node`` received in the latest test
    run that reached it, else what the latest test run routed to it before stopping short of
    it (a map whose ``over`` misses fails before it is entered, and its input is what a person
    needs to see most)."""
    found = received_input(slug, node)
    if found is not None:
        return found
    latest = (
        Run.objects.filter(document=document_row(slug), test_revision__isnull=False)
        .order_by("-created_at", "-id")
        .first()
    )
    if latest is None:
        return None
    value = _routed(latest, node)
    return None if value is MISSING else Received(str(latest.id), value)


def offered_value(slug: str, node: str) -> Any:
    """The value of :func:`offered_input` (``MISSING``: none), as the editor's pickers read it
    (:func:`editor.services.documents.hints.connect_tested_input`)."""
    found = offered_input(slug, node)
    return MISSING if found is None else found.value


def _routed(run: Run, node: str) -> Any:
    _graph, graph_levels = run_graph(run.graph_id)
    routed = [
        envelope for envelope in log_envelopes(str(run.id)) if envelope.kind in _ROUTING_KINDS
    ]
    return Routing(graph_levels, run.input, routed).routed((), node)


# --- Execute this node --------------------------------------------------------------------


def _node_document(document: Document, node_id: str) -> tuple[Graph, Any]:
    """The graph of ``node_id`` alone (with the body node of a map or fold whose body is one),
    from the draft, validated alone; and the node."""
    graph = parsed_draft(document)
    if graph is None:
        found = validate_graph_document(document.draft.text).get("errors", ())
        raise DraftInvalid(list(found), document.draft.revision)
    node = next((item for item in graph.nodes if item.id == node_id), None)
    if node is None:
        raise InvalidRequest(
            f"the draft has no node `{node_id}` at its top level (a node inside a body runs "
            "once per item: execute the map or fold that holds it)",
            "node",
        )
    if isinstance(node, BranchNode):
        raise InvalidRequest(
            f"`{node_id}` is a branch: it decides between its edges and cannot run alone; "
            "use Test from here to run the draft from it",
            "node",
        )
    held = [
        held_error(entry)
        for entry in document.draft.held
        if entry.get("node") in _ids(node) and not entry.get("level")
    ]
    if held:
        raise DraftInvalid(held, document.draft.revision)
    wanted = _ids(node)
    alone = Graph(graph.schema_version, tuple(item for item in graph.nodes if item.id in wanted))
    try:
        return check_graph(wire_json(alone)), node
    except InvalidGraph as invalid:
        raise DraftInvalid(list(invalid.errors), document.draft.revision) from None


def _ids(node: Any) -> set[str]:
    ids = {node.id}
    if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody):
        ids.add(node.body.node)
    return ids


def execute_node(
    user: Any,
    slug: str,
    node: str,
    input: Any = MISSING,  # the spec's name for it
    *,
    confirm_writes: Any = None,
) -> RunInfo:
    """``POST /v1/documents/{slug}/test-runs`` with ``node``: run that node of the draft alone,
    as a test run marked with it. ``input`` left out: what the node received in the latest
    test run that reached it (``400`` when none did). Either is checked against the node's
    ``input_schema``. Refused as a test run is: ``409 draft_invalid`` naming the errors of the
    node's graph, ``409 writes_unconfirmed``."""
    require_author(user)
    document = document_row(slug)
    graph, chosen = _node_document(document, node)
    if input is MISSING:
        received = received_input(slug, node)
        if received is None:
            raise InvalidRequest(
                f"no test run of this document has reached `{node}` yet: give the input it "
                "should receive",
                "input",
            )
        input = received.value
        source = f"the input `{node}` received in test run {received.run}"
    else:
        source = "the input"
    schema = input_schema_of(chosen)
    if schema is not None:
        violation = first_violation(schema, input)
        if violation is not None:
            raise InvalidRequest(
                f"{source} does not fit the input schema of `{node}`: {violation}", "input"
            )
    confirmed = tool_names(confirm_writes)
    unconfirmed = [entry for entry in write_tools(graph, {}) if entry["tool"] not in confirmed]
    if unconfirmed:
        raise WritesUnconfirmed(unconfirmed)
    stored = save_graph(graph, by=user)
    return start_run(
        user,
        stored.graph,
        input,
        document_slug=document.slug,
        test=TestOf(revision=document.draft.revision, pins={}, node=node),
    )


def node_write_tools(slug: str, node_id: str) -> list[str]:
    """The ``write`` tools **Execute this node** would call for ``node_id`` (and the body node
    of a map or fold whose body is one), by name; none when the draft does not parse."""
    graph = parsed_draft(document_row(slug))
    if graph is None:
        return []
    chosen = next((item for item in graph.nodes if item.id == node_id), None)
    if chosen is None:
        return []
    # Every other top-level node stands aside as if pinned (a pinned node calls nothing).
    aside = {item.id: None for item in graph.nodes if item.id not in _ids(chosen)}
    return [entry["tool"] for entry in write_tools(graph, aside)]


# --- Test from here -----------------------------------------------------------------------


def _fork_setup(
    user: Any, slug: str, node: str, from_run: str | None
) -> tuple[Document, Graph, Run, RunRecord]:
    require_author(user)
    document = document_row(slug)
    graph = draft_graph(document)  # the whole draft runs from the node on: it must validate
    if not any(item.id == node for item in graph.nodes):
        raise InvalidForkNode(node, f"the draft has no node `{node}` at its top level")
    if from_run is None:
        origin = _reached(document, node)
        if origin is None:
            raise InvalidForkNode(
                node,
                f"no test run of this document has entered `{node}` yet: run a test first, "
                "or name a run of this document (`from_run`)",
            )
        from_run = str(origin.id)
    row, record = origin_of(from_run)
    if row.document_id != document.pk:
        raise InvalidRequest(f"the run {from_run} is not a run of this document", "from_run")
    return document, graph, row, record


def _hazards(
    graph: Graph, pins: dict[str, Any], record: RunRecord, plan: ForkPlan, confirm_writes: Any
) -> list[dict[str, Any]]:
    """The ``write`` tools the draft would call from the fork's node on that are neither
    confirmed by name nor recorded writes the caller acknowledged (each by its ``seq``)."""
    confirmed = tool_names(confirm_writes)
    replayed = _replayed(record, plan)
    acknowledged = {write["tool"] for write in plan.writes if write["seq"] in plan.acknowledged}
    unconfirmed = []
    for entry in write_tools(graph, pins):
        nodes = [node for node in entry["nodes"] if node not in replayed]
        if nodes and entry["tool"] not in confirmed | acknowledged:
            unconfirmed.append({"tool": entry["tool"], "nodes": nodes})
    return unconfirmed


def _replayed(record: RunRecord, plan: ForkPlan) -> set[str]:
    """The top-level nodes the fork's log finishes before its node: replayed, never run."""
    return {
        str(envelope.payload.get("node"))
        for envelope in record.events[: plan.prefix_event_count]
        if envelope.kind in ("NodeExited", "NodeSkipped") and not envelope.payload.get("scope")
    }


def test_from_here(
    user: Any,
    slug: str,
    node: str,
    *,
    from_run: str | None = None,
    acknowledged: Iterable[int] = (),
    confirm_writes: Any = None,
    dry_run: bool = False,
) -> ForkOutcome | dict[str, Any]:
    """``POST /v1/documents/{slug}/test-runs/fork``: fork ``from_run`` (by default the latest
    test run of the document that entered ``node``) at ``node`` onto the draft as it is now.
    With ``dry_run``, what the fork would hold and run again, and nothing created; otherwise
    the fork, a test run of the current revision. Refused as a fork is (``invalid_fork_node``,
    ``write_replay_hazard``, ``origin_needs_reconciliation``, ``wrong_state``) and as a test
    run is (``draft_invalid``, ``writes_unconfirmed``)."""
    document, graph, origin, record = _fork_setup(user, slug, node, from_run)
    plan = plan_of(record, node, acknowledged)
    pins = stored_pins(document, graph)
    unconfirmed = _hazards(graph, pins, record, plan, confirm_writes)
    if dry_run:
        return {
            **plan.preview(),
            "origin_graph_hash": plan.graph_hash,
            "graph_hash": graph_hash(graph),
            "revision": document.draft.revision,
            "unconfirmed_tools": unconfirmed,
            "would_proceed": plan.would_proceed and not unconfirmed,
        }
    if plan.would_proceed and unconfirmed:
        raise WritesUnconfirmed(unconfirmed)
    stored = save_graph(graph, by=user)
    return store_fork(
        user,
        origin,
        record,
        plan,
        graph_hash=stored.graph,
        test=TestOf(revision=document.draft.revision, pins=pins),
    )


test_from_here.__test__ = False  # type: ignore[attr-defined]
