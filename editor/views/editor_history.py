"""The draft's history in the editor: **Undo**, **Redo**, the **History** panel and restoring
a revision from it. Each is a new revision (restoring too), so nothing is ever lost."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from editor.presentation.typed import whole_number
from editor.services import documents
from editor.services.documents import editing
from editor.services.documents.editing import ParsedDraft
from editor.services.errors import InvalidRequest
from editor.services.paging import MAX_LIMIT
from editor.views.editor import answer, guarded, open_draft, revision_of, selected_of
from editor.views.htmx import HtmxHttpRequest

__all__ = ["history_panel", "redo", "restore", "undo"]


def _step(
    request: HtmxHttpRequest, draft: ParsedDraft, how: str, number: int | None = None
) -> HttpResponse:
    try:
        result = editing.step_history(request.user, draft, revision_of(request), how, number)
    except InvalidRequest as error:
        return answer(request, editing.check_draft(draft), None, history_error=str(error))
    selected = selected_of(request)
    notice = {"undo": "Undone.", "redo": "Redone."}.get(how, f"Restored revision {number}.")
    return answer(request, result, selected, undo_notice=notice)


@guarded
def undo(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Undo**: the draft as it was before the last change."""
    return _step(request, draft, "undo")


@guarded
def redo(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """**Redo**: the change last undone, again."""
    return _step(request, draft, "redo")


@guarded
def restore(request: HtmxHttpRequest, draft: ParsedDraft) -> HttpResponse:
    """Restore one revision of the **History** (as a new revision)."""
    number = whole_number(request.POST.get("number", "").strip(), minimum=1)
    if number is None:
        return answer(
            request, editing.check_draft(draft), None, history_error="Choose a revision to restore."
        )
    return _step(request, draft, "restore", number)


@require_safe
@vary_on_headers("HX-Request")
def history_panel(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The **History** panel: the draft's revisions, newest first, each restorable."""
    draft = open_draft(request, slug)
    page = documents.list_revisions(draft.slug, limit=MAX_LIMIT)
    context = {"draft": draft, "revisions": page.items, "more": page.next is not None}
    template = "editor/history.html#panel" if request.htmx else "editor/history.html"
    return render(request, template, context)
