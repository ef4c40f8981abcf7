"""Documents: a named lineage of one mutable draft and its frozen versions.

A draft may hold any text, even invalid JSON: it is work in progress. Writers send
the revision they read; a save is one conditional ``UPDATE … WHERE revision = …``,
so of two writers of one revision exactly one wins and the other learns the current
revision (:class:`StaleDraft`) instead of overwriting it. Freezing locks the document
row, so version numbers stay gap-free and unique however many freeze at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.text import slugify

from editor.graph import Graph, MalformedDocument, diff_graphs, graph_hash, parse_document
from editor.models import Document, Draft, Version
from editor.services.access import can_author
from editor.services.errors import (
    InvalidCursor,
    InvalidGraph,
    InvalidRequest,
    NotAllowed,
    PreconditionRequired,
    SlugTaken,
    StaleDraft,
    UnknownDocument,
    UnknownGraph,
)
from editor.services.graphs import (
    check_graph,
    is_graph_hash,
    load_graph,
    save_graph,
    validate_graph_document,
)
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of
from editor.services.storable import NUL

__all__ = [
    "DRAFT",
    "MAX_TITLE_LENGTH",
    "DocumentInfo",
    "DraftState",
    "DraftView",
    "Frozen",
    "LatestVersion",
    "OpenDraft",
    "VersionInfo",
    "VersionOf",
    "create_document",
    "derive_slug",
    "diff",
    "freeze",
    "get_document",
    "import_draft",
    "list_documents",
    "list_versions",
    "open_draft",
    "read_draft",
    "save_draft",
    "versions_of_graph",
]

#: The name that stands for a document's draft where a graph hash is expected.
DRAFT = "draft"
MAX_TITLE_LENGTH = 200
MAX_SLUG_LENGTH = 64
_SLUG = re.compile(r"[a-z0-9-]{1,64}")
_DASHES = re.compile(r"[-_]+")


@dataclass(frozen=True, slots=True)
class DraftState:
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
    draft: DraftState
    latest: LatestVersion | None
    updated_at: datetime
    #: Filled in by :func:`get_document` only.
    versions: list[VersionInfo] | None = None


@dataclass(frozen=True, slots=True)
class DraftView:
    """A draft as read or just written: its text, revision and verdict."""

    text: str
    revision: int
    validation: dict[str, Any]


@dataclass(frozen=True, slots=True)
class OpenDraft:
    """A draft as the editor reads it: not validated, with its document's title and latest graph."""

    slug: str
    title: str
    text: str
    revision: int
    latest_graph: str | None


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


def _require_author(user: Any) -> None:
    if not can_author(user):
        raise NotAllowed()


def _author(user: Any) -> Any:
    """The user to record as the author of a change (``None`` for the command line)."""
    return user if getattr(user, "pk", None) else None


def derive_slug(title: str) -> str:
    """A slug from a title: ASCII letters, digits and dashes, at most 64; ``graph`` if none."""
    slug = _DASHES.sub("-", slugify(title)).strip("-")
    slug = slug[:MAX_SLUG_LENGTH].rstrip("-")
    return slug or "graph"


def _check_slug(slug: str) -> str:
    if not _SLUG.fullmatch(slug):
        raise InvalidRequest(
            "a slug is 1 to 64 characters of lowercase letters, digits and dashes", "slug"
        )
    return slug


def _check_text(text: str) -> str:
    if NUL in text:
        raise InvalidRequest("the text must not contain NUL (U+0000) characters", "text")
    return text


def _check_title(title: str) -> str:
    if NUL in title:
        raise InvalidRequest("the title must not contain NUL (U+0000) characters", "title")
    title = title.strip()
    if not title:
        raise InvalidRequest("the title must not be empty", "title")
    if len(title) > MAX_TITLE_LENGTH:
        raise InvalidRequest(f"the title is longer than {MAX_TITLE_LENGTH} characters", "title")
    return title


def _document(slug: str) -> Document:
    if not _SLUG.fullmatch(slug):
        raise UnknownDocument(slug)
    try:
        return Document.objects.select_related("draft").get(slug=slug)
    except Document.DoesNotExist:
        raise UnknownDocument(slug) from None


def _draft_state(draft: Draft) -> DraftState:
    verdict = validate_graph_document(draft.text)
    return DraftState(
        revision=draft.revision,
        valid=verdict["valid"],
        error_count=len(verdict.get("errors", ())),
    )


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


def _info(document: Document, *, with_versions: bool = False) -> DocumentInfo:
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
    )


def create_document(
    user: Any, *, title: str, slug: str | None = None, text: str = ""
) -> DocumentInfo:
    """A new document with its draft at revision 1; the slug is derived when not given."""
    _require_author(user)
    title = _check_title(title)
    text = _check_text(text)
    slug = derive_slug(title) if slug is None else _check_slug(slug)
    try:
        with transaction.atomic():
            document = Document.objects.create(slug=slug, title=title, created_by=_author(user))
            Draft.objects.create(document=document, text=text, updated_by=_author(user))
    except IntegrityError:
        if Document.objects.filter(slug=slug).exists():
            raise SlugTaken(slug) from None
        raise
    return _info(_document(slug))


def list_documents(
    *, cursor: str | None = None, limit: int = DEFAULT_LIMIT, search: str = ""
) -> Page[DocumentInfo]:
    """Documents, most recently changed first; ``search`` keeps titles or slugs containing it."""
    documents = Document.objects.select_related("draft").order_by("-updated_at", "-id")
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
        documents = documents.filter(
            Q(updated_at__lt=updated_at) | Q(updated_at=updated_at, id__lt=pk)
        )
    rows = list(documents[: limit + 1])
    page = page_of(rows, limit, lambda row: [row.updated_at.isoformat(), row.id])
    return Page([_info(row) for row in page.items], page.next)


