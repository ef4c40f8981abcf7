"""**Relabel**: a branch edge's label set to one of its cases, the one-click fix of an
unlabelled branch edge and of a label that names no case (the fixes are proposed beside the
errors: :mod:`editor.views.editor_rows`). Routing a case is an ordinary **Add edge** post, and
removing an edge listed twice an ordinary **Delete edge** post.
"""

from __future__ import annotations

from django.http import HttpResponse

from editor.graph.edits import relabel_edge
from editor.presentation.typed import whole_number
from editor.services.documents.editing import ParsedDraft, Refused
from editor.views.editor import answer, apply, guarded, level_of, selected_of
from editor.views.htmx import HtmxHttpRequest

__all__ = ["relabel"]


@guarded
def relabel(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """A branch edge's label set to one of its cases (the fix of an unlabelled edge, or of a
    label naming no case)."""
    index = whole_number(request.POST.get("edge", "").strip(), maximum=10**9)
    label = request.POST.get("label", "")
    source = request.POST.get("from", "")
    target = request.POST.get("to", "")
    level = level_of(request)
    result = apply(
        request,
        draft,
        lambda value: relabel_edge(
            value, -1 if index is None else index, label, source=source, target=target, level=level
        ),
        submitted=[("relabel edge", f"{source} -> {target} {label}")],
        summary=f"labelled edge `{source}` → `{target}` [{label}]",
    )
    selected = selected_of(request)
    if isinstance(result, Refused):
        return answer(request, result.editor, selected, edge_error=result.message)
    return answer(request, result, selected, undo_notice=f"Labelled {source} → {target} [{label}].")
