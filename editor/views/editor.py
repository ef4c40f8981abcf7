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

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.graph.edits import NEW_NODE_DEFAULTS
from editor.graph.expressions import MISSING
from editor.presentation import messages, node_form
from editor.presentation.typed import whole_number
from editor.presentation.wiring import hints_by_field
from editor.services import agents, installation
from editor.services.documents import editing, hints, managing
from editor.services.documents.editing import CheckedDraft, Edit, ParsedDraft, Refused, Stale
from editor.services.runs import test_nodes
from editor.views import editor_rows
from editor.views.htmx import HtmxHttpRequest

PAGE = "editor/page.html"
KINDS = list(NEW_NODE_DEFAULTS)


def open_draft(request: HttpRequest, slug: str) -> ParsedDraft:
    return editing.open_draft(request.user, slug, reverse("editor", args=[slug]))


def revision_of(request: HttpRequest) -> int | None:
    return whole_number(request.POST.get("revision", "").strip(), minimum=1)


def selected_of(request: HttpRequest) -> str | None:
    """The node whose form the page showed when it posted an edit that is not about it."""
    return request.POST.get("selected") or None


def apply(
    request: HttpRequest, draft: ParsedDraft, change: Edit, **options: Any
) -> CheckedDraft | Refused | Stale:
    """One edit of the draft by the person posting, at the revision their page read
    (``options``: what :func:`editing.apply_edit` records with it)."""
    return editing.apply_edit(request.user, draft, revision_of(request), change, **options)


def level_of(request: HttpRequest) -> tuple[str, ...]:
    """The document level a request is about: the subgraph owners named by ``in``."""
    data = request.POST if request.method == "POST" else request.GET
    return tuple(data.getlist("in"))[:8]


def _node_form(
    ed: CheckedDraft,
    node_id: str | None,
    *,
    level: tuple[str, ...] = (),
    problems: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    token: str | None = None,
) -> dict[str, Any] | None:
    """What the node form shows: the stored values (or ``typed``, text not saved) and errors."""
    node = ed.node(node_id, level)
    if node is None:
        return None
    node_key = node["payload"]["id"]
    errors: dict[str, list[str]] = {}
    for error in ed.errors_of(node_key, level):
        key = node_form.field_key_of_error(error, node)
        errors.setdefault(key, []).append(messages.for_people(error))
    held = ed.held_for(node_key, level)
    typed = {**{key: entry["text"] for key, entry in held.items()}, **(typed or {})}
    problems = {
        **{key: f"not saved: it {entry['message']}" for key, entry in held.items()},
        **(problems or {}),
    }
    for key, message in problems.items():
        errors.setdefault(key, []).append(message)
    if not (token and token.isascii() and token.isalnum()):
        named = repr((level, node_key)).encode("utf-8", "surrogatepass")
        token = hashlib.sha256(named).hexdigest()[:12]
    tested = None
    if not level:  # what reached a top-level node in the latest test run, asked when drawn

        def tested() -> Any:
            received = test_nodes.offered_input(ed.slug, node_key)
            return received.value if received is not None else MISSING

    return node_form.node_form(
        node,
        token=token,
        level=level,
        errors=errors,
        typed=typed,
        other_ids=ed.node_ids_at(level),
        agents=_agents,
        tools=_tools,
        tool_labels=_tool_labels,
        hints=hints_by_field(hints.node_hints(ed, node_key, level)),
        wiring=hints.node_wiring(ed, node_key, level, tested=tested),
    )


def _case_names(shown: dict[str, Any] | None) -> dict[str, list[str]]:
    if shown is None:
        return {}
    return {
        node["payload"]["id"]: [case.get("name", "") for case in node["payload"]["cases"]]
        for node in shown["nodes"]
        if node["kind"] == "branch"
    }


def _structure_key(
    ed: CheckedDraft,
    edges: list[dict[str, Any]],
    selected: str | None,
    level: tuple[str, ...],
    nodes: list[dict[str, Any]],
) -> str:
    """Names what the node and edge lists show (they show nothing else)."""
    shown = [
        ed.can_edit,
        selected,
        level,
        ed.value is not None,
        ed.greyed,
        [(node["kind"], node["payload"]["id"]) for node in nodes],
        edges,
    ]
    # repr, not JSON: the same data gives the same text, and it costs a tenth of json.dumps.
    return hashlib.sha256(repr(shown).encode("utf-8", "surrogatepass")).hexdigest()[:32]


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


def _query(level: tuple[str, ...]) -> str:
    return "".join(f"&in={quote(owner, safe='')}" for owner in level)