def get_document(slug: str) -> DocumentInfo:
    """One document with all its versions, newest first."""
    return _info(_document(slug), with_versions=True)


@dataclass(frozen=True, slots=True)
class VersionOf:
    """A frozen version of some document that is a given graph."""

    slug: str
    title: str
    version: int


def versions_of_graph(digest: str) -> list[VersionOf]:
    """Every document version frozen as the graph ``digest``, by document then number."""
    rows = (
        Version.objects.filter(graph_id=digest)
        .order_by("document__slug", "number")
        .values_list("document__slug", "document__title", "number")
    )
    return [VersionOf(*row) for row in rows]


def list_versions(
    slug: str, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> Page[VersionInfo]:
    """A document's versions, newest first."""
    versions = _document(slug).versions.select_related("frozen_by").order_by("-number")
    if cursor is not None:
        (before,) = decode_cursor(cursor, (int,))
        versions = versions.filter(number__lt=before)
    rows = list(versions[: limit + 1])
    page = page_of(rows, limit, lambda row: [row.number])
    return Page([_version_info(row) for row in page.items], page.next)


def read_draft(slug: str) -> DraftView:
    """A document's draft: its text, revision and validation verdict."""
    draft = _document(slug).draft
    return DraftView(draft.text, draft.revision, validate_graph_document(draft.text))


def open_draft(slug: str) -> OpenDraft:
    """A draft to edit: two queries and no validation (the editor validates once, itself)."""
    document = _document(slug)
    latest = _latest(document)
    return OpenDraft(
        slug=document.slug,
        title=document.title,
        text=document.draft.text,
        revision=document.draft.revision,
        latest_graph=latest.graph if latest else None,
    )


def save_draft(user: Any, slug: str, *, text: str, expected_revision: int | None) -> DraftView:
    """Replace the draft's text if it is still at ``expected_revision``.

    Raises :class:`PreconditionRequired` without a revision and :class:`StaleDraft`
    (carrying the current revision) when someone saved in between.
    """
    _require_author(user)
    if expected_revision is None:
        raise PreconditionRequired()
    text = _check_text(text)
    document = _document(slug)
    now = timezone.now()
    with transaction.atomic():
        # The document row first, as freeze() locks it: one lock order, no deadlock.
        Document.objects.filter(pk=document.pk).update(updated_at=now)
        # Compare-and-set in one statement: two writers of one revision cannot both win.
        written = Draft.objects.filter(document=document, revision=expected_revision).update(
            text=text, revision=F("revision") + 1, updated_at=now, updated_by=_author(user)
        )
        if written != 1:
            current = Draft.objects.filter(document=document).values_list("revision", flat=True)
            raise StaleDraft(current.get())
    return DraftView(text, expected_revision + 1, validate_graph_document(text))


def freeze(user: Any, slug: str, *, expected_revision: int | None, note: str = "") -> Frozen:
    """Freeze the draft as the next version, unless it equals the latest one.

    The draft must be at ``expected_revision`` and valid (:class:`InvalidGraph`
    otherwise). The draft text is left as it is.
    """
    _require_author(user)
    if expected_revision is None:
        raise PreconditionRequired()
    if NUL in note:
        raise InvalidRequest("the note must not contain NUL (U+0000) characters", "note")
    with transaction.atomic():
        # The row lock serialises freezes of one document: numbers stay gap-free and unique.
        try:
            if not _SLUG.fullmatch(slug):
                raise Document.DoesNotExist
            document = Document.objects.select_for_update().get(slug=slug)
        except Document.DoesNotExist:
            raise UnknownDocument(slug) from None
        draft = Draft.objects.select_for_update().get(document=document)
        if draft.revision != expected_revision:
            raise StaleDraft(draft.revision)
        graph = check_graph(draft.text)
        digest = graph_hash(graph)
        latest = _latest(document)
        if latest is not None and latest.graph == digest:
            return Frozen(digest, latest.version, created=False, new_version=False)
        stored = save_graph(graph, by=_author(user))
        number = 1 if latest is None else latest.version + 1
        Version.objects.create(
            document=document,
            graph_id=digest,
            number=number,
            frozen_by=_author(user),
            note=note,
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
    document = _document(slug)
    changes = diff_graphs(_side(document, before), _side(document, after))
    return {
        "identical": changes["identical"],
        "from": before,
        "to": after,
        "nodes": changes["nodes"],
        "edges": changes["edges"],
    }


def import_draft(slug: str, text: str, *, by: Any = None) -> tuple[str, bool]:
    """Replace a document's draft with ``text``, creating the document when it is missing.

    For the command line (``graph import``), which runs without a user; given a user,
    it needs the *authors* role. Returns the slug and whether the document was created.
    """
    if by is not None:
        _require_author(by)
    _check_slug(slug)
    _check_text(text)
    now = timezone.now()
    with transaction.atomic():
        document, created = Document.objects.get_or_create(
            slug=slug, defaults={"title": slug, "created_by": _author(by)}
        )
        if created:
            Draft.objects.create(document=document, text=text, updated_by=_author(by))
        else:
            # The document row first, as everywhere else.
            Document.objects.filter(pk=document.pk).update(updated_at=now)
            Draft.objects.filter(document=document).update(
                text=text, revision=F("revision") + 1, updated_at=now, updated_by=_author(by)
            )
    return slug, created
