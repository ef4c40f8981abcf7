"""Documents: a named lineage of one mutable draft and its frozen versions.

A draft may hold any text, even invalid JSON: it is work in progress. Writers send
the revision they read; a save is one conditional ``UPDATE … WHERE revision = …``,
so of two writers of one revision exactly one wins and the other learns the current
revision (:class:`StaleDraft`) instead of overwriting it. Freezing locks the document
row, so version numbers stay gap-free and unique however many freeze at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from editor.graph import Graph, MalformedDocument, diff_graphs, graph_hash, parse_document
from editor.models import Document, Draft, Version
from editor.services.access import ActingUser
from editor.services.documents import history
from editor.services.documents.drafts import (
    KEEP,
    SavedDraft,
    graph_to_freeze,
    held_error,
    keep_layout,
    list_revisions,
    read_draft,
    redo,
    restore_revision,
    save_draft,
    undo,
    verdict_of,
)
from editor.services.documents.graphs import (
    is_graph_hash,
    load_graph,
    save_graph,
)
from editor.services.documents.rows import (
    MAX_TITLE_LENGTH,
    SLUG,
    author_of,
    derive_slug,
    document_row,
    require_author,
)
from editor.services.errors import (
    InvalidCursor,
    InvalidGraph,
    InvalidRequest,
    PreconditionRequired,
    StaleDraft,
    UnknownDocument,
    UnknownGraph,
)
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_by_number, page_of
from editor.services.storable import NUL

__all__ = [
    "DRAFT",
    "KEEP",
    "MAX_TITLE_LENGTH",
    "DocumentInfo",
    "DraftRecord",
    "DraftSummary",
    "Frozen",
    "LatestVersion",
    "SavedDraft",
    "VersionInfo",
    "VersionOf",
    "derive_slug",
    "diff",
    "freeze",
    "get_document",
    "held_error",
    "keep_layout",
    "list_documents",
    "list_revisions",
    "list_versions",
    "read_draft",
    "read_draft_record",
    "redo",
    "restore_revision",
    "save_draft",
    "undo",
    "verdict_of",
    "versions_of_graph",
    "versions_with_previous",
]

#: The name that stands for a document's draft where a graph hash is expected.
DRAFT = "draft"


@dataclass(frozen=True, slots=True)
class DraftSummary:
    """A listed document's draft: its revision and the verdict stored beside it."""

    revision: int
    valid: bool
    error_count: int


@dataclass(frozen=True, slots=True)
class LatestVersion:
    version: int
    graph: str


@dataclass(frozen=True, slots=True)
class VersionInfo:
    version: int
    graph: str
    frozen_by: str | None
    frozen_at: datetime
    note: str


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document as listed: its draft's state and its latest version, if any."""

    slug: str
    title: str
    draft: DraftSummary
    latest: LatestVersion | None
    updated_at: datetime
    #: Filled in by :func:`get_document` only.
    versions: list[VersionInfo] | None = None
    archived: bool = False


@dataclass(frozen=True, slots=True)
class DraftRecord:
    """The stored draft as the editor reads it: not parsed, not validated, with its document's
    title and latest graph, and where it stands in its history."""

    slug: str
    title: str
    text: str
    revision: int
    latest_graph: str | None
    held: tuple[dict[str, Any], ...] = ()
    can_undo: bool = False
    can_redo: bool = False
    archived: bool = False
    #: The canvas's kept layout (``Draft.layout``).
    layout: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Frozen:
    """The outcome of a freeze.

    ``created`` says whether the graph itself was newly stored; ``new_version`` whether
    a version was added (``False`` when the draft equals the latest version).
    """

    graph: str
    version: int
    created: bool
    new_version: bool


def _draft_state(draft: Draft) -> DraftSummary:
    """The verdict stored with the draft when it was saved (no validation here)."""
    return DraftSummary(revision=draft.revision, valid=draft.valid, error_count=draft.error_count)


def _latest(document: Document) -> LatestVersion | None:
    version = document.versions.order_by("-number").values_list("number", "graph_id").first()
    return LatestVersion(*version) if version else None


