"""The editor's edit pipeline: read the draft, apply one edit, save it, validate, draw.

Every change the editor page makes goes through :func:`apply_edit` (form edits on the
wire value) or :func:`save_text` (the **JSON** tab). Both write with the revision the
page holds, so a tab that fell behind gets a :class:`Stale` answer instead of
overwriting someone else's work, and both answer with an :class:`CheckedDraft` — the text,
the revision, the verdict, the canvas and the errors sorted by node and field — which
is all the page's fragments need. A refused edit writes nothing.

One request reads the draft once (:func:`open_draft`, parsed but not validated), hands
that state down to the edit, and validates only the draft it answers with. The canvas
is laid out only when the answer calls :func:`draw_canvas`, so an answer that finds
the page already showing this drawing (:attr:`CheckedDraft.canvas_key`) never runs ``dot``.

The editor's named edits (:mod:`.editor_edits`) are built on :func:`apply_edit`, and their
answers (:mod:`.editor_page`) on :class:`CheckedDraft`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any
from urllib.parse import quote

from editor.engine import resolve_names
from editor.graph import (
    ErrorData,
    Graph,
    MalformedDocument,
    SubgraphPath,
    parse_document,
    wire_value,
)
from editor.graph.edits import EditRefused, format_draft, level_value
from editor.recent import Recent
from editor.services import documents
from editor.services.access import ActingUser, can_author
from editor.services.documents import approvals, history
from editor.services.documents.canvas import (
    CanvasSource,
    DrawnCanvas,
    canvas_source,
    editor_source,
    render,
    render_editor,
)
from editor.services.documents.graphs import load_graph, validate_graph_document
from editor.services.errors import StaleDraft
from editor.services.installation import installation

__all__ = [
    "CheckedDraft",
    "ParsedDraft",
    "Refused",
    "Stale",
    "apply_edit",
    "check_draft",
    "discard_changes",
    "draw_canvas",
    "error_node",
    "level_query",
    "load_checked_draft",
    "node_link",
    "open_draft",
    "restore_version",
    "save_text",
    "step_history",
]

Value = dict[str, Any]
Edit = Callable[[Value], Value]


@dataclass(frozen=True)
class ParsedDraft(documents.DraftRecord):
    """The draft as one request read it (a :class:`~editor.services.documents.DraftRecord`):
    parsed (when it parses), not validated."""

    graph: Graph | None = None
    #: Why the text does not parse (``graph`` is ``None``), with the place as data.
    parse_error: MalformedDocument | None = None
    can_edit: bool = False
    #: The editor page's address, given by the edge: the canvas links each node to its form
    #: there (``""``: a canvas without links).
    page_url: str = ""

    @cached_property
    def value(self) -> Value | None:
        return wire_value(self.graph) if self.graph is not None else None

    def level_value(self, level: SubgraphPath = ()) -> Value | None:
        """The document level ``level`` names (``None`` when the draft does not parse or there
        is no such level)."""
        if not level:
            return self.value
        if self.value is None:
            return None
        try:
            return level_value(self.value, level)
        except EditRefused:
            return None

    def node(self, node_id: str | None, level: SubgraphPath = ()) -> Value | None:
        """The last node with ``node_id`` in ``level`` (as validation looks nodes up)."""
        current = self.level_value(level)
        if current is None or node_id is None:
            return None
        for node in reversed(current["nodes"]):
            if node["payload"]["id"] == node_id:
                return node
        return None


#: The graphs of the drafts this process read or saved last, by their text: the next edit of
#: a draft starts from the text its last answer saved, and need not read it again (graphs are
#: never changed in place).
_graphs: Recent[str, Graph] = Recent(8)


def _read(text: str) -> tuple[Graph | None, MalformedDocument | None]:
    """``text`` parsed, or why it does not parse."""
    graph = _graphs.get(text)
    if graph is not None:
        return graph, None
    try:
        graph = parse_document(text)
    except MalformedDocument as error:
        return None, error
    _graphs.put(text, graph)
    return graph, None


def open_draft(user: ActingUser, slug: str, page_url: str) -> ParsedDraft:
    """The draft as it is now, read once (raises ``UnknownDocument``); ``page_url``: the
    editor page's address, where the canvas links its nodes."""
    record = documents.read_draft_record(slug)
    graph, parse_error = _read(record.text)
    return ParsedDraft(
        **{item.name: getattr(record, item.name) for item in fields(record)},
        graph=graph,
        parse_error=parse_error,
        can_edit=can_author(user),
        page_url=page_url,
    )


