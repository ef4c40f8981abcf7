"""The edits the editor page makes, each by its name: the node form, nodes and edges, held
fields, **Relabel** (the one-click fix of a branch edge's label), the **JSON** tab, **Freeze**,
**Discard changes**, **Undo**, **Redo** and restoring a revision.

Each takes the acting user, the draft as the request read it (:func:`.editing.open_draft`),
what the page says about itself (:class:`.editor_page.PageState`) and the values posted, makes
one edit of the draft's wire value with :mod:`editor.graph.edits` through
:func:`.editing.apply_edit` (at the revision the page read, with a one-line summary for the
history), and answers with what the page shows next (:class:`.editor_page.EditorAnswer`).

The node form is saved field by field (:func:`save_node_form`): the fields that can be read are
saved, and a field that cannot (text that is not JSON, a count that is not a whole number, an id
already in use) is held back with what was typed. A held field counts as an error and blocks
**Freeze** until it is fixed, or discarded from the error list (:func:`drop_held`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from editor.graph import SubgraphPath, edits
from editor.graph.edits import EditRefused
from editor.presentation import node_form
from editor.presentation.typed import whole_number
from editor.services import agents, documents
from editor.services.access import ActingUser
from editor.services.documents import editing
from editor.services.documents.editing import (
    CheckedDraft,
    ParsedDraft,
    Refused,
    Stale,
    apply_edit,
    check_draft,
    discard_changes,
    load_checked_draft,
    save_text,
    step_history,
)
from editor.services.documents.editor_page import NODE_KINDS, EditorAnswer, PageState, answer_edit
from editor.services.errors import InvalidGraph, InvalidRequest, StaleDraft

__all__ = [
    "add_edge",
    "add_node",
    "add_node_after",
    "delete_edge",
    "delete_node",
    "discard",
    "drop_held",
    "freeze_draft",
    "relabel_edge",
    "restore_version",
    "save_json",
    "save_node_form",
    "step",
]

#: Form fields that are bookkeeping, not part of the change a person made.
_NOT_A_CHANGE = {
    "revision",
    "csrfmiddlewaretoken",
    "token",
    "case_count",
    "shown_canvas",
    "shown_structure",
}

Value = dict[str, Any]


# --- The node form ------------------------------------------------------------------------------


def save_node_form(
    user: ActingUser, draft: ParsedDraft, page: PageState, form: Mapping[str, str]
) -> EditorAnswer:
    """The node form of ``form["node"]`` at the page's level, every field as posted: a rename
    tried first (an id in use is held back, the rest saved under the old one), then each field
    read (one that cannot be read is held back with what was typed), the held fields of that
    node replaced, and one summary for the history that names what changed."""
    node_id = form.get("node", "")
    level = page.level
    node = draft.node(node_id, level)
    submitted = [(key, form[key]) for key in form if key not in _NOT_A_CHANGE]
    if node is None:
        # Deleted elsewhere: a stale tab learns so; otherwise say the node is gone.
        def missing(value: Value) -> Value:
            raise EditRefused("", f"there is no node `{node_id}` any more")

        result = apply_edit(user, draft, page.revision, missing, submitted=submitted)
        shown = result if isinstance(result, Stale) else _checked(result)
        return answer_edit(shown, page, None)
    new_id = form.get("id", node_id)
    read = node_form.read_node_form(node["kind"], form, agent_by_name=agents.agent_hash_by_name)
    held_id = _refused_rename(draft, node_id, new_id, page)
    kept_id = node_id if held_id else new_id
    refusals = {**read.problems, **({"id": held_id} if held_id else {})}
    typed = {**read.typed, "id": new_id}
    mine = [
        {"level": list(level), "node": kept_id, "field": key, "text": typed[key], "message": why}
        for key, why in refusals.items()
    ]
    others = [
        entry
        for entry in draft.held
        if list(entry.get("level", [])) != list(level) or entry["node"] not in (node_id, kept_id)
    ]
    summary, coalesce = _form_summary(node, kept_id, read.fields)
    if mine:
        summary += "; held back " + ", ".join(f"`{entry['field']}`" for entry in mine)
    result = apply_edit(
        user,
        draft,
        page.revision,
        lambda value: edits.update_node(value, node_id, read.fields, new_id=kept_id, level=level),
        submitted=submitted,
        summary=summary,
        held=others + mine,
        coalesce=coalesce,
    )
    if isinstance(result, Refused):
        typed = {**read.shown, **read.typed}
        return answer_edit(result, page, node_id, node_panel=False, typed=typed)
    # Drawn again after a button of the form (a case, a schema builder's field) or a change
    # of what a schema builder shows (its mode, a field's type).
    structural = "add_case" in form or "remove_case" in form or read.redraw
    shown_id = kept_id if isinstance(result, CheckedDraft) else node_id
    return answer_edit(result, page, shown_id, node_panel=structural, typed=read.shown or None)


def _refused_rename(draft: ParsedDraft, node_id: str, new_id: str, page: PageState) -> str:
    """Why renaming ``node_id`` to ``new_id`` would be refused (``""``: it would not)."""
    if new_id == node_id:
        return ""
    try:
        edits.update_node(draft.value or {}, node_id, {}, new_id=new_id, level=page.level)
    except EditRefused as refused:
        return str(refused)
    return ""


def _form_summary(node: Value, new_id: str, fields: dict[str, Any]) -> tuple[str, str]:
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


def drop_held(
    user: ActingUser, draft: ParsedDraft, page: PageState, *, node_id: str, field: str
) -> EditorAnswer:
    """Discard a field held back: the node keeps its saved value (undoable)."""
    kept = [
        entry
        for entry in draft.held
        if not (
            entry["node"] == node_id
            and entry["field"] == field
            and list(entry.get("level", [])) == list(page.level)
        )
    ]
    result = apply_edit(
        user,
        draft,
        page.revision,
        lambda value: value,
        submitted=[("discard typed text", f"{node_id} {field}")],
        summary=f"discarded the text typed in `{field}` of `{node_id}`",
        held=kept,
    )
    return answer_edit(result, page, page.selected, undo_notice="Discarded the typed text.")


# --- Nodes and edges ----------------------------------------------------------------------------


def add_node(
    user: ActingUser, draft: ParsedDraft, page: PageState, *, kind: str, node_id: str
) -> EditorAnswer:
    """**Add node**: a kind and an id, starting from the defaults (a map's ``over`` the one list
    flowing into it, when one does)."""

    def change(value: Value) -> Value:
        value = edits.add_node(value, kind, node_id, level=page.level)
        return _with_over(value, kind, node_id, level=page.level)

    result = apply_edit(
        user,
        draft,
        page.revision,
        change,
        submitted=[("add node", f"{kind} {node_id}")],
        summary=f"added {kind} node `{node_id}`",
    )
    if isinstance(result, Refused):
        return answer_edit(
            result.editor,
            page,
            None,
            add_node_error=result.message,
            add_node_data={"kind": kind, "id": node_id},
        )
    shown = node_id if isinstance(result, CheckedDraft) else None
    return answer_edit(result, page, shown, add_node_id=True)


def add_node_after(
    user: ActingUser, draft: ParsedDraft, page: PageState, *, kind: str, after: str
) -> EditorAnswer:
    """The canvas palette (or ``N``): a node of a kind next to the chosen one, already connected
    from it (labelled with the first case that has no edge yet, when it is a branch); a map's
    ``over`` the one list flowing into it, when one does."""
    level = page.level
    current = draft.level_value(level)
    source = draft.node(after, level) if after else None
    label = None
    if source is not None and source["kind"] == "branch" and current is not None:
        used = {edge.get("label") for edge in current["edges"] if edge["from"] == after}
        names = [case.get("name", "") for case in source["payload"].get("cases", ())]
        label = next((name for name in names if name not in used), names[0] if names else None)
    chosen: dict[str, str] = {}

    def change(value: Value) -> Value:
        chosen["id"] = new_id = (
            edits.free_id(value, kind, level=level) if kind in NODE_KINDS else kind
        )
        value = edits.add_node(value, kind, new_id, level=level)
        if source is not None:
            value = edits.add_edge(value, after, new_id, label, level=level)
        return _with_over(value, kind, new_id, level=level)

    summary = f"added {kind} node" + (f" after `{after}`" if source is not None else "")
    result = apply_edit(
        user,
        draft,
        page.revision,
        change,
        submitted=[("add node", f"{kind} after {after}")],
        summary=summary,
    )
    if isinstance(result, Refused):
        return answer_edit(result.editor, page, after or None, add_node_error=result.message)
    shown = chosen.get("id") if isinstance(result, CheckedDraft) else None
    return answer_edit(result, page, shown)


def _with_over(value: Value, kind: str, node_id: str, *, level: SubgraphPath = ()) -> Value:
    """A new map reads its ``over`` from what flows into it (:func:`edits.choose_over`)."""
    return edits.choose_over(value, node_id, level=level) if kind == "map" else value


def delete_node(
    user: ActingUser, draft: ParsedDraft, page: PageState, *, node_id: str
) -> EditorAnswer:
    """**Delete node**, its edges and its held fields (undoable)."""
    held = [
        entry
        for entry in draft.held
        if entry["node"] != node_id or tuple(entry.get("level", ())) != page.level
    ]
    result = apply_edit(
        user,
        draft,
        page.revision,
        lambda value: edits.delete_node(value, node_id, level=page.level),
        submitted=[("delete node", node_id)],
        summary=f"deleted node `{node_id}`",
        held=held,
    )
    return answer_edit(result, page, None, undo_notice=f"Deleted node {node_id}.")


def add_edge(
    user: ActingUser,
    draft: ParsedDraft,
    page: PageState,
    *,
    source: str,
    target: str,
    label: str | None,
) -> EditorAnswer:
    """**Add edge**: from, to and a label (the source's case, when it is a branch)."""
    if not source or not target:
        message = "Choose the node the edge comes from and the node it goes to."
        return answer_edit(check_draft(draft), page, None, edge_error=message)
    source_node = draft.node(source, page.level)
    if source_node is not None and source_node["kind"] != "branch":
        label = None  # only a branch's edges carry a label: the case they are taken for
    result = apply_edit(
        user,
        draft,
        page.revision,
        lambda value: edits.add_edge(value, source, target, label, level=page.level),
        submitted=[("add edge", f"{source} -> {target} {label or ''}".strip())],
        summary=f"added edge `{source}` → `{target}`" + (f" [{label}]" if label else ""),
    )
    if isinstance(result, Refused):
        return answer_edit(result.editor, page, page.selected, edge_error=result.message)
    return answer_edit(result, page, page.selected, edge_added=True)


def delete_edge(
    user: ActingUser, draft: ParsedDraft, page: PageState, *, number: str
) -> EditorAnswer:
    """**Delete edge** by its place in the edge list (``number``, as posted; undoable)."""
    index = whole_number(number.strip(), maximum=10**9)
    index = -1 if index is None else index
    current = draft.level_value(page.level)
    listed = current["edges"] if current is not None else []
    named = listed[index] if 0 <= index < len(listed) else None
    what = f"`{named['from']}` → `{named['to']}`" if named else f"number {number}"
    result = apply_edit(
        user,
        draft,
        page.revision,
        lambda value: edits.delete_edge(value, index, level=page.level),
        submitted=[("delete edge", number)],
        summary=f"deleted edge {what}",
    )
    if isinstance(result, Refused):
        return answer_edit(result.editor, page, page.selected, edge_error=result.message)
    shown = f"{named['from']} → {named['to']}" if named else ""
    return answer_edit(result, page, page.selected, undo_notice=f"Deleted edge {shown}.")


def relabel_edge(
    user: ActingUser,
    draft: ParsedDraft,
    page: PageState,
    *,
    number: str,
    label: str,
    source: str,
    target: str,
) -> EditorAnswer:
    """**Relabel**: the label of the branch edge at ``number`` (its place in the edge list, as
    posted) set to one of the branch's cases; the one-click fix of an unlabelled edge and of a
    label naming no case (:func:`.hints.error_fix`). Refused when that edge no longer goes
    from ``source`` to ``target``."""
    index = whole_number(number.strip(), maximum=10**9)
    result = apply_edit(
        user,
        draft,
        page.revision,
        lambda value: edits.relabel_edge(
            value,
            -1 if index is None else index,
            label,
            source=source,
            target=target,
            level=page.level,
        ),
        submitted=[("relabel edge", f"{source} -> {target} {label}")],
        summary=f"labelled edge `{source}` → `{target}` [{label}]",
    )
    if isinstance(result, Refused):
        return answer_edit(result.editor, page, page.selected, edge_error=result.message)
    notice = f"Labelled {source} → {target} [{label}]."
    return answer_edit(result, page, page.selected, undo_notice=notice)


# --- The whole draft ----------------------------------------------------------------------------


def save_json(user: ActingUser, draft: ParsedDraft, page: PageState, text: str) -> EditorAnswer:
    """The **JSON** tab: the whole draft, saved as typed."""
    result = save_text(user, draft, page.revision, text)
    checked = result.editor if isinstance(result, Stale) else result
    return answer_edit(result, page, page.selected, json_text=False, json_error=checked.malformed)


#: What **Freeze** asks before freezing a graph without a node.
EMPTY_QUESTION = (
    "This graph has no nodes yet: a version of it would do nothing when run. "
    "Freeze it all the same?"
)


def freeze_draft(
    user: ActingUser, draft: ParsedDraft, page: PageState, note: str, *, empty_ok: bool = False
) -> EditorAnswer:
    """**Freeze**: the draft becomes the next version; the answer shows its hash (a link to
    the version, with **Start run** and **Test run** beside it). A graph without a node is
    frozen only once the person says so (``empty_ok``): the answer asks first."""
    checked = check_draft(draft)
    if not empty_ok and draft.value is not None and not draft.value["nodes"]:
        return answer_edit(checked, page, None, freeze_question=EMPTY_QUESTION)
    try:
        frozen = documents.freeze(user, draft.slug, expected_revision=page.revision, note=note)
    except StaleDraft:
        return answer_edit(Stale(checked, rejected_fields=[("freeze", note)]), page, None)
    except InvalidGraph:
        message = "Fix the errors listed before freezing."
        return answer_edit(checked, page, None, freeze_error=message)
    except InvalidRequest as error:  # a NUL in the note
        return answer_edit(checked, page, None, freeze_error=str(error))
    now = load_checked_draft(user, draft.slug, draft.page_url)
    return answer_edit(now, page, None, node_panel=False, json_text=False, frozen=frozen)


def discard(user: ActingUser, draft: ParsedDraft, page: PageState) -> EditorAnswer:
    """**Discard changes**: back to the latest frozen version (undoable)."""
    result = discard_changes(user, draft, page.revision)
    if result is None:
        message = "Nothing frozen yet: nothing to go back to."
        return answer_edit(check_draft(draft), page, None, freeze_error=message)
    return answer_edit(result, page, page.selected, undo_notice="Discarded.")


def restore_version(user: ActingUser, draft: ParsedDraft, number: str) -> str:
    """**Restore** on the versions list: the draft becomes that version (undoable in the
    editor); what to say. Raises ``InvalidRequest`` for a number that is no version."""
    wanted = whole_number(number.strip(), minimum=1)
    versions = documents.get_document(draft.slug).versions or []
    found = next((version for version in versions if version.version == wanted), None)
    if found is None:
        raise InvalidRequest(f"there is no version {number.strip()} to restore", "version")
    result = editing.restore_version(user, draft, found.graph, found.version)
    if isinstance(result, Stale):  # changed between reading and saving: say so, nothing lost
        raise InvalidRequest("the draft changed at that moment: restore it again", "version")
    return f"Restored version {found.version} into the draft. Undo takes it back."


def step(
    user: ActingUser, draft: ParsedDraft, page: PageState, how: str, number: str | None = None
) -> EditorAnswer:
    """**Undo**, **Redo**, or restore the revision ``number`` (as posted) of the **History**
    (``how``: ``undo``, ``redo``, ``restore``); each is a new revision."""
    restored = None
    if how == "restore":
        restored = whole_number((number or "").strip(), minimum=1)
        if restored is None:
            message = "Choose a revision to restore."
            return answer_edit(check_draft(draft), page, None, history_error=message)
    try:
        result = step_history(user, draft, page.revision, how, restored)
    except InvalidRequest as error:
        return answer_edit(check_draft(draft), page, None, history_error=str(error))
    notice = {"undo": "Undone.", "redo": "Redone."}.get(how, f"Restored revision {restored}.")
    return answer_edit(result, page, page.selected, undo_notice=notice)


def _checked(result: CheckedDraft | Refused) -> CheckedDraft:
    return result.editor if isinstance(result, Refused) else result
