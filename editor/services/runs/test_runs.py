"""Test runs of a document's draft, and the pinned outputs they use (issue 24).

A test run runs the draft as it is now, when it validates: its graph is stored
content-addressed like any graph (never as a version) and started through
:func:`editor.services.runs.start_run`, the one start path, marked with the draft revision.
A worker drives it like any run. What sets it apart:

* its gates are its author's to decide (``resolutions``), never the approvers': the inbox,
  its count and the approvers' email leave test runs out;
* ``write`` tools run only once the author has confirmed them, by name, for that run (or are
  stubbed by pinning the nodes that call them);
* pinned nodes do not run: the drive records the pin as the node's output
  (``NodeExited.pinned``). Pins live with the document (``PinnedOutput``), never in the graph
  or its hash, and only test runs read them;
* they are listed in the editor and under the runs list's **Test runs** filter only, and kept
  ``GATEHOUSE_TEST_RUN_RETENTION_DAYS`` days (``retention``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from editor.engine.ports import ToolEffect
from editor.engine.schemas import first_violation
from editor.graph import (
    AgentNode,
    BranchNode,
    FoldNode,
    Graph,
    MapNode,
    ToolNode,
)
from editor.graph.model import SubgraphBody
from editor.models import Document, LastSample, PinnedOutput, Run, RunEvent, SampleInput
from editor.services.access import ActingUser, author_of
from editor.services.documents.drafts import graph_to_freeze, parsed_draft
from editor.services.documents.graphs import save_graph, validate_graph_document
from editor.services.documents.rows import document_row, require_author
from editor.services.errors import (
    DraftInvalid,
    InvalidGraph,
    InvalidPin,
    InvalidRequest,
    NotPinned,
    UnknownRun,
    WritesUnconfirmed,
)
from editor.services.installation import installation
from editor.services.runs import TestOf, start_run
from editor.services.runs.rows import RunInfo, info
from editor.services.storable import check_storable, nul_path

__all__ = [
    "TEST_RUNS_SHOWN",
    "Pin",
    "clear_pin",
    "clear_pins",
    "draft_graph",
    "list_pins",
    "pin_node",
    "pin_of",
    "put_pins",
    "recent_test_runs",
    "start_test_run",
    "stored_pins",
    "tool_names",
    "write_tools",
]

#: How many test runs the editor's panel lists.
TEST_RUNS_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Pin:
    """A node's pinned output, as the API and the editor show it."""

    node: str
    output: Any
    from_run: str | None
    pinned_at: datetime


# --- The draft --------------------------------------------------------------------------------


def draft_graph(document: Document) -> Graph:
    """The document's draft as a graph, when it validates; else :class:`DraftInvalid` with
    every error (the held fields the editor could not take count as errors, as they block
    freezing)."""
    draft = document.draft
    try:
        return graph_to_freeze(draft)
    except InvalidGraph as invalid:
        raise DraftInvalid(list(invalid.errors), draft.revision) from None


# --- Starting ---------------------------------------------------------------------------------


def start_test_run(
    user: ActingUser,
    slug: str,
    input: Any = None,  # the spec's name for it
    *,
    pins: Any = None,
    confirm_writes: Any = None,
    sample: str | None = None,
) -> RunInfo:
    """``POST /v1/documents/{slug}/test-runs``: run the draft as it is now.

    ``pins``: ``None`` uses the document's pins; an object ``{node: output}`` stands for them
    in this run alone (``{}``: every node runs). ``confirm_writes``: the names of the
    ``write`` tools the author lets this run call; any other it would call is
    :class:`WritesUnconfirmed`. ``sample``: the sample input's name, remembered as the one
    this person last tested with."""
    require_author(user)
    document = document_row(slug)
    graph = draft_graph(document)
    chosen = _chosen_pins(document, graph, pins)
    confirmed = tool_names(confirm_writes)
    unconfirmed = [entry for entry in write_tools(graph, chosen) if entry["tool"] not in confirmed]
    if unconfirmed:
        raise WritesUnconfirmed(unconfirmed)
    with transaction.atomic():
        stored = save_graph(graph, by=user)
        started = start_run(
            user,
            stored.graph,
            input,
            document_slug=document.slug,
            test=TestOf(revision=document.draft.revision, pins=chosen),
        )
        if sample:
            _remember_sample(user, document, sample)
    return started