@dataclass(frozen=True)
class CheckedDraft(ParsedDraft):
    """The draft as the editor shows it: a :class:`ParsedDraft` with its verdict (the one
    validation of its request), and its canvas, drawn when first asked for."""

    validation: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def errors(self) -> list[ErrorData]:
        """The validation errors (the held fields are apart: :attr:`held`); a
        ``malformed_document`` one carries where the text stops being readable, as data
        (``line``, ``column`` or ``location``, and ``reason``)."""
        found: list[ErrorData] = list(self.validation.get("errors", ()))
        problem = self.parse_error
        if problem is None:
            return found
        placed: list[ErrorData] = []
        for error in found:
            if error["code"] == "malformed_document" and error["message"] == str(problem):
                error = {**error}
                if problem.at is not None:
                    error["line"], error["column"] = problem.at.line, problem.at.column
                    error["reason"] = problem.at.what
                elif problem.location:
                    error["location"], error["reason"] = problem.location, problem.reason
            placed.append(error)
        return placed

    @property
    def error_count(self) -> int:
        """Every error that blocks freezing: validation errors and held fields."""
        return len(self.validation.get("errors", ())) + len(self.held)

    @property
    def can_freeze(self) -> bool:
        return bool(self.validation.get("valid")) and not self.held

    @property
    def held_nodes(self) -> list[tuple[SubgraphPath, str]]:
        """The nodes with a field held back, by ``(level, id)``: the canvas marks them."""
        return [(tuple(entry.get("level", ())), entry["node"]) for entry in self.held]

    def held_for(self, node_id: str, level: SubgraphPath = ()) -> dict[str, dict[str, Any]]:
        """The held fields of one node, by field key."""
        return {
            entry["field"]: entry
            for entry in self.held
            if entry["node"] == node_id and tuple(entry.get("level", ())) == level
        }

    @cached_property
    def last_good(self) -> tuple[Graph, Value] | None:
        """While the draft does not parse: the newest saved revision that does (shown greyed)."""
        if self.graph is not None:
            return None
        for text in history.recent_texts(self.slug):
            graph, _ = _read(text)
            if graph is not None:
                return graph, wire_value(graph)
        return None

    @property
    def greyed(self) -> bool:
        """The canvas and lists show the last draft that parsed, not this one."""
        return self.graph is None and self.last_good is not None

    @property
    def shown_value(self) -> Value | None:
        """What the lists show: the draft's value, or the last good one's while it does not
        parse."""
        if self.value is not None:
            return self.value
        return self.last_good[1] if self.last_good is not None else None

    @cached_property
    def canvas_source(self) -> CanvasSource | None:
        """The drawing's DOT source (no layout yet); while the draft does not parse, the last
        draft that did, without links; ``None`` when there is none."""
        if self.graph is None:
            if self.last_good is None:
                return None
            return canvas_source(self.last_good[0])
        return editor_source(
            self.graph,
            errors=self.validation.get("errors", ()),
            node_url=_node_url(self.page_url),
            layout=self.layout,
            held=self.held_nodes,
        )

    @property
    def canvas_key(self) -> str:
        """Names the drawing: equal keys, equal canvases (``""`` when there is none)."""
        source = self.canvas_source
        if source is None:
            return ""
        return f"g{source.key}" if self.greyed else source.key

    @property
    def malformed(self) -> str | None:
        """The parse error, while the draft does not parse."""
        for error in self.errors:
            if error.get("code") in ("malformed_document", "payload_too_large"):
                return str(error["message"])
        return None

    def node_ids_at(self, level: SubgraphPath) -> list[str]:
        current = self.level_value(level)
        return [node["payload"]["id"] for node in current["nodes"]] if current else []

    @cached_property
    def not_runnable(self) -> list[ErrorData]:
        """Spec 02's run-time resolution against this installation's registries: "not
        runnable here" notices, shown apart from the errors; they do not block freezing."""
        if self.graph is None:
            return []
        return resolve_names(self.graph, installation())

    @cached_property
    def policy_warnings(self) -> list[str]:
        """The gates the approval policy names that this draft no longer has (renamed or
        removed): a warning beside the verdict, never blocking Freeze (one query)."""
        if self.graph is None:
            return []
        return approvals.stale_gates(self.slug, self.graph)

    def errors_of(self, node_id: str, level: SubgraphPath = ()) -> list[ErrorData]:
        """The errors about ``node_id`` in ``level`` (not those inside its own subgraph)."""
        return [
            error
            for error in self.errors
            if tuple(error.get("subgraph", ())) == level and error_node(error) == node_id
        ]


