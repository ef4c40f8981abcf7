"""The edits the editor page posts: the node form, nodes and edges, the JSON tab, held fields,
**Freeze** and **Discard changes**. Each reads the draft once (:func:`guarded`), makes one
edit through :mod:`editor.services.documents.editing` with a one-line summary for the history, and
answers with the page's live pieces (:func:`editor.views.editor.answer`).

The node form is saved field by field: the fields that can be read are saved, and a field that
cannot (text that is not JSON, a count that is not a whole number, an id already in use) is held
back with what was typed. A held field counts as an error and blocks **Freeze** until it is
fixed, or discarded from the error list.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse

from editor.graph.edits import (
    NEW_NODE_DEFAULTS,
    EditRefused,
    add_edge,
    add_node,
    choose_over,
    delete_edge,
    delete_node,
    free_id,
    update_node,
)
from editor.presentation import node_form
from editor.presentation.typed import whole_number
from editor.services import agents, documents
from editor.services.documents import editing
from editor.services.documents.editing import CheckedDraft, ParsedDraft, Refused, Stale
from editor.services.errors import InvalidGraph, InvalidRequest, StaleDraft
from editor.views.editor import (
    PAGE,
    answer,
    apply,
    guarded,
    leave_out_shown,
    level_of,
    page_context,
    revision_of,
    selected_of,
)
from editor.views.htmx import HtmxHttpRequest

__all__ = [
    "discard",
    "drop_held",
    "edit_json",
    "edit_node",
    "freeze",
    "new_edge",
    "new_node",
    "new_node_after",
    "remove_edge",
    "remove_node",
]

KINDS = tuple(NEW_NODE_DEFAULTS)
#: Form fields that are bookkeeping, not part of the change a person made.
_NOT_A_CHANGE = {
    "revision",
    "csrfmiddlewaretoken",
    "token",
    "case_count",
    "shown_canvas",
    "shown_structure",
}


def _form_summary(node: dict[str, Any], new_id: str, fields: dict[str, Any]) -> tuple[str, str]:
    """What a node form post changed, for the history, and the key that merges a run of them."""
    node_id = node["payload"]["id"]
    labels = {field.key: field.label for field in node_form.form_fields(node["kind"])}
    changed = sorted(name for name, value in fields.items() if node["payload"].get(name) != value)
    parts = []
    if new_id != node_id:
        parts.append(f"renamed `{node_id}` → `{new_id}`")
    if changed:
        names = ", ".join(labels.get(name, name).lower() for name in changed)
        parts.append(f"changed the {names} of `{new_id}`")
    summary = "; ".join(parts) or f"edited `{new_id}`"
    return summary, f"node:{node_id}:{','.join(changed)}:{new_id != node_id}"


@guarded
def edit_node(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """The node form: every field, posted as the person types."""
    node_id = request.POST.get("node", "")
    level = level_of(request)
    node = draft.node(node_id, level)
    # `request.POST[key]` is the last value, as `items()` gives it; the stubs type it exactly.
    submitted = [(key, request.POST[key]) for key in request.POST if key not in _NOT_A_CHANGE]
    if node is None:
        # Deleted elsewhere: a stale tab learns so; otherwise say the node is gone.
        def missing(value: dict[str, Any]) -> dict[str, Any]:
            raise EditRefused("", f"there is no node `{node_id}` any more")

        result = apply(request, draft, missing, submitted=submitted)
        ed = result.editor if isinstance(result, (Refused, Stale)) else result
        return answer(request, result if isinstance(result, Stale) else ed, None)
    new_id = request.POST.get("id", node_id)
    structural = "add_case" in request.POST or "remove_case" in request.POST
    read = node_form.read_node_form(
        node["kind"], request.POST, agent_by_name=agents.agent_hash_by_name
    )
    held_id = None
    if new_id != node_id:
        try:
            update_node(draft.value or {}, node_id, {}, new_id=new_id, level=level)
        except EditRefused as refused:
            held_id = str(refused)
    kept_id = node_id if held_id else new_id
    where = list(level)
    mine = [
        {"level": where, "node": kept_id, "field": key, "text": read.typed[key], "message": message}
        for key, message in read.problems.items()
    ]
    if held_id:
        mine.append(
            {"level": where, "node": kept_id, "field": "id", "text": new_id, "message": held_id}
        )
    others = [
        entry
        for entry in draft.held
        if list(entry.get("level", [])) != where or entry["node"] not in (node_id, kept_id)
    ]
    summary, coalesce = _form_summary(node, kept_id, read.fields)
    if mine:
        summary += "; held back " + ", ".join(f"`{entry['field']}`" for entry in mine)
    result = apply(
        request,
        draft,
        lambda value: update_node(value, node_id, read.fields, new_id=kept_id, level=level),
        submitted=submitted,
        summary=summary,
        held=others + mine,
        coalesce=coalesce,
    )
    if isinstance(result, Refused):
        return answer(request, result, node_id, node_panel=False, typed=read.typed)
    shown = kept_id if isinstance(result, CheckedDraft) else node_id
    return answer(request, result, shown, node_panel=structural)


@guarded
def drop_held(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """Discard a field held back: the node keeps its saved value (undoable)."""
    node_id = request.POST.get("node", "")
    field = request.POST.get("field", "")
    where = list(level_of(request))
    kept = [
        entry
        for entry in draft.held
        if not (
            entry["node"] == node_id
            and entry["field"] == field
            and list(entry.get("level", [])) == where
        )
    ]
    result = apply(
        request,
        draft,
        lambda value: value,
        submitted=[("discard typed text", f"{node_id} {field}")],
        summary=f"discarded the text typed in `{field}` of `{node_id}`",
        held=kept,
    )
    selected = selected_of(request)
    return answer(request, result, selected, undo_notice="Discarded the typed text.")


@guarded
def new_node(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Add node**: a kind and an id, starting from the defaults."""
    kind = request.POST.get("kind", "")
    node_id = request.POST.get("id", "")
    level = level_of(request)

    def change(value: dict[str, Any]) -> dict[str, Any]:
        value = add_node(value, kind, node_id, level=level)
        return choose_over(value, node_id, level=level) if kind == "map" else value

    result = apply(
        request,
        draft,
        change,
        submitted=[("add node", f"{kind} {node_id}")],
        summary=f"added {kind} node `{node_id}`",
    )
    if isinstance(result, Refused):
        return answer(
            request, result.editor, None, add_node_error=result.message, add_node_data=request.POST
        )
    shown = node_id if isinstance(result, CheckedDraft) else None
    return answer(request, result, shown, oob_add_node=True)


