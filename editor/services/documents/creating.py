"""New documents: created with a slug given or derived from the title, imported from a file,
or imported from the command line.

A slug derived for a page (**New graph**, **Import JSON**, **Duplicate**) is the first free one
of ``slug``, ``slug-2`` … ``slug-99`` (:func:`new_document`); the API, which is given a slug or
derives one, refuses a taken one instead (:func:`create_document`, ``409 slug_taken``). An
import says, beside the new document, whether its text is a graph already frozen somewhere
(:func:`import_document`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from editor.graph import GraphHash, MalformedDocument, graph_hash, parse_document
from editor.models import Document, DocumentAlias, Draft
from editor.services import quotas
from editor.services.access import ActingUser
from editor.services.documents import history
from editor.services.documents.core import (
    DocumentInfo,
    VersionOf,
    document_info,
    versions_of_graph,
)
from editor.services.documents.drafts import verdict_of
from editor.services.documents.rows import (
    author_of,
    check_slug,
    check_text,
    check_title,
    derive_slug,
    document_row,
    free_slugs,
    require_author,
)
from editor.services.errors import NoFreeSlug, SlugTaken

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = [
    "Imported",
    "create_document",
    "import_document",
    "import_draft",
    "new_document",
]


def create_document(
    user: ActingUser, *, title: str, slug: str | None = None, text: str = "", summary: str = ""
) -> DocumentInfo:
    """A new document with its draft at revision 1; the slug is derived when not given, and a
    taken one refused (:class:`SlugTaken`)."""
    require_author(user)
    title = check_title(title)
    text = check_text(text)
    slug = derive_slug(title) if slug is None else check_slug(slug)
    verdict = verdict_of(text, ())
    now = timezone.now()
    try:
        with transaction.atomic():
            if DocumentAlias.objects.filter(slug=slug).exists():
                raise SlugTaken(slug)
            quotas.check_documents(user)
            document = Document.objects.create(slug=slug, title=title, created_by=author_of(user))
            Draft.objects.create(
                document=document,
                text=text,
                updated_by=author_of(user),
                valid=verdict.valid,
                error_count=verdict.error_count,
                size=verdict.size,
            )
            history.record(
                document,
                1,
                history.Planned(text, [], history.Step("edit", summary or "created the graph")),
                valid=verdict.valid,
                error_count=verdict.error_count,
                size=verdict.size,
                user=user,
                now=now,
            )
    except IntegrityError:
        if Document.objects.filter(slug=slug).exists():
            raise SlugTaken(slug) from None
        raise
    return document_info(document_row(slug))


def new_document(
    user: ActingUser, *, title: str, text: str = "", summary: str = ""
) -> DocumentInfo:
    """A new document under the first free slug derived from ``title`` (``slug``, ``slug-2`` …
    ``slug-99``); :class:`NoFreeSlug` when every one is taken."""
    for slug in free_slugs(derive_slug(title)):
        # Free when looked at; another request may take it first.
        with contextlib.suppress(SlugTaken):
            return create_document(user, title=title, slug=slug, text=text, summary=summary)
    raise NoFreeSlug()


@dataclass(frozen=True, slots=True)
class Imported:
    """A document imported from a file, and what its text is: its graph hash when it parses
    (``parse_error`` otherwise), and the versions of any document already frozen as it."""

    document: DocumentInfo
    graph: GraphHash | None
    parse_error: str | None
    existing: list[VersionOf]


def import_document(user: ActingUser, *, title: str, text: str) -> Imported:
    """**Import JSON**: a new document (:func:`new_document`) whose draft is ``text`` as it was
    uploaded, even when it does not parse."""
    document = new_document(user, title=title, text=text)
    try:
        digest = graph_hash(parse_document(text))
    except MalformedDocument as error:
        return Imported(document, None, str(error), [])
    return Imported(document, digest, None, versions_of_graph(digest))


def import_draft(slug: str, text: str, *, by: User | None = None) -> tuple[str, bool]:
    """Replace a document's draft with ``text``, creating the document when it is missing.

    For the command line (``graph import``), which runs without a user; given a user,
    it needs the *authors* role. Returns the slug and whether the document was created.
    """
    if by is not None:
        require_author(by)
    check_slug(slug)
    check_text(text)
    now = timezone.now()
    verdict = verdict_of(text, ())
    with transaction.atomic():
        document, created = Document.objects.get_or_create(
            slug=slug, defaults={"title": slug, "created_by": author_of(by)}
        )
        stored: dict[str, Any] = {
            "valid": verdict.valid,
            "error_count": verdict.error_count,
            "size": verdict.size,
        }
        if created:
            quotas.check_documents(by)
            Draft.objects.create(document=document, text=text, updated_by=author_of(by), **stored)
            number = 1
        else:
            # The document row first, as everywhere else.
            Document.objects.filter(pk=document.pk).update(updated_at=now)
            draft = Draft.objects.select_for_update().get(document=document)
            number = draft.revision + 1
            Draft.objects.filter(pk=draft.pk).update(
                text=text,
                held=[],
                revision=number,
                updated_at=now,
                updated_by=author_of(by),
                **stored,
            )
        step = (
            history.Step("edit", "imported from the command line")
            if created
            else history.edit_step(
                document, number - 1, summary="imported from the command line", user=by, now=now
            )
        )
        history.record(
            document, number, history.Planned(text, [], step), user=by, now=now, **stored
        )
    return slug, created