@dataclass(frozen=True)
class Refused:
    """An edit that was not written: the field it is about and why."""

    field: str
    message: str
    editor: CheckedDraft


@dataclass(frozen=True)
class Stale:
    """A change sent with an old revision: the newer draft, and the change it rejected."""

    editor: CheckedDraft
    rejected: str = ""
    rejected_fields: list[tuple[str, str]] = field(default_factory=list)


def error_node(error: ErrorData) -> str | None:
    """The node an error is about: its ``node``, or the source of its ``edge``."""
    if "node" in error:
        return str(error["node"])
    edge = error.get("edge")
    if isinstance(edge, dict):
        return str(edge.get("from"))
    return None


def level_query(level: SubgraphPath) -> str:
    """The query-string parameters that name a document level (``&in=<owner>`` each)."""
    return "".join(f"&in={quote(owner, safe='')}" for owner in level)


def node_link(page: str, node_id: str, level: SubgraphPath = ()) -> str:
    """The editor page at ``node_id``'s form (a node inside a subgraph body has a form of its
    own, at its level)."""
    return f"{page}?node={quote(node_id, safe='')}{level_query(level)}"


def _node_url(page: str) -> Callable[[SubgraphPath, str], str | None] | None:
    if not page:
        return None

    def url(level: SubgraphPath, node_id: str) -> str:
        return node_link(page, node_id, level)

    return url


def draw_canvas(checked: CheckedDraft) -> DrawnCanvas | None:
    """The canvas of ``checked`` (``None``: nothing to draw), laid out now: at the kept
    layout's places while the structure stays (``neato -n2``), else laid out again by ``dot``
    and that layout kept with the draft. Runs Graphviz (or reads its cache): an answer calls
    it before rendering, and only for a canvas it sends."""
    source = checked.canvas_source
    if source is None:
        return None
    if checked.graph is None:
        return render(source)
    drawn, layout = render_editor(
        source,
        checked.graph,
        errors=checked.validation.get("errors", ()),
        node_url=_node_url(checked.page_url),
        held=checked.held_nodes,
    )
    if layout is not None:
        documents.keep_layout(checked.slug, layout)
    return drawn


def _with_verdict(draft: ParsedDraft, validation: dict[str, Any]) -> CheckedDraft:
    checked = CheckedDraft(
        **{item.name: getattr(draft, item.name) for item in fields(ParsedDraft)},
        validation=validation,
    )
    if "value" in draft.__dict__:  # the wire value this request has already written out
        checked.__dict__["value"] = draft.__dict__["value"]
    return checked


def check_draft(draft: ParsedDraft) -> CheckedDraft:
    """``draft`` with its verdict (the one validation of this request)."""
    return _with_verdict(draft, validate_graph_document(draft.text))


def load_checked_draft(user: ActingUser, slug: str, page_url: str = "") -> CheckedDraft:
    """The draft as it is now, validated (raises ``UnknownDocument``)."""
    return check_draft(open_draft(user, slug, page_url))


def _save(
    user: ActingUser,
    current: ParsedDraft,
    text: str,
    revision: int | None,
    rejected_fields: list[tuple[str, str]],
    *,
    graph: Graph | None = None,
    summary: str = "",
    held: list[dict[str, Any]] | None = documents.KEEP,
    coalesce: str = "",
) -> CheckedDraft | Stale:
    try:
        saved = documents.save_draft(
            user,
            current.slug,
            text=text,
            expected_revision=revision,
            summary=summary,
            held=held,
            coalesce=coalesce,
            graph=graph,
            previous=(current.text, current.graph) if current.graph is not None else None,
        )
    except StaleDraft:
        newer = load_checked_draft(user, current.slug, current.page_url)
        return Stale(newer, rejected=text, rejected_fields=rejected_fields)
    parse_error = None
    if graph is None:
        graph, parse_error = _read(saved.text)
    draft = replace(
        current,
        text=saved.text,
        revision=saved.revision,
        graph=graph,
        parse_error=parse_error,
        held=saved.held,
        can_undo=True,
        can_redo=False,
    )
    return _with_verdict(draft, saved.validation)