def _version_info(version: Version) -> VersionInfo:
    return VersionInfo(
        version=version.number,
        graph=version.graph_id,
        frozen_by=version.frozen_by.get_username() if version.frozen_by else None,
        frozen_at=version.frozen_at,
        note=version.note,
    )


def document_info(document: Document, *, with_versions: bool = False) -> DocumentInfo:
    versions = None
    if with_versions:
        versions = [
            _version_info(version)
            for version in document.versions.select_related("frozen_by").order_by("-number")
        ]
    return DocumentInfo(
        slug=document.slug,
        title=document.title,
        draft=_draft_state(document.draft),
        latest=_latest(document),
        updated_at=document.updated_at,
        versions=versions,
        archived=document.archived_at is not None,
    )


def _listed(row: Mapping[str, Any]) -> DocumentInfo:
    latest = row["latest_number"]
    return DocumentInfo(
        slug=row["slug"],
        title=row["title"],
        draft=DraftSummary(row["draft__revision"], row["draft__valid"], row["draft__error_count"]),
        latest=None if latest is None else LatestVersion(latest, row["latest_graph"]),
        updated_at=row["updated_at"],
        archived=row["archived_at"] is not None,
    )


def list_documents(
    *,
    cursor: str | None = None,
    limit: int = DEFAULT_LIMIT,
    search: str = "",
    archived: bool = False,
) -> Page[DocumentInfo]:
    """Documents, most recently changed first; ``search`` keeps titles or slugs containing it.
    Archived documents are listed apart (``archived``); deleted ones never.

    One query a page, whatever it holds: the draft's verdict is the one stored when it was saved
    (its text is not read), each row's latest version a subquery on the ``(document, number)``
    index, and the order the ``document_updated`` index's, so a late page (a cursor) reads what
    the first does. See docs/architecture.md, *The graphs list*."""
    latest = Version.objects.filter(document=OuterRef("pk")).order_by("-number")
    documents = Document.objects.filter(
        deleted_at__isnull=True, archived_at__isnull=not archived
    ).order_by("-updated_at", "-id")
    if search.strip():
        term = search.strip()
        if len(term) > MAX_TITLE_LENGTH or NUL in term:
            # No title or slug holds it; and SQLite refuses a LIKE pattern of a megabyte.
            documents = documents.none()
        else:
            documents = documents.filter(Q(title__icontains=term) | Q(slug__icontains=term))
    if cursor is not None:
        updated, pk = decode_cursor(cursor, (str, int))
        try:
            updated_at = datetime.fromisoformat(updated)
        except ValueError:
            raise InvalidCursor() from None
        if updated_at.tzinfo is None:
            raise InvalidCursor()
        # An index range first (``updated_at <= x``), then the ties: the same plan as page one.
        documents = documents.filter(updated_at__lte=updated_at).exclude(
            updated_at=updated_at, id__gte=pk
        )
    rows = list(
        documents.values(
            "id",
            "slug",
            "title",
            "updated_at",
            "archived_at",
            "draft__revision",
            "draft__valid",
            "draft__error_count",
            latest_number=Subquery(latest.values("number")[:1]),
            latest_graph=Subquery(latest.values("graph_id")[:1]),
        )[: limit + 1]
    )
    page = page_of(rows, limit, lambda row: [row["updated_at"].isoformat(), row["id"]])
    return Page([_listed(row) for row in page.items], page.next)


def get_document(slug: str, *, with_versions: bool = True) -> DocumentInfo:
    """One document, with all its versions newest first unless ``with_versions`` is false (a
    page of them is :func:`list_versions`)."""
    return document_info(document_row(slug), with_versions=with_versions)


@dataclass(frozen=True, slots=True)
class VersionOf:
    """A frozen version of some document that is a given graph."""

    slug: str
    title: str
    version: int


def versions_of_graph(digest: str) -> list[VersionOf]:
    """Every document version frozen as the graph ``digest``, by document then number."""
    rows = (
        Version.objects.filter(graph_id=digest, document__deleted_at__isnull=True)
        .order_by("document__slug", "number")
        .values_list("document__slug", "document__title", "number")
    )
    return [VersionOf(*row) for row in rows]


