"""Documents managed from the editor's **Document** menu and the graphs list: **Rename**,
**Duplicate**, **Archive** / **Restore** and **Delete** (which asks first, and names what goes).
Each is a plain form post that redirects (htmx follows the redirect as a whole page)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from editor.services import managing
from editor.services.errors import InvalidRequest, NotAllowed, SlugTaken, UnknownDocument
from editor.views.htmx import HtmxHttpRequest

__all__ = ["archive", "delete", "duplicate", "rename"]


def _go(request: HtmxHttpRequest, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _editor(slug: str) -> str:
    return reverse("editor", args=[slug])


type _DocumentView = Callable[[HtmxHttpRequest, str], HttpResponse]


def _managed(view: _DocumentView) -> _DocumentView:
    """POST only; unknown documents are 404 and people without the authors role 403."""

    @require_POST
    def wrapped(request: HtmxHttpRequest, slug: str) -> HttpResponse:
        try:
            return view(request, slug)
        except UnknownDocument:
            raise Http404("No such graph.") from None
        except NotAllowed:
            raise PermissionDenied("Managing documents needs the authors role.") from None

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


@_managed
def rename(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Rename**: a new title and slug; the old slug leads to the new one."""
    title = request.POST.get("title", "")
    new_slug = request.POST.get("slug", "").strip() or slug
    try:
        document = managing.update_document(request.user, slug, title=title, new_slug=new_slug)
    except SlugTaken:
        messages.error(request, f"The slug “{new_slug}” is taken by another graph; choose another.")
        return _go(request, _editor(slug))
    except InvalidRequest as error:
        messages.error(request, f"Not renamed: {error}.")
        return _go(request, _editor(slug))
    messages.success(request, f"Renamed to “{document.title}” ({document.slug}).")
    return _go(request, _editor(document.slug))


@_managed
def duplicate(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Duplicate**: a new document with a copy of this draft."""
    document = managing.duplicate_document(request.user, slug)
    messages.success(request, f"This is a copy of {slug}, as “{document.title}”.")
    return _go(request, _editor(document.slug))


@_managed
def archive(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Archive** (hidden from the graphs list) or **Restore**."""
    archived = request.POST.get("archived") != "0"
    document = managing.update_document(request.user, slug, archived=archived)
    if archived:
        messages.success(
            request,
            f"Archived “{document.title}”: it is listed under Archived graphs, where it can be "
            "restored.",
        )
        return _go(request, reverse("home"))
    messages.success(request, f"Restored “{document.title}” to the graphs list.")
    return _go(request, _editor(document.slug))


@_managed
def delete(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Delete**: the draft and its history go; frozen versions and runs stay."""
    deleted = managing.delete_document(request.user, slug)
    kept = (
        f" Frozen versions stay ({deleted.versions_kept}), with any runs of them."
        if deleted.versions_kept
        else ""
    )
    messages.success(
        request,
        f"Deleted {slug}: its draft and {deleted.revisions} saved "
        f"revision{'s' if deleted.revisions != 1 else ''}.{kept}",
    )
    return _go(request, reverse("home"))
