"""``/graphs/<slug>/``: the editor page, and what every edit of it shares at the edge.

The page and each edit read what the page says about itself (:func:`page_state`), call one
service of :mod:`editor.services.documents.editor_edits` or
:func:`~editor.services.documents.editor_page.show_page`, and render the
:class:`~editor.services.documents.editor_page.EditorAnswer` it returns (:func:`respond`).
An edit answers an htmx request with ``editor/page.html#live``: out-of-band pieces (revision,
canvas, verdict and errors, structure, field errors, JSON, stale panel) that replace their
namesakes in place, leaving alone the control being typed in. Without htmx, a successful edit
redirects back to the page and a refused one renders it.

The two big pieces, the canvas and the node and edge lists, carry a key (``data-key``)
that ``editor.js`` posts back with each edit (``shown_canvas``, ``shown_structure``); an
answer leaves out a piece whose key is unchanged, so typing in a field re-sends neither
lists nor an unchanged drawing, and an unchanged drawing is not laid out at all.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.presentation.typed import whole_number
from editor.services.documents import editing
from editor.services.documents.editing import ParsedDraft
from editor.services.documents.editor_page import (
    MAX_LEVEL_DEPTH,
    EditorAnswer,
    PageState,
    show_page,
)
from editor.views.htmx import HtmxHttpRequest

__all__ = ["PAGE", "EditView", "editor_page", "guarded", "page_state", "respond"]

PAGE = "editor/page.html"

#: An edit of the editor page: the request, the draft it read, and what the page says.
EditView = Callable[[HtmxHttpRequest, ParsedDraft, PageState], HttpResponse]


def page_state(request: HtmxHttpRequest) -> PageState:
    """What the page says about itself: from the form it posted, or its query string."""
    if request.method != "POST":
        return PageState(
            level=tuple(request.GET.getlist("in"))[:MAX_LEVEL_DEPTH],
            selected=request.GET.get("node") or None,
        )
    posted = request.POST
    return PageState(
        revision=whole_number(posted.get("revision", "").strip(), minimum=1),
        level=tuple(posted.getlist("in"))[:MAX_LEVEL_DEPTH],
        selected=posted.get("selected") or None,
        token=posted.get("token"),
        shown_canvas=posted.get("shown_canvas"),
        shown_structure=posted.get("shown_structure"),
        json_hidden=posted.get("json_hidden") == "1",
        live=bool(request.htmx),
    )


def respond(request: HtmxHttpRequest, answer: EditorAnswer) -> HttpResponse:
    """The answer to an edit: the live pieces for htmx, else the page or a redirect."""
    if answer.redirect:
        return redirect(answer.redirect)
    template = f"{PAGE}#live" if answer.swap is not None else PAGE
    return render(request, template, answer.context())


@require_safe
@vary_on_headers("HX-Request")
def editor_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    page = page_state(request)
    target = request.htmx.target if request.htmx else None
    if not request.htmx:
        part = ""
    elif target == "json-text":
        part = "#json_text"
    elif target != "editor" and page.selected is not None:
        # The node's form, and the nodes and edges of its level (a body is its own level).
        part = "#node_choice"
    else:
        part = "#workspace"
    whole = part in ("", "#workspace")
    answer = show_page(request.user, slug, reverse("editor", args=[slug]), page, whole=whole)
    return render(request, PAGE + part, answer.context())


def guarded(view: EditView) -> Callable[[HtmxHttpRequest, str], HttpResponse]:
    """POST only; unknown graphs are 404, non-authors 403, a missing revision 400.

    The draft and what the page says are read here, once, and handed to the view.
    """

    @require_POST
    def wrapped(request: HtmxHttpRequest, slug: str) -> HttpResponse:
        draft = editing.open_draft(request.user, slug, reverse("editor", args=[slug]))
        if not draft.can_edit:
            raise PermissionDenied("Only authors may edit graphs.")
        page = page_state(request)
        if page.revision is None:
            return HttpResponseBadRequest("The form did not say which revision it edits.")
        return view(request, draft, page)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return vary_on_headers("HX-Request")(wrapped)