def apply_edit(
    user: ActingUser,
    current: ParsedDraft,
    revision: int | None,
    edit: Edit,
    *,
    submitted: list[tuple[str, str]] | None = None,
    summary: str = "",
    held: list[dict[str, Any]] | None = documents.KEEP,
    coalesce: str = "",
) -> CheckedDraft | Refused | Stale:
    """Apply ``edit`` to ``current`` (the draft as this request read it), save it at ``revision``
    with ``summary`` for the history; ``held`` replaces the fields held back, when given.

    A refused edit (``EditRefused``, or a result that would not parse) writes nothing.
    """
    if revision is not None and revision != current.revision:
        return Stale(check_draft(current), rejected_fields=submitted or [])
    if current.value is None:
        message = "the draft does not parse: fix it in the JSON tab first"
        return Refused("", message, check_draft(current))
    try:
        changed = edit(current.value)
    except EditRefused as refused:
        return Refused(refused.field, str(refused), check_draft(current))
    text = format_draft(changed)
    if text == current.text and (held is documents.KEEP or list(held) == list(current.held)):
        return check_draft(current)
    try:
        graph = parse_document(text)
    except MalformedDocument as error:
        return Refused("", str(error), check_draft(current))
    _graphs.put(text, graph)
    return _save(
        user,
        current,
        text,
        revision,
        submitted or [],
        graph=graph,
        summary=summary,
        held=held,
        coalesce=coalesce,
    )


def save_text(
    user: ActingUser, current: ParsedDraft, revision: int | None, text: str
) -> CheckedDraft | Stale:
    """The **JSON** tab: the whole draft as typed, saved even when it does not parse.

    Typing is kept as one revision while the text parses, and as another while it does not,
    so the last draft that parsed stays in the history (the greyed canvas shows it)."""
    graph, _ = _read(text)
    coalesce = "json:parses" if graph is not None else "json:broken"
    return _save(user, current, text, revision, [], graph=graph, coalesce=coalesce)


def discard_changes(
    user: ActingUser, current: ParsedDraft, revision: int | None
) -> CheckedDraft | Stale | None:
    """Reset the draft to the latest frozen version (``None`` when nothing is frozen)."""
    if current.latest_graph is None:
        return None
    text = format_draft(wire_value(load_graph(current.latest_graph)))
    return _save(
        user, current, text, revision, [], summary="discarded the changes since the last version"
    )


def restore_version(
    user: ActingUser, current: ParsedDraft, graph: str, number: int
) -> CheckedDraft | Stale:
    """The draft becomes the frozen version ``number`` (whose graph is ``graph``): an edit of
    the draft as it is now, which **Undo** takes back."""
    text = format_draft(wire_value(load_graph(graph)))
    return _save(user, current, text, current.revision, [], summary=f"restored version {number}")


def step_history(
    user: ActingUser,
    current: ParsedDraft,
    revision: int | None,
    how: str,
    number: int | None = None,
) -> CheckedDraft | Stale:
    """**Undo**, **Redo**, or restore revision ``number`` (``how``: undo, redo, restore); raises
    ``NothingToUndo``/``NothingToRedo`` (``InvalidRequest``) when there is nothing to do."""
    if revision is not None and revision != current.revision:
        return Stale(check_draft(current), rejected_fields=[(how, str(number or ""))])
    try:
        if how == "undo":
            documents.undo(user, current.slug, expected_revision=revision)
        elif how == "redo":
            documents.redo(user, current.slug, expected_revision=revision)
        else:
            assert number is not None
            documents.restore_revision(user, current.slug, number, expected_revision=revision)
    except StaleDraft:
        return Stale(
            load_checked_draft(user, current.slug, current.page_url),
            rejected_fields=[(how, str(number or ""))],
        )
    return load_checked_draft(user, current.slug, current.page_url)
