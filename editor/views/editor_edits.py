"""The edits the editor page posts: the node form, nodes and edges, **Relabel** (a branch
edge's one-click fix), the JSON tab, held fields, **Freeze** and **Discard changes**. Each
reads the draft once (:func:`guarded`), translates the form into one named edit of
:mod:`editor.services.documents.editor_edits`, and renders the answer
(:func:`editor.views.editor.respond`).
"""

from __future__ import annotations

from django.http import HttpResponse

from editor.services.documents import editor_edits
from editor.services.documents.editing import ParsedDraft
from editor.services.documents.editor_page import PageState
from editor.views.editor import guarded, respond
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
    "relabel_edge",
    "remove_edge",
    "remove_node",
]


@guarded
def edit_node(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """The node form: every field, posted as the person types."""
    answer = editor_edits.save_node_form(request.user, draft, page, request.POST)
    return respond(request, answer)


@guarded
def drop_held(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """Discard a field held back: the node keeps its saved value (undoable)."""
    node_id = request.POST.get("node", "")
    field = request.POST.get("field", "")
    answer = editor_edits.drop_held(request.user, draft, page, node_id=node_id, field=field)
    return respond(request, answer)


@guarded
def new_node(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Add node**: a kind and an id, starting from the defaults."""
    kind = request.POST.get("kind", "")
    node_id = request.POST.get("id", "")
    answer = editor_edits.add_node(request.user, draft, page, kind=kind, node_id=node_id)
    return respond(request, answer)


@guarded
def new_node_after(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """The canvas palette (or ``N``): a node of a kind next to the chosen one, connected."""
    kind = request.POST.get("kind", "")
    after = request.POST.get("after", "")
    answer = editor_edits.add_node_after(request.user, draft, page, kind=kind, after=after)
    return respond(request, answer)


@guarded
def remove_node(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Delete node**, and its edges (undoable)."""
    node_id = request.POST.get("node", "")
    return respond(request, editor_edits.delete_node(request.user, draft, page, node_id=node_id))


@guarded
def new_edge(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Add edge**: from, to and a label (the source's case, when it is a branch)."""
    source = request.POST.get("from", "")
    target = request.POST.get("to", "")
    label = request.POST.get("label", "").strip() or None
    answer = editor_edits.add_edge(
        request.user, draft, page, source=source, target=target, label=label
    )
    return respond(request, answer)


@guarded
def remove_edge(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Delete edge** (by its place in the edge list; undoable)."""
    number = request.POST.get("edge", "")
    return respond(request, editor_edits.delete_edge(request.user, draft, page, number=number))


@guarded
def relabel_edge(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Relabel**: a branch edge's label set to one of its cases (an error's one-click fix)."""
    answer = editor_edits.relabel_edge(
        request.user,
        draft,
        page,
        number=request.POST.get("edge", ""),
        label=request.POST.get("label", ""),
        source=request.POST.get("from", ""),
        target=request.POST.get("to", ""),
    )
    return respond(request, answer)


@guarded
def edit_json(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """The **JSON** tab: the whole draft, saved as typed."""
    text = request.POST.get("text", "")
    return respond(request, editor_edits.save_json(request.user, draft, page, text))


@guarded
def freeze(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Freeze**: the draft becomes the next version; its hash is shown."""
    note = request.POST.get("note", "")
    empty_ok = request.POST.get("empty_ok") == "1"
    answer = editor_edits.freeze_draft(request.user, draft, page, note, empty_ok=empty_ok)
    return respond(request, answer)


@guarded
def discard(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Discard changes**: back to the latest frozen version (undoable)."""
    return respond(request, editor_edits.discard(request.user, draft, page))
