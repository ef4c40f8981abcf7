"""The editor page's answer: everything a render of ``templates/editor/page.html`` (or one of
its fragments) shows, built before the template runs.

Every request of the editor page ends here: the page itself (:func:`show_page`) and each edit
(:mod:`.editor_edits`, through :func:`answer_edit`). An :class:`EditorAnswer` holds what the
template reads — the checked draft, the rows of its errors, held fields and hints
(:mod:`.hints`), the nodes and edges of the level shown, the node form, what the answer says
beside the controls — and what to swap (:class:`Swaps`: the pieces an out-of-band answer
replaces; ``None`` when the page or a fragment is rendered in place). The canvas is drawn here,
and only when the answer shows it, so the template neither runs Graphviz nor writes the kept
layout.

What the page says about itself with each request (its revision, level, the node whose form it
shows, the keys of the canvas and lists it shows) is a :class:`PageState`, read by the edge.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypedDict
from urllib.parse import quote

from editor.graph import ErrorData, SubgraphPath
from editor.graph.edits import NEW_NODE_DEFAULTS
from editor.presentation import messages, node_form
from editor.services import agents, installation
from editor.services.access import ActingUser
from editor.services.documents import hints, managing
from editor.services.documents.canvas import DrawnCanvas
from editor.services.documents.core import Frozen
from editor.services.documents.editing import (
    CheckedDraft,
    Refused,
    Stale,
    check_draft,
    draw_canvas,
    error_node,
    level_query,
    node_link,
    open_draft,
)

__all__ = [
    "NODE_KINDS",
    "EditorAnswer",
    "PageState",
    "Swaps",
    "answer_edit",
    "show_page",
]

#: The kinds **Add node** and the canvas palette offer, in the order they show them.
NODE_KINDS: tuple[str, ...] = tuple(NEW_NODE_DEFAULTS)
#: The most subgraph owners a request's ``in`` parameters may name.
MAX_LEVEL_DEPTH = 8


@dataclass(frozen=True, slots=True)
class PageState:
    """What the editor page says about itself with a request, as the edge read it.

    ``revision``: the draft revision the page shows (an edit is made at it); ``level``: the
    document level it shows; ``selected``: the node whose form it shows (an edit's
    ``selected``, the page's ``?node=``); ``token``: the node form's token, when the node form
    posted; ``shown_canvas``/``shown_structure``: the keys of the canvas and of the node and
    edge lists it shows (an answer leaves out a piece whose key is unchanged); ``json_hidden``:
    its JSON panel is closed; ``live``: it takes the answer as out-of-band pieces (htmx).
    """

    revision: int | None = None
    level: SubgraphPath = ()
    selected: str | None = None
    token: str | None = None
    shown_canvas: str | None = None
    shown_structure: str | None = None
    json_hidden: bool = False
    live: bool = False


@dataclass(frozen=True, slots=True)
class Swaps:
    """The pieces an out-of-band answer replaces beside those it always sends (revision, undo,
    errors, JSON error, freeze controls): each only when the page does not show it already, or
    when the edit changed it."""

    canvas: bool = False
    structure: bool = False
    node_panel: bool = False
    json_text: bool = False
    #: After **Add node**: the id field, emptied.
    add_node_id: bool = False
    #: After **Add edge** (the lists unchanged): the edge's ``to`` and label choices.
    edge_choices: bool = False


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """One validation error in the page's list: said for people, and the node it is about
    (linked to its form when the node is in the draft, focusing the field in error)."""

    message: str
    friendly: str
    code: str
    node: str | None
    url: str | None
    #: The control the link focuses: the field in error (``""``: the form's first).
    focus: str = ""
    #: The one-click fix of a branch pairing error.
    fix: hints.FixView | None = None


@dataclass(frozen=True, slots=True)
class HeldRow:
    """A field the editor could not save, in the error list: where it is and why."""

    node: str
    field: str
    level: list[str]
    message: str
    label: str
    url: str
    #: The control the link focuses: the field holding what was typed.
    focus: str = ""


@dataclass(frozen=True, slots=True)
class TrailStep:
    """One step of the level trail: a subgraph owner and the query string down to its body."""

    owner: str
    query: str


#: An edge of the level shown, with its place in the list and its problem (``from`` is a
#: keyword, hence the functional form).
EdgeRow = TypedDict(
    "EdgeRow",
    {"from": str, "to": str, "label": str, "index": int, "problem": str | None},
    total=False,
)


@dataclass(frozen=True, slots=True)
class EditorAnswer:
    """What one render of the editor page (or of its fragments) shows, with what to swap.

    The template reads its fields by name (:meth:`context`). ``swap`` is ``None`` when the
    page or a fragment is rendered in place; ``redirect`` is where a browser without htmx goes
    after an edit that worked (``""``: the page is rendered instead). ``canvas`` is drawn only
    when the answer shows it."""

    checked: CheckedDraft
    page_url: str
    selected: str | None
    level: SubgraphPath
    node: node_form.NodeFormView | None
    error_rows: list[ErrorRow]
    held_rows: list[HeldRow]
    #: The hints under the verdict: shown and counted apart, never blocking.
    hint_list: hints.HintList
    edges: list[EdgeRow]
    level_nodes: list[dict[str, Any]]
    level_ids: list[str]
    level_trail: list[TrailStep]
    level_query: str
    selected_quoted: str
    case_names: dict[str, list[str]]
    structure_key: str
    malformed_friendly: str
    json_at: tuple[int, int] | None
    kinds: tuple[str, ...] = NODE_KINDS
    canvas: DrawnCanvas | None = None
    delete_counts: dict[str, int] | None = None
    swap: Swaps | None = None
    redirect: str = ""
    stale: Stale | None = None
    stale_rejected: str = ""
    frozen: Frozen | None = None
    undo_notice: str = ""
    history_error: str = ""
    freeze_error: str = ""
    edge_error: str = ""
    add_node_error: str = ""
    #: What **Freeze** asks before it freezes (a graph without a node).
    freeze_question: str = ""
    #: What **Add node** showed when it was refused: its kind and id, typed again.
    add_node_data: Mapping[str, str] = field(default_factory=dict)

    def context(self) -> dict[str, Any]:
        """The template's variables: one per field."""
        return {item.name: getattr(self, item.name) for item in fields(self)}


def show_page(
    user: ActingUser, slug: str, page_url: str, page: PageState, *, whole: bool
) -> EditorAnswer:
    """The editor page of ``slug`` as it is now (raises ``UnknownDocument``), at the node and
    level ``page`` names; ``whole``: the page or its workspace (with the canvas), else one of
    the fragments that leave the canvas out (the node form, the JSON text)."""
    checked = check_draft(open_draft(user, slug, page_url))
    return _built(checked, page, page.selected, whole=whole)


def answer_edit(
    result: CheckedDraft | Refused | Stale,
    page: PageState,
    node_id: str | None,
    *,
    node_panel: bool = True,
    json_text: bool = True,
    problems: Mapping[str, str] | None = None,
    typed: Mapping[str, str] | None = None,
    json_error: str | None = None,
    frozen: Frozen | None = None,
    undo_notice: str = "",
    history_error: str = "",
    freeze_error: str = "",
    edge_error: str = "",
    add_node_error: str = "",
    add_node_data: Mapping[str, str] | None = None,
    add_node_id: bool = False,
    edge_added: bool = False,
    freeze_question: str = "",
) -> EditorAnswer:
    """The answer to an edit: for a live page the pieces to swap, leaving out the canvas and
    the lists when the page shows them already and the node panel and JSON text unless told
    (``node_panel``, ``json_text``); else the page when something needs saying, or where to go.
    ``node_id`` is the node whose form the answer shows; ``problems`` and ``typed`` are its
    fields' refusals and the text typed in them (a :class:`Refused` edit adds its own)."""
    stale = result if isinstance(result, Stale) else None
    checked = result if isinstance(result, CheckedDraft) else result.editor
    if isinstance(result, Refused):
        problems = {**(problems or {}), result.field: result.message}
    refused = history_error or freeze_error or edge_error or add_node_error or freeze_question
    built = _built(
        checked,
        page,
        node_id,
        problems=problems,
        typed=typed,
        token=page.token,
        whole=False,
    )
    swap = None
    redirect = ""
    if page.live:
        swap = Swaps(
            canvas=page.shown_canvas != checked.canvas_key or not checked.canvas_key,
            structure=page.shown_structure != built.structure_key,
            node_panel=node_panel,
            json_text=json_text and not page.json_hidden,
            add_node_id=add_node_id,
            edge_choices=edge_added,
        )
    elif not (stale or problems or typed or json_error or frozen or refused):
        redirect = built.page_url
        if node_id:
            redirect = node_link(built.page_url, node_id, built.level)
        elif built.level:
            redirect = f"{built.page_url}?{level_query(built.level)[1:]}"
    # The canvas and the Delete question are drawn only where the answer shows them: the
    # canvas piece of a live answer, or the whole page when one is rendered.
    whole_page = swap is None and not redirect
    drawn = (swap is not None and swap.canvas) or whole_page
    return replace(
        built,
        canvas=draw_canvas(checked) if drawn else None,
        delete_counts=_delete_counts(checked) if whole_page else None,
        swap=swap,
        redirect=redirect,
        stale=stale,
        stale_rejected=_rejected(stale),
        frozen=frozen,
        undo_notice=undo_notice,
        history_error=history_error,
        freeze_error=freeze_error,
        edge_error=edge_error,
        add_node_error=add_node_error,
        add_node_data=add_node_data or {},
        freeze_question=freeze_question,
    )


# --- Building it -------------------------------------------------------------------------------


def _built(
    checked: CheckedDraft,
    page: PageState,
    node_id: str | None,
    *,
    problems: Mapping[str, str] | None = None,
    typed: Mapping[str, str] | None = None,
    token: str | None = None,
    whole: bool,
) -> EditorAnswer:
    """The answer's rows and forms for ``checked`` at the level ``page`` shows (the top one
    when the draft has no such level), with the node form of ``node_id``."""
    level = page.level
    shown = checked.level_value(level) if level else checked.shown_value
    if shown is None:
        level = ()
        shown = checked.shown_value
    page_url = checked.page_url
    edges = _edge_rows(checked, shown, level)
    nodes = list(shown["nodes"]) if shown is not None else []
    malformed = _malformed_error(checked)
    return EditorAnswer(
        checked=checked,
        page_url=page_url,
        selected=node_id,
        level=level,
        node=_node_form(checked, node_id, level, problems=problems, typed=typed, token=token),
        error_rows=_error_rows(checked),
        held_rows=[_held_row(checked, entry) for entry in checked.held],
        hint_list=hints.hint_list(checked),
        edges=edges,
        level_nodes=nodes,
        level_ids=[node["payload"]["id"] for node in nodes],
        level_trail=[
            TrailStep(owner, level_query(level[: index + 1])) for index, owner in enumerate(level)
        ],
        level_query=level_query(level),
        selected_quoted=quote(node_id or "", safe="") + level_query(level),
        case_names=_case_names(shown),
        structure_key=_structure_key(checked, edges, node_id, level, nodes),
        malformed_friendly=messages.for_people(malformed),
        json_at=(malformed["line"], malformed["column"]) if "line" in malformed else None,
        canvas=draw_canvas(checked) if whole else None,
        delete_counts=_delete_counts(checked) if whole else None,
    )


def _delete_counts(checked: CheckedDraft) -> dict[str, int] | None:
    """What **Delete** asks about (only an author sees the question)."""
    return managing.what_delete_takes(checked.slug) if checked.can_edit else None


def _rejected(stale: Stale | None) -> str:
    """The change a stale page sent, for the person to copy."""
    if stale is None:
        return ""
    return stale.rejected or "\n".join(f"{name}: {value}" for name, value in stale.rejected_fields)


def _malformed_error(checked: CheckedDraft) -> ErrorData:
    """Why the draft cannot be read, as the JSON panel says it (empty when it can be)."""
    for error in checked.errors:
        if error["code"] in ("malformed_document", "payload_too_large"):
            return {**error, "code": "malformed_document"}
    return {"code": "malformed_document", "message": ""}


def _error_rows(checked: CheckedDraft) -> list[ErrorRow]:
    rows = []
    for error in checked.errors:
        where = tuple(error.get("subgraph", ()))
        target = error_node(error)
        found = target is not None and checked.node(target, where) is not None
        rows.append(
            ErrorRow(
                message=error["message"],
                friendly=messages.for_people(error),
                code=error["code"],
                node=target,
                url=node_link(checked.page_url, target, where)
                if found and target is not None
                else None,
                focus=hints.error_focus(checked, error, where),
                fix=hints.error_fix(checked, error, where),
            )
        )
    return rows


def _edge_rows(
    checked: CheckedDraft, shown: dict[str, Any] | None, level: SubgraphPath
) -> list[EdgeRow]:
    if shown is None:
        return []
    problems = {
        (error["edge"]["from"], error["edge"]["to"]): messages.for_people(error)
        for error in checked.errors
        if isinstance(error.get("edge"), dict) and tuple(error.get("subgraph", ())) == level
    }
    rows: list[EdgeRow] = []
    for index, edge in enumerate(shown["edges"]):
        row: EdgeRow = {"from": edge["from"], "to": edge["to"]}
        if "label" in edge:
            row["label"] = edge["label"]
        row["index"] = index
        row["problem"] = problems.get((edge["from"], edge["to"]))
        rows.append(row)
    return rows


def _held_row(checked: CheckedDraft, entry: dict[str, Any]) -> HeldRow:
    level = tuple(entry.get("level", ()))
    return HeldRow(
        node=entry["node"],
        field=entry["field"],
        level=list(level),
        message=messages.held_phrase(entry["message"]),
        label=_field_label(checked, entry),
        url=node_link(checked.page_url, entry["node"], level),
        focus=hints.held_focus(checked, entry),
    )


def _field_label(checked: CheckedDraft, entry: dict[str, Any]) -> str:
    node = checked.node(entry["node"], tuple(entry.get("level", ())))
    if node is not None:
        for form_field in node_form.form_fields(node["kind"]):
            if form_field.key == entry["field"]:
                return form_field.label
    return str(entry["field"])


def _case_names(shown: dict[str, Any] | None) -> dict[str, list[str]]:
    if shown is None:
        return {}
    return {
        node["payload"]["id"]: [case.get("name", "") for case in node["payload"]["cases"]]
        for node in shown["nodes"]
        if node["kind"] == "branch"
    }


def _structure_key(
    checked: CheckedDraft,
    edges: list[EdgeRow],
    selected: str | None,
    level: SubgraphPath,
    nodes: list[dict[str, Any]],
) -> str:
    """Names what the node and edge lists show (they show nothing else)."""
    shown = [
        checked.can_edit,
        selected,
        level,
        checked.value is not None,
        checked.greyed,
        [(node["kind"], node["payload"]["id"]) for node in nodes],
        edges,
    ]
    # repr, not JSON: the same data gives the same text, and it costs a tenth of json.dumps.
    return hashlib.sha256(repr(shown).encode("utf-8", "surrogatepass")).hexdigest()[:32]


# --- The node form ------------------------------------------------------------------------------


def _node_form(
    checked: CheckedDraft,
    node_id: str | None,
    level: SubgraphPath,
    *,
    problems: Mapping[str, str] | None = None,
    typed: Mapping[str, str] | None = None,
    token: str | None = None,
) -> node_form.NodeFormView | None:
    """What the node form shows: the stored values (or ``typed``, text not saved), errors and
    hints, and what the node receives and gives."""
    node = checked.node(node_id, level)
    if node is None:
        return None
    node_key = node["payload"]["id"]
    errors: dict[str, list[str]] = {}
    for error in checked.errors_of(node_key, level):
        key = node_form.field_key_of_error(error, node)
        errors.setdefault(key, []).append(messages.for_people(error))
    held = checked.held_for(node_key, level)
    shown_text = {**{key: entry["text"] for key, entry in held.items()}, **(typed or {})}
    refusals = {
        **{
            key: f"not saved: {messages.held_phrase(entry['message'])}"
            for key, entry in held.items()
        },
        **(problems or {}),
    }
    for key, message in refusals.items():
        errors.setdefault(key, []).append(message)
    if not (token and token.isascii() and token.isalnum()):
        named = repr((level, node_key)).encode("utf-8", "surrogatepass")
        token = hashlib.sha256(named).hexdigest()[:12]
    return node_form.node_form(
        node,
        token=token,
        level=level,
        errors=errors,
        typed=shown_text,
        other_ids=checked.node_ids_at(level),
        agents=_agents,
        tools=_tools,
        tool_labels=_tool_labels,
        hints=hints.field_hints(checked, node_key, level),
        wiring=hints.node_wiring(checked, node_key, level),
    )


def _agents() -> list[node_form.AgentChoice]:
    return [
        node_form.AgentChoice(agent.agent, agent.name)
        for agent in agents.list_agents(limit=200).items
    ]


def _tools() -> list[str]:
    return list(installation.tools().names())


def _tool_labels() -> dict[str, tuple[str, str]]:
    return {
        spec.name: (
            spec.effect.value + (f", MCP server {spec.server}" if spec.server else ""),
            spec.description,
        )
        for spec in installation.tools().all()
    }