def page_context(
    request: HttpRequest, ed: CheckedDraft, node_id: str | None, **extra: Any
) -> dict[str, Any]:
    level = level_of(request)
    page = reverse("editor", args=[ed.slug])
    error_rows = []
    for error in ed.errors:
        where = tuple(error.get("subgraph", ()))
        target = editing.error_node(error)
        found = target is not None and ed.node(target, where) is not None
        error_rows.append(
            {
                "message": error["message"],
                "friendly": messages.for_people(error),
                "code": error["code"],
                "node": target,
                "url": f"{page}?node={quote(target, safe='')}{_query(where)}"
                if found and target is not None
                else None,
                **editor_rows.error_extras(ed, error, where),
            }
        )
    edges = []
    shown = ed.level_value(level) if level else ed.shown_value
    if shown is None:
        level = ()
        shown = ed.shown_value
    if shown is not None:
        problems = {
            (e["edge"]["from"], e["edge"]["to"]): messages.for_people(e)
            for e in ed.errors
            if isinstance(e.get("edge"), dict) and tuple(e.get("subgraph", ())) == level
        }
        for index, edge in enumerate(shown["edges"]):
            edges.append(
                {**edge, "index": index, "problem": problems.get((edge["from"], edge["to"]))}
            )
    held_rows = [
        {
            **entry,
            "label": _field_label(ed, entry),
            "focus": editor_rows.held_focus(ed, entry),
            "url": f"{page}?node={quote(entry['node'], safe='')}"
            f"{_query(tuple(entry.get('level', ())))}",
        }
        for entry in ed.held
    ]
    nodes = list(shown["nodes"]) if shown is not None else []
    context = {
        "ed": ed,
        "held_rows": held_rows,
        "kinds": KINDS,
        "node": _node_form(ed, node_id, level=level),
        "selected": node_id,
        "selected_quoted": quote(node_id or "", safe="") + _query(level),
        "error_rows": error_rows,
        "hint_rows": editor_rows.hint_rows(ed, page),
        "edges": edges,
        "level": level,
        "level_query": _query(level),
        "level_trail": [
            {"owner": owner, "query": _query(level[: index + 1])}
            for index, owner in enumerate(level)
        ],
        "level_nodes": nodes,
        "level_ids": [node["payload"]["id"] for node in nodes],
        "case_names": _case_names(shown),
        "structure_key": _structure_key(ed, edges, node_id, level, nodes),
        "page_url": page,
        "malformed_friendly": messages.for_people(
            {"code": "malformed_document", "message": ed.malformed or ""}
        ),
        "json_at": messages.json_position(ed.malformed),
        # Asked only where the Delete question is drawn.
        "delete_counts": lambda: managing.what_delete_takes(ed.slug),
    }
    context.update(extra)
    return context


def _field_label(ed: CheckedDraft, entry: dict[str, Any]) -> str:
    node = ed.node(entry["node"], tuple(entry.get("level", ())))
    if node is not None:
        for form_field in node_form.form_fields(node["kind"]):
            if form_field.key == entry["field"]:
                return form_field.label
    return str(entry["field"])


@require_safe
@vary_on_headers("HX-Request")
def editor_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    ed = editing.check_draft(open_draft(request, slug))
    node_id = request.GET.get("node") or None
    context = page_context(request, ed, node_id)
    if request.htmx and request.htmx.target == "editor":
        return render(request, f"{PAGE}#workspace", context)
    if request.htmx and request.htmx.target == "json-text":
        return render(request, f"{PAGE}#json_text", context)
    if request.htmx and node_id is not None:
        # The node's form, and the nodes and edges of its level (a body is its own level).
        return render(request, f"{PAGE}#node_choice", context)
    if request.htmx:
        return render(request, f"{PAGE}#workspace", context)
    return render(request, PAGE, context)


def answer(
    request: HtmxHttpRequest,
    result: CheckedDraft | Refused | Stale,
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
    ed = result if isinstance(result, CheckedDraft) else result.editor
    if refused is not None:
        problems = {**(problems or {}), refused.field: refused.message}
    context = page_context(request, ed, node_id, stale=stale, json_error=json_error, **extra)
    token = request.POST.get("token") if request.method == "POST" else None
    if problems or typed is not None or token:
        context["node"] = _node_form(
            ed, node_id, level=context["level"], problems=problems, typed=typed, token=token
        )
        context["form_problems"] = problems
    if stale is not None:
        context["stale_rejected"] = stale.rejected or "\n".join(
            f"{name}: {value}" for name, value in stale.rejected_fields
        )
    if request.htmx:
        # The JSON text is long; it is left out while its panel is closed (opening it fetches it).
        json_text = json_text and request.POST.get("json_hidden") != "1"
        context.update(oob=True, oob_node_panel=node_panel, oob_json_text=json_text)
        leave_out_shown(request, ed, context)
        return render(request, f"{PAGE}#live", context)
    if (
        stale is not None
        or problems
        or json_error
        or any(key.endswith("_error") and value for key, value in extra.items())
    ):
        return render(request, PAGE, context)
    url = reverse("editor", args=[ed.slug])
    where = _query(context["level"])
    if node_id:
        return redirect(f"{url}?node={quote(node_id, safe='')}{where}")
    return redirect(f"{url}?{where[1:]}" if where else url)


def leave_out_shown(request: HttpRequest, ed: CheckedDraft, context: dict[str, Any]) -> None:
    """Send the canvas and the lists only when the page does not show them already."""
    context["oob_canvas"] = request.POST.get("shown_canvas") != ed.canvas_key or not ed.canvas_key
    context["oob_structure"] = request.POST.get("shown_structure") != context["structure_key"]


def guarded(view: Any) -> Any:
    """POST only; unknown graphs are 404, non-authors 403, a missing revision 400.

    The draft is read here, once, and handed to the view.
    """

    @require_POST
    def wrapped(request: HttpRequest, slug: str) -> HttpResponse:
        draft = open_draft(request, slug)
        if not draft.can_edit:
            raise PermissionDenied("Only authors may edit graphs.")
        if revision_of(request) is None:
            return HttpResponseBadRequest("The form did not say which revision it edits.")
        return view(request, draft)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return vary_on_headers("HX-Request")(wrapped)