@guarded
def new_node_after(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """The canvas palette (or ``N``): a node of a kind next to the chosen one, already connected
    from it (labelled with the first case that has no edge yet, when it is a branch)."""
    kind = request.POST.get("kind", "")
    after = request.POST.get("after", "")
    level = level_of(request)
    current = draft.level_value(level)
    source = draft.node(after, level) if after else None
    label = None
    if source is not None and source["kind"] == "branch" and current is not None:
        used = {edge.get("label") for edge in current["edges"] if edge["from"] == after}
        names = [case.get("name", "") for case in source["payload"].get("cases", ())]
        label = next((name for name in names if name not in used), names[0] if names else None)
    chosen: dict[str, str] = {}

    def change(value: dict[str, Any]) -> dict[str, Any]:
        chosen["id"] = node_id = free_id(value, kind, level=level) if kind in KINDS else kind
        value = add_node(value, kind, node_id, level=level)
        if source is not None:
            value = add_edge(value, after, node_id, label, level=level)
        return choose_over(value, node_id, level=level) if kind == "map" else value

    summary = f"added {kind} node" + (f" after `{after}`" if source is not None else "")
    result = apply(
        request,
        draft,
        change,
        submitted=[("add node", f"{kind} after {after}")],
        summary=summary,
    )
    if isinstance(result, Refused):
        return answer(request, result.editor, after or None, add_node_error=result.message)
    shown = chosen.get("id") if isinstance(result, CheckedDraft) else None
    return answer(request, result, shown)


@guarded
def remove_node(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Delete node**, and its edges (undoable)."""
    node_id = request.POST.get("node", "")
    level = level_of(request)
    held = [
        entry
        for entry in draft.held
        if entry["node"] != node_id or tuple(entry.get("level", ())) != level
    ]

    def change(value: dict[str, Any]) -> dict[str, Any]:
        return delete_node(value, node_id, level=level)

    summary = f"deleted node `{node_id}`"
    result = apply(
        request, draft, change, submitted=[("delete node", node_id)], summary=summary, held=held
    )
    return answer(request, result, None, undo_notice=f"Deleted node {node_id}.")


@guarded
def new_edge(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Add edge**: from, to and a label (the source's case, when it is a branch)."""
    source = request.POST.get("from", "")
    target = request.POST.get("to", "")
    label = request.POST.get("label", "").strip() or None
    if not source or not target:
        message = "Choose the node the edge comes from and the node it goes to."
        return answer(request, editing.check_draft(draft), None, edge_error=message)
    level = level_of(request)
    source_node = draft.node(source, level)
    if source_node is not None and source_node["kind"] != "branch":
        label = None  # only a branch's edges carry a label: the case they are taken for
    result = apply(
        request,
        draft,
        lambda value: add_edge(value, source, target, label, level=level),
        submitted=[("add edge", f"{source} -> {target} {label or ''}".strip())],
        summary=f"added edge `{source}` → `{target}`" + (f" [{label}]" if label else ""),
    )
    return _edge_answer(request, result, edge_added=True)


@guarded
def remove_edge(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Delete edge** (by its place in the edge list; undoable)."""
    raw = request.POST.get("edge", "")
    index = whole_number(raw.strip(), maximum=10**9)
    index = -1 if index is None else index
    level = level_of(request)
    current = draft.level_value(level)
    edges = current["edges"] if current is not None else []
    named = edges[index] if 0 <= index < len(edges) else None
    what = f"`{named['from']}` → `{named['to']}`" if named else f"number {raw}"

    def change(value: dict[str, Any]) -> dict[str, Any]:
        return delete_edge(value, index, level=level)

    result = apply(
        request, draft, change, submitted=[("delete edge", raw)], summary=f"deleted edge {what}"
    )
    shown = f"{named['from']} → {named['to']}" if named else ""
    return _edge_answer(request, result, undo_notice=f"Deleted edge {shown}.")


def _edge_answer(
    request: HtmxHttpRequest, result: CheckedDraft | Refused | Stale, **done: Any
) -> HttpResponse:
    """An edge edit's answer: its refusal beside **Add edge**, or the page with ``done``."""
    selected = selected_of(request)
    if isinstance(result, Refused):
        return answer(request, result.editor, selected, edge_error=result.message)
    return answer(request, result, selected, **done)


@guarded
def edit_json(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """The **JSON** tab: the whole draft, saved as typed."""
    text = request.POST.get("text", "")
    result = editing.save_text(request.user, draft, revision_of(request), text)
    selected = selected_of(request)
    ed = result.editor if isinstance(result, Stale) else result
    return answer(request, result, selected, json_text=False, json_error=ed.malformed)


@guarded
def freeze(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Freeze**: the draft becomes the next version; its hash is shown."""
    from django.shortcuts import render

    note = request.POST.get("note", "")
    ed = editing.check_draft(draft)
    try:
        frozen = documents.freeze(
            request.user, draft.slug, expected_revision=revision_of(request), note=note
        )
    except StaleDraft:
        return answer(request, Stale(ed, rejected_fields=[("freeze", note)]), None)
    except InvalidGraph:
        return answer(request, ed, None, freeze_error="Fix the errors listed before freezing.")
    except InvalidRequest as error:  # a NUL in the note
        return answer(request, ed, None, freeze_error=str(error))
    ed = editing.load_checked_draft(request.user, draft.slug, draft.page_url)
    context = page_context(request, ed, None, frozen=frozen)
    if request.htmx:
        context.update(oob=True, oob_node_panel=False, oob_json_text=False)
        leave_out_shown(request, ed, context)
        return render(request, f"{PAGE}#live", context)
    return render(request, PAGE, context)


@guarded
def discard(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Discard changes**: back to the latest frozen version (undoable)."""
    result = editing.discard_changes(request.user, draft, revision_of(request))
    if result is None:
        ed = editing.check_draft(draft)
        return answer(request, ed, None, freeze_error="Nothing frozen yet: nothing to go back to.")
    return answer(request, result, selected_of(request), undo_notice="Discarded.")
