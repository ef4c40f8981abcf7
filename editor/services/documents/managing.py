"""Documents managed: rename (title and slug; the old slug leads to the new one), duplicate,
archive (hidden from the list, restorable) and delete.

Deleting takes the draft and its history. Frozen versions stay, since a graph is named by its
content and runs refer to it: a document that has versions keeps its row as a tombstone (marked
deleted, under a slug of its own, so its old slug is free again), one without is removed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from editor.models import Document, DocumentAlias, Draft, DraftRevision
from editor.services import documents, quotas
from editor.services.access import ActingUser
from editor.services.documents.rows import (
    MAX_TITLE_LENGTH,
    author_of,
    check_slug,
    check_title,
    derive_slug,
    document_row,
    require_author,
    slug_free,
)
from editor.services.errors import NoFreeSlug, SlugTaken

__all__ = [
    "Deleted",
    "delete_document",
    "duplicate_document",
    "update_document",
    "what_delete_takes",
]


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a delete took and what it kept."""

    slug: str
    revisions: int
    versions_kept: int


def update_document(
    user: ActingUser,
    slug: str,
    *,
    title: str | None = None,
    new_slug: str | None = None,
    archived: bool | None = None,
) -> documents.DocumentInfo:
    """Rename (title, slug) and archive or restore a document; the old slug leads to the new."""
    require_author(user)
    document = document_row(slug)
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = check_title(title)
    if new_slug is not None and new_slug != document.slug:
        check_slug(new_slug)
        if not slug_free(new_slug, document):
            raise SlugTaken(new_slug)
        changes["slug"] = new_slug
    if archived is not None:
        changes["archived_at"] = timezone.now() if archived else None
    if not changes:
        return documents.get_document(document.slug)
    try:
        with transaction.atomic():
            # The document row first, as every write of a document takes it; the usage row last.
            Document.objects.filter(pk=document.pk).update(updated_at=timezone.now(), **changes)
            if "slug" in changes:
                DocumentAlias.objects.filter(slug=changes["slug"], document=document).delete()
                DocumentAlias.objects.create(
                    slug=document.slug, document=document, created_by=author_of(user)
                )
                quotas.check_aliases(user)
    except IntegrityError:
        raise SlugTaken(changes.get("slug", slug)) from None
    return documents.get_document(changes.get("slug", document.slug))


def duplicate_document(
    user: ActingUser, slug: str, *, title: str | None = None
) -> documents.DocumentInfo:
    """A new document whose draft is a copy of this one's (its history starts afresh)."""
    require_author(user)
    document = document_row(slug)
    copy_title = check_title(title) if title else f"Copy of {document.title}"[:MAX_TITLE_LENGTH]
    summary = f"duplicated from `{document.slug}` (revision {document.draft.revision})"
    try:
        return documents.new_document(
            user, title=copy_title, text=document.draft.text, summary=summary
        )
    except NoFreeSlug:
        raise SlugTaken(derive_slug(copy_title)) from None


def delete_document(user: ActingUser, slug: str) -> Deleted:
    """Delete the draft and its history; frozen versions (and the runs of them) stay."""
    require_author(user)
    document = document_row(slug)
    with transaction.atomic():
        revisions = DraftRevision.objects.filter(document=document).count()
        versions = document.versions.count()
        released = quotas.bytes_by_saver(DraftRevision.objects.filter(document=document))
        if versions == 0:
            document.delete()
        else:
            DraftRevision.objects.filter(document=document).delete()
            Draft.objects.filter(document=document).delete()
            DocumentAlias.objects.filter(document=document).delete()
            tombstone = f"deleted-{document.pk}-{secrets.token_hex(4)}"[:64]
            Document.objects.filter(pk=document.pk).update(
                slug=tombstone,
                title=f"{document.title} (deleted)"[:MAX_TITLE_LENGTH],
                deleted_at=timezone.now(),
            )
        quotas.release_bytes(released)
    return Deleted(slug=slug, revisions=revisions, versions_kept=versions)


def what_delete_takes(slug: str) -> dict[str, int]:
    """For the question Delete asks: how many revisions go and how many versions stay."""
    document = document_row(slug)
    return {
        "revisions": DraftRevision.objects.filter(document=document).count(),
        "versions": document.versions.count(),
    }