def tool_names(value: Any) -> set[str]:
    """The ``write`` tools a caller confirmed, by name (``confirm_writes``)."""
    if value is None:
        return set()
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise InvalidRequest("`confirm_writes` must be a list of tool names", "confirm_writes")
    return set(value)


def _remember_sample(user: ActingUser, document: Document, name: str) -> None:
    """Remember ``name`` as the sample this person last tested with, when the document keeps
    a sample of that name (any other text is not one, and is forgotten)."""
    person = author_of(user)
    if person is None or nul_path(name) is not None:
        return
    if not SampleInput.objects.filter(document=document, name=name).exists():
        return
    LastSample.objects.update_or_create(document=document, user=person, defaults={"name": name})


def _chosen_pins(document: Document, graph: Graph, pins: Any) -> dict[str, Any]:
    """The pins a test run uses, each checked against its node in the draft as it is now.
    A stored pin of a node the draft no longer has is left out (kept, should it come back)."""
    if pins is None:
        chosen = stored_pins(document, graph)
    elif isinstance(pins, dict):
        check_storable(pins)
        chosen = dict(pins)
    else:
        raise InvalidRequest("`pins` must be an object of node ids to outputs", "pins")
    for node, output in chosen.items():
        check_pin(graph, node, output)
    return chosen


def stored_pins(document: Document, graph: Graph) -> dict[str, Any]:
    """The document's pins of nodes the draft has at its top level (the pin of a node since
    removed is kept, should it come back, but not used)."""
    stored = {pin.node: pin.output for pin in PinnedOutput.objects.filter(document=document)}
    top = {node.id for node in graph.nodes}
    return {node: output for node, output in stored.items() if node in top}


def check_pin(graph: Graph, node_id: str, output: Any) -> None:
    """A pin the draft can use: a top-level node that is no branch (a branch's case is its
    decision, not an output), and an output its ``output_schema`` takes. Raises
    :class:`InvalidPin` naming the node."""
    node = next((node for node in graph.nodes if node.id == node_id), None)
    if node is None:
        raise InvalidPin(node_id, "the draft has no such node at its top level")
    if isinstance(node, BranchNode):
        raise InvalidPin(node_id, "a branch cannot be pinned: its case is decided when it runs")
    schema = getattr(node, "output_schema", None)
    if schema is not None:
        violation = first_violation(schema, output)
        if violation is not None:
            raise InvalidPin(node_id, f"it breaks the node's output schema: {violation}")


def write_tools(graph: Graph, pins: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``write`` tools a test run of ``graph`` would call, ``[{"tool", "nodes"}]`` in the
    order first met; the nodes pinned at the top level call nothing."""
    tools = installation().tools
    agents = installation().agents
    found: dict[str, list[str]] = {}
    for node in _nodes(graph, top_pins=pins):
        names: tuple[str, ...] = ()
        if isinstance(node, ToolNode):
            names = (node.tool,)
        elif isinstance(node, AgentNode):
            agent = agents.get(node.agent_hash)
            names = tuple(agent.tools) if agent is not None else ()
        for name in names:
            spec = tools.get(name)
            if spec is not None and spec.effect is ToolEffect.WRITE:
                found.setdefault(name, []).append(node.id)
    return [{"tool": name, "nodes": nodes} for name, nodes in found.items()]


def _nodes(graph: Graph, *, top_pins: Mapping[str, Any] = {}) -> Iterator[Any]:
    for node in graph.nodes:
        if node.id in top_pins:
            continue
        yield node
        if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, SubgraphBody):
            yield from _nodes(node.body.graph)


# --- Listing ----------------------------------------------------------------------------------


def recent_test_runs(slug: str, limit: int = TEST_RUNS_SHOWN) -> list[RunInfo]:
    """The document's test runs, newest first (the editor's panel)."""
    document = document_row(slug)
    rows = (
        Run.objects.select_related("document")
        .filter(document=document, test_revision__isnull=False)
        .order_by("-created_at", "-id")[:limit]
    )
    return [info(row) for row in rows]


# --- Pins -------------------------------------------------------------------------------------


def _pin(row: PinnedOutput) -> Pin:
    return Pin(row.node, row.output, str(row.from_run) if row.from_run else None, row.pinned_at)


def list_pins(slug: str) -> list[Pin]:
    """The document's pins, by node id."""
    return [_pin(row) for row in PinnedOutput.objects.filter(document=document_row(slug))]


