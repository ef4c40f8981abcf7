"""``/graphs/<slug>/``: the editor page, and the edits its forms post.

Every edit answers an htmx request with ``editor/page.html#live``: out-of-band pieces
(revision, canvas, verdict and errors, structure, field errors, JSON, stale panel) that
replace their namesakes in place, leaving alone the control being typed in. Without
htmx, a successful edit redirects back to the page and a refused one renders it.

The two big pieces, the canvas and the node and edge lists, carry a key (``data-key``)
that ``editor.js`` posts back with each edit (``shown_canvas``, ``shown_structure``); an
answer leaves out a piece whose key is unchanged, so typing in a field re-sends neither
lists nor an unchanged drawing, and an unchanged drawing is not laid out at all.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.graph.edits import (
    NEW_NODE_DEFAULTS,
    EditRefused,
    add_edge,
    add_node,
    delete_edge,
    delete_node,
    update_node,
)
from editor.services import agents, documents, editing, installation, node_form
from editor.services.editing import Draft, Editor, Refused, Stale
from editor.services.errors import (
    InvalidGraph,
    InvalidRequest,
    NotAllowed,
    StaleDraft,
    UnknownDocument,
)

PAGE = "editor/page.html"
#: Form fields that are bookkeeping, not part of the change a person made.
_NOT_A_CHANGE = {
    "revision",
    "csrfmiddlewaretoken",
    "token",
    "case_count",
    "shown_canvas",
    "shown_structure",
}
KINDS = list(NEW_NODE_DEFAULTS)


def _open(request: HttpRequest, slug: str) -> Draft:
    try:
        return editing.open_draft(request.user, slug)
    except UnknownDocument:
        raise Http404("No such graph.") from None


def _revision(request: HttpRequest) -> int | None:
    return node_form.whole_number(request.POST.get("revision", ""), minimum=1)


def _node_form(
    ed: Editor,
    node_id: str | None,
    *,
    problems: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    token: str | None = None,
) -> dict[str, Any] | None:
    """What the node form shows: the stored values (or ``typed``, text not saved) and errors."""
    node = ed.node(node_id)
    if node is None:
        return None
    node_key = node["payload"]["id"]
    errors: dict[str, list[str]] = {}
    for error in ed.errors_of(node_key):
        errors.setdefault(node_form.field_key_of_error(error, node), []).append(error["message"])
    for key, message in (problems or {}).items():
        errors.setdefault(key, []).append(message)
    if not (token and token.isascii() and token.isalnum()):
        token = hashlib.sha256(node_key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return node_form.node_form(
        node,
        token=token,
        errors=errors,
        typed=typed,
        other_ids=ed.node_ids,
        agents=_agents,
        tools=_tools,
    )


def _case_names(ed: Editor) -> dict[str, list[str]]:
    if ed.value is None:
        return {}
    return {
        node["payload"]["id"]: [case.get("name", "") for case in node["payload"]["cases"]]
        for node in ed.value["nodes"]
        if node["kind"] == "branch"
    }


def _structure_key(ed: Editor, edges: list[dict[str, Any]], selected: str | None) -> str:
    """Names what the node and edge lists show (they show nothing else)."""
    shown = [
        ed.can_edit,
        selected,
        ed.value is not None,
        [(node["kind"], node["payload"]["id"]) for node in ed.value["nodes"]] if ed.value else [],
        edges,
        _case_names(ed),
    ]
    # repr, not JSON: the same data gives the same text, and it costs a tenth of json.dumps.
    return hashlib.sha256(repr(shown).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _agents() -> list[node_form.AgentChoice]:
    return [
        node_form.AgentChoice(agent.agent, agent.name)
        for agent in agents.list_agents(limit=200).items
    ]


def _tools() -> list[str]:
    return installation.tools().names()


def _context(request: HttpRequest, ed: Editor, node_id: str | None, **extra: Any) -> dict[str, Any]:
    error_rows = []
    for error in ed.errors:
        owner = error.get("subgraph", [None])[0] if error.get("subgraph") else None
        target = owner or _error_target(error)
        error_rows.append(
            {
                "message": error["message"],
                "code": error["code"],
                "node": target,
                "url": f"{reverse('editor', args=[ed.slug])}?node={quote(target, safe='')}"
                if target and target in ed.node_ids
                else None,
            }
        )
    edges = []
    if ed.value is not None:
        problems = {
            (e["edge"]["from"], e["edge"]["to"]): e["message"]
            for e in ed.errors
            if isinstance(e.get("edge"), dict) and not e.get("subgraph")
        }
        for index, edge in enumerate(ed.value["edges"]):
            edges.append(
                {**edge, "index": index, "problem": problems.get((edge["from"], edge["to"]))}
            )
    context = {
        "ed": ed,
        "kinds": KINDS,
        "node": _node_form(ed, node_id),
        "selected": node_id,
        "selected_quoted": quote(node_id or "", safe=""),
        "error_rows": error_rows,
        "edges": edges,
        "case_names": _case_names(ed),
        "structure_key": _structure_key(ed, edges, node_id),
        "page_url": reverse("editor", args=[ed.slug]),
    }
    context.update(extra)
    return context


def _error_target(error: dict[str, Any]) -> str | None:
    if "node" in error:
        return str(error["node"])
    edge = error.get("edge")
    if isinstance(edge, dict):
        return str(edge.get("from"))
    return None


@require_safe
@vary_on_headers("HX-Request")
def editor_page(request: HttpRequest, slug: str) -> HttpResponse:
    ed = editing.editor_of(_open(request, slug))
    node_id = request.GET.get("node") or None
    context = _context(request, ed, node_id)
    if request.htmx and request.htmx.target == "editor":
        return render(request, f"{PAGE}#workspace", context)
    if request.htmx and node_id is not None:
        return render(request, f"{PAGE}#node_panel", context)
    if request.htmx:
        return render(request, f"{PAGE}#workspace", context)
    return render(request, PAGE, context)


def _answer(
    request: HttpRequest,
    result: Editor | Refused | Stale,
    node_id: str | None,
    *,
    node_panel: bool = True,
    json_text: bool = True,
    problems: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    json_error: str | None = None,
    **extra: Any,
) -> HttpResponse:
    """The answer to an edit: the live pieces for htmx, else the page or a redirect."""
    stale = result if isinstance(result, Stale) else None
    refused = result if isinstance(result, Refused) else None
    ed = result if isinstance(result, Editor) else result.editor
    if refused is not None:
        problems = {**(problems or {}), refused.field: refused.message}
    context = _context(request, ed, node_id, stale=stale, json_error=json_error, **extra)
    token = request.POST.get("token") if request.method == "POST" else None
    if problems or typed is not None or token:
        context["node"] = _node_form(ed, node_id, problems=problems, typed=typed, token=token)
        context["form_problems"] = problems
    if stale is not None:
        context["stale_rejected"] = stale.rejected or "\n".join(
            f"{name}: {value}" for name, value in stale.rejected_fields
        )
    if request.htmx:
        context.update(oob=True, oob_node_panel=node_panel, oob_json_text=json_text)
        _leave_out_shown(request, ed, context)
        return render(request, f"{PAGE}#live", context)
    if (
        stale is not None
        or problems
        or json_error
        or any(key.endswith("_error") and value for key, value in extra.items())
    ):
        return render(request, PAGE, context)
    url = reverse("editor", args=[ed.slug])
    return redirect(f"{url}?node={quote(node_id, safe='')}" if node_id else url)


def _leave_out_shown(request: HttpRequest, ed: Editor, context: dict[str, Any]) -> None:
    """Send the canvas and the lists only when the page does not show them already."""
    context["oob_canvas"] = request.POST.get("shown_canvas") != ed.canvas_key or not ed.canvas_key
    context["oob_structure"] = request.POST.get("shown_structure") != context["structure_key"]


def _guarded(view: Any) -> Any:
    """POST only; unknown graphs are 404, non-authors 403, a missing revision 400.

    The draft is read here, once, and handed to the view.
    """

    @require_POST
    def wrapped(request: HttpRequest, slug: str) -> HttpResponse:
        draft = _open(request, slug)
        if not draft.can_edit:
            return HttpResponse("Only authors may edit graphs.", status=403)
        if _revision(request) is None:
            return HttpResponseBadRequest("The form did not say which revision it edits.")
        try:
            return view(request, draft)
        except NotAllowed:
            return HttpResponse("Only authors may edit graphs.", status=403)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return vary_on_headers("HX-Request")(wrapped)


@_guarded
def edit_node(request: HttpRequest, draft: Draft) -> HttpResponse:
    """The node form: every field, posted as the person types."""
    node_id = request.POST.get("node", "")
    node = draft.node(node_id)
    submitted = [(key, value) for key, value in request.POST.items() if key not in _NOT_A_CHANGE]
    if node is None:
        # Deleted elsewhere: a stale tab learns so; otherwise say the node is gone.
        def missing(value: dict[str, Any]) -> dict[str, Any]:
            raise EditRefused("", f"there is no node `{node_id}` any more")

        result = editing.apply_edit(
            request.user, draft, _revision(request), missing, submitted=submitted
        )
        ed = result.editor if isinstance(result, (Refused, Stale)) else result
        return _answer(request, result if isinstance(result, Stale) else ed, None)
    new_id = request.POST.get("id", node_id)
    structural = "add_case" in request.POST or "remove_case" in request.POST
    read = node_form.read_node_form(
        node["kind"], request.POST, agent_by_name=agents.agent_hash_by_name
    )
    if read.problems:
        return _answer(
            request,
            editing.editor_of(draft),
            node_id,
            node_panel=False,
            problems=read.problems,
            typed=read.typed,
        )
    result = editing.apply_edit(
        request.user,
        draft,
        _revision(request),
        lambda value: update_node(value, node_id, read.fields, new_id=new_id),
        submitted=submitted,
    )
    if isinstance(result, Refused):
        typed = {result.field: new_id} if result.field == "id" else {}
        return _answer(request, result, node_id, node_panel=False, typed=typed)
    shown = new_id if isinstance(result, Editor) else node_id
    return _answer(request, result, shown, node_panel=structural)


@_guarded
def new_node(request: HttpRequest, draft: Draft) -> HttpResponse:
    """**Add node**: a kind and an id, starting from the defaults."""
    kind = request.POST.get("kind", "")
    node_id = request.POST.get("id", "")
    result = editing.apply_edit(
        request.user,
        draft,
        _revision(request),
        lambda value: add_node(value, kind, node_id),
        submitted=[("add node", f"{kind} {node_id}")],
    )
    if isinstance(result, Refused):
        return _answer(
            request, result.editor, None, add_node_error=result.message, add_node_data=request.POST
        )
    shown = node_id if isinstance(result, Editor) else None
    return _answer(request, result, shown, oob_add_node=True)


@_guarded
def remove_node(request: HttpRequest, draft: Draft) -> HttpResponse:
    """**Delete node**, and its edges."""
    node_id = request.POST.get("node", "")
    result = editing.apply_edit(
        request.user,
        draft,
        _revision(request),
        lambda value: delete_node(value, node_id),
        submitted=[("delete node", node_id)],
    )
    return _answer(request, result, None)


@_guarded
def new_edge(request: HttpRequest, draft: Draft) -> HttpResponse:
    """**Add edge**: from, to and an optional label."""
    source = request.POST.get("from", "")
    target = request.POST.get("to", "")
    label = request.POST.get("label", "").strip() or None
    result = editing.apply_edit(
        request.user,
        draft,
        _revision(request),
        lambda value: add_edge(value, source, target, label),
        submitted=[("add edge", f"{source} -> {target} {label or ''}".strip())],
    )
    selected = request.POST.get("selected") or None
    if isinstance(result, Refused):
        return _answer(request, result.editor, selected, edge_error=result.message)
    return _answer(request, result, selected)


@_guarded
def remove_edge(request: HttpRequest, draft: Draft) -> HttpResponse:
    """**Delete edge** (by its place in the edge list)."""
    raw = request.POST.get("edge", "")
    index = node_form.whole_number(raw, maximum=10**9)
    index = -1 if index is None else index
    result = editing.apply_edit(
        request.user,
        draft,
        _revision(request),
        lambda value: delete_edge(value, index),
        submitted=[("delete edge", raw)],
    )
    selected = request.POST.get("selected") or None
    if isinstance(result, Refused):
        return _answer(request, result.editor, selected, edge_error=result.message)
    return _answer(request, result, selected)


@_guarded
def edit_json(request: HttpRequest, draft: Draft) -> HttpResponse:
    """The **JSON** tab: the whole draft, saved as typed."""
    text = request.POST.get("text", "")
    result = editing.save_text(request.user, draft, _revision(request), text)
    selected = request.POST.get("selected") or None
    ed = result.editor if isinstance(result, Stale) else result
    return _answer(request, result, selected, json_text=False, json_error=ed.malformed)


@_guarded
def freeze(request: HttpRequest, draft: Draft) -> HttpResponse:
    """**Freeze**: the draft becomes the next version; its hash is shown."""
    note = request.POST.get("note", "")
    ed = editing.editor_of(draft)
    try:
        frozen = documents.freeze(
            request.user, draft.slug, expected_revision=_revision(request), note=note
        )
    except StaleDraft:
        return _answer(request, Stale(ed, rejected_fields=[("freeze", note)]), None)
    except InvalidGraph:
        return _answer(request, ed, None, freeze_error="Fix the errors before freezing.")
    except InvalidRequest as error:  # a NUL in the note
        return _answer(request, ed, None, freeze_error=str(error))
    ed = editing.load_editor(request.user, draft.slug)
    context = _context(request, ed, None, frozen=frozen)
    if request.htmx:
        context.update(oob=True, oob_node_panel=False, oob_json_text=False)
        _leave_out_shown(request, ed, context)
        return render(request, f"{PAGE}#live", context)
    return render(request, PAGE, context)


@_guarded
def discard(request: HttpRequest, draft: Draft) -> HttpResponse:
    """**Discard changes**: back to the latest frozen version."""
    result = editing.discard_changes(request.user, draft, _revision(request))
    if result is None:
        ed = editing.editor_of(draft)
        return _answer(request, ed, None, freeze_error="Nothing frozen yet: nothing to go back to.")
    return _answer(request, result, request.POST.get("selected") or None)