def list_versions(
    slug: str, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> Page[VersionInfo]:
    """A document's versions, newest first."""
    versions = document_row(slug).versions.select_related("frozen_by").order_by("-number")
    return page_by_number(versions, cursor, limit, _version_info)


def versions_with_previous(
    slug: str, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> tuple[Page[VersionInfo], list[VersionInfo | None]]:
    """:func:`list_versions`, and beside each version the one frozen before it (``None`` for
    the first), read with the page in one query: the versions list compares each with it."""
    versions = document_row(slug).versions.select_related("frozen_by").order_by("-number")
    if cursor is not None:
        (before,) = decode_cursor(cursor, (int,))
        versions = versions.filter(number__lt=before)
    found = [_version_info(row) for row in versions[: limit + 1]]
    page = page_of(found, limit, lambda version: [version.version])
    previous: list[VersionInfo | None] = [*found[1 : len(page.items) + 1]]
    previous += [None] * (len(page.items) - len(previous))
    return page, previous


def read_draft_record(slug: str) -> DraftRecord:
    """A draft to edit: two queries and no validation (the editor validates once, itself)."""
    document = document_row(slug)
    latest = _latest(document)
    can_undo, can_redo = history.position(document, document.draft.revision)
    return DraftRecord(
        slug=document.slug,
        title=document.title,
        text=document.draft.text,
        revision=document.draft.revision,
        latest_graph=latest.graph if latest else None,
        held=tuple(document.draft.held),
        can_undo=can_undo,
        can_redo=can_redo,
        archived=document.archived_at is not None,
        layout=document.draft.layout,
    )


def freeze(user: ActingUser, slug: str, *, expected_revision: int | None, note: str = "") -> Frozen:
    """Freeze the draft as the next version, unless it equals the latest one.

    The draft must be at ``expected_revision`` and valid (:class:`InvalidGraph`
    otherwise). The draft text is left as it is.
    """
    require_author(user)
    if expected_revision is None:
        raise PreconditionRequired()
    if NUL in note:
        raise InvalidRequest("the note must not contain NUL (U+0000) characters", "note")
    with transaction.atomic():
        # The row lock serialises freezes of one document: numbers stay gap-free and unique.
        try:
            if not SLUG.fullmatch(slug):
                raise Document.DoesNotExist
            document = Document.objects.select_for_update().get(slug=slug)
        except Document.DoesNotExist:
            raise UnknownDocument(slug) from None
        draft = Draft.objects.select_for_update().get(document=document)
        if draft.revision != expected_revision:
            raise StaleDraft(draft.revision)
        graph = graph_to_freeze(draft)
        digest = graph_hash(graph)
        latest = _latest(document)
        if latest is not None and latest.graph == digest:
            return Frozen(digest, latest.version, created=False, new_version=False)
        stored = save_graph(graph, by=author_of(user))
        number = 1 if latest is None else latest.version + 1
        Version.objects.create(
            document=document,
            graph_id=digest,
            number=number,
            frozen_by=author_of(user),
            note=note,
            revision=draft.revision,
        )
        Document.objects.filter(pk=document.pk).update(updated_at=timezone.now())
    return Frozen(digest, number, created=stored.created, new_version=True)


def _side(document: Document, reference: str) -> Graph:
    if reference == DRAFT:
        try:
            return parse_document(document.draft.text)
        except MalformedDocument as error:
            raise InvalidGraph(
                [{"code": "malformed_document", "message": str(error)}], malformed=True
            ) from None
    if not is_graph_hash(reference):
        raise UnknownGraph(reference)
    return load_graph(reference)


def diff(slug: str, *, before: str, after: str) -> dict[str, Any]:
    """The structural diff between two sides, each a stored graph's hash or ``draft``.

    ``from`` and ``to`` in the answer echo the sides as asked (a hash, or ``draft``).
    """
    document = document_row(slug)
    changes = diff_graphs(_side(document, before), _side(document, after))
    return {
        "identical": changes["identical"],
        "from": before,
        "to": after,
        "nodes": changes["nodes"],
        "edges": changes["edges"],
    }