def pin_of(slug: str, node: str) -> Pin:
    """One node's pin; :class:`NotPinned` when it has none."""
    row = PinnedOutput.objects.filter(document=document_row(slug), node=node).first()
    if row is None:
        raise NotPinned(node)
    return _pin(row)


def _checked_document(user: ActingUser, slug: str) -> tuple[Document, Graph]:
    """The document and its draft parsed, for a pin's check: a pin is checked against the
    draft's node as it is now, so the draft must at least parse."""
    require_author(user)
    document = document_row(slug)
    graph = parsed_draft(document)
    if graph is None:
        raise DraftInvalid(
            list(validate_graph_document(document.draft.text).get("errors", ())),
            document.draft.revision,
        )
    return document, graph


def pin_node(
    user: ActingUser, slug: str, node: str, *, output: Any = None, from_run: str | None = None
) -> Pin:
    """``PUT /v1/documents/{slug}/pins/{node}``: pin ``output``, or with ``from_run`` the
    output the node gave in that run of this document. Checked against the node's output
    schema in the draft (:class:`InvalidPin` naming the node)."""
    document, graph = _checked_document(user, slug)
    run_key: uuid.UUID | None = None
    if from_run is not None:
        run_key, output = _output_in_run(document, from_run, node)
    check_storable(output)
    check_pin(graph, node, output)
    row, _ = PinnedOutput.objects.update_or_create(
        document=document, node=node, defaults={"output": output, "from_run": run_key}
    )
    return _pin(row)


def put_pins(user: ActingUser, slug: str, pins: Any) -> list[Pin]:
    """``PUT /v1/documents/{slug}/pins``: the document's pins become exactly ``pins``
    (``{node: output}``), each checked; nothing changes when one is refused."""
    document, graph = _checked_document(user, slug)
    if not isinstance(pins, dict):
        raise InvalidRequest("`pins` must be an object of node ids to outputs", "pins")
    check_storable(pins)
    for node, output in pins.items():
        check_pin(graph, node, output)
    with transaction.atomic():
        PinnedOutput.objects.filter(document=document).delete()
        PinnedOutput.objects.bulk_create(
            PinnedOutput(document=document, node=node, output=output)
            for node, output in pins.items()
        )
    return list_pins(slug)


def clear_pin(user: ActingUser, slug: str, node: str) -> bool:
    """Unpin one node; whether it was pinned."""
    require_author(user)
    deleted, _ = PinnedOutput.objects.filter(document=document_row(slug), node=node).delete()
    return bool(deleted)


def clear_pins(user: ActingUser, slug: str) -> int:
    """Unpin every node of the document; how many were pinned."""
    require_author(user)
    deleted, _ = PinnedOutput.objects.filter(document=document_row(slug)).delete()
    return deleted


def _output_in_run(document: Document, run_id: str, node: str) -> tuple[uuid.UUID, Any]:
    try:
        key = uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None
    if not Run.objects.filter(pk=key, document=document).exists():
        raise UnknownRun(str(run_id))
    for payload in RunEvent.objects.filter(run_id=key, kind="NodeExited").values_list(
        "payload", flat=True
    ):
        if payload.get("node") == node and not payload.get("scope"):
            return key, payload.get("output")
    raise InvalidPin(node, f"the run {run_id} has no output of this node to pin")
