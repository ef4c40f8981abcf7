"""Documents managed from the editor's **Document** menu and the graphs list: **Rename**,
**Duplicate**, **Archive** / **Restore** and **Delete** (which asks first, and names what goes).
Each is a plain form post that redirects (htmx follows the redirect as a whole page)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from editor.services.documents import managing
from editor.services.errors import InvalidRequest, SlugTaken
from editor.views.graphs import editor_url, go_to
from editor.views.htmx import HtmxHttpRequest

__all__ = ["archive", "delete", "duplicate", "rename"]


@require_POST
def rename(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Rename**: a new title and slug; the old slug leads to the new one."""
    title = request.POST.get("title", "")
    new_slug = request.POST.get("slug", "").strip() or slug
    try:
        document = managing.update_document(request.user, slug, title=title, new_slug=new_slug)
    except SlugTaken:
        messages.error(request, f"The slug “{new_slug}” is taken by another graph; choose another.")
        return go_to(request, editor_url(slug))
    except InvalidRequest as error:
        messages.error(request, f"Not renamed: {error}.")
        return go_to(request, editor_url(slug))
    messages.success(request, f"Renamed to “{document.title}” ({document.slug}).")
    return go_to(request, editor_url(document.slug))


@require_POST
def duplicate(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Duplicate**: a new document with a copy of this draft."""
    document = managing.duplicate_document(request.user, slug)
    messages.success(request, f"This is a copy of {slug}, as “{document.title}”.")
    return go_to(request, editor_url(document.slug))


@require_POST
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
        return go_to(request, reverse("home"))
    messages.success(request, f"Restored “{document.title}” to the graphs list.")
    return go_to(request, editor_url(document.slug))


@require_POST
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
    return go_to(request, reverse("home"))
