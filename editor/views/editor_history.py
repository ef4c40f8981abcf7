"""The draft's history in the editor: **Undo**, **Redo**, the **History** panel and restoring
a revision from it. Each is a new revision (restoring too), so nothing is ever lost."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from editor.services import documents
from editor.services.documents import editing, editor_edits
from editor.services.documents.editing import ParsedDraft
from editor.services.documents.editor_page import PageState
from editor.services.paging import MAX_LIMIT
from editor.views.editor import guarded, respond
from editor.views.htmx import HtmxHttpRequest

__all__ = ["history_panel", "redo", "restore", "undo"]


@guarded
def undo(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Undo**: the draft as it was before the last change."""
    return respond(request, editor_edits.step(request.user, draft, page, "undo"))


@guarded
def redo(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """**Redo**: the change last undone, again."""
    return respond(request, editor_edits.step(request.user, draft, page, "redo"))


@guarded
def restore(request: HtmxHttpRequest, draft: ParsedDraft, page: PageState) -> HttpResponse:
    """Restore one revision of the **History** (as a new revision)."""
    number = request.POST.get("number", "")
    return respond(request, editor_edits.step(request.user, draft, page, "restore", number))


@require_safe
@vary_on_headers("HX-Request")
def history_panel(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The **History** panel: the draft's revisions, newest first, each restorable."""
    draft = editing.open_draft(request.user, slug, reverse("editor", args=[slug]))
    page = documents.list_revisions(draft.slug, limit=MAX_LIMIT)
    context = {"draft": draft, "revisions": page.items, "more": page.next is not None}
    template = "editor/history.html#panel" if request.htmx else "editor/history.html"
    return render(request, template, context)
