"""The document row as every document service finds and checks it: by slug (never a deleted
one), who may change it, and the rules for titles, slugs and draft texts."""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.utils.text import slugify

from editor.models import Document, DocumentAlias
from editor.services.access import ActingUser, author_of, can_author
from editor.services.errors import InvalidRequest, NotAllowed, UnknownDocument
from editor.services.storable import NUL

__all__ = [
    "MAX_SLUG_LENGTH",
    "MAX_TITLE_LENGTH",
    "SLUG",
    "SLUG_ATTEMPTS",
    "author_of",
    "check_slug",
    "check_text",
    "check_title",
    "derive_slug",
    "document_row",
    "free_slugs",
    "renamed_to",
    "require_author",
    "slug_free",
]

MAX_TITLE_LENGTH = 200
MAX_SLUG_LENGTH = 64
SLUG = re.compile(r"[a-z0-9-]{1,64}")
_DASHES = re.compile(r"[-_]+")
#: How many slugs a new document whose slug is derived may try: its own, then ``-2`` … ``-99``.
SLUG_ATTEMPTS = 99


def require_author(user: ActingUser) -> None:
    if not can_author(user):
        raise NotAllowed()


def derive_slug(title: str) -> str:
    """A slug from a title: ASCII letters, digits and dashes, at most 64; ``graph`` if none."""
    slug = _DASHES.sub("-", slugify(title)).strip("-")
    slug = slug[:MAX_SLUG_LENGTH].rstrip("-")
    return slug or "graph"


def free_slugs(base: str) -> Iterator[str]:
    """The slugs a document derived from the same title may take, in order, that no document
    and no old slug holds now: ``base``, then ``base-2`` … ``base-99`` (cut to fit)."""
    for attempt in range(1, SLUG_ATTEMPTS + 1):
        candidate = base if attempt == 1 else f"{base[:60]}-{attempt}"
        if slug_free(candidate):
            yield candidate


def slug_free(slug: str, document: Document | None = None) -> bool:
    """No document (but ``document``) has ``slug``, and no document's old slug leads from it."""
    documents_with_it = Document.objects.filter(slug=slug)
    aliases = DocumentAlias.objects.filter(slug=slug)
    if document is not None:
        documents_with_it = documents_with_it.exclude(pk=document.pk)
        aliases = aliases.exclude(document=document)
    return not documents_with_it.exists() and not aliases.exists()


def check_slug(slug: str) -> str:
    if not SLUG.fullmatch(slug):
        raise InvalidRequest(
            "a slug is 1 to 64 characters of lowercase letters, digits and dashes", "slug"
        )
    return slug


def check_text(text: str) -> str:
    if NUL in text:
        raise InvalidRequest("the text must not contain NUL (U+0000) characters", "text")
    return text


def check_title(title: str) -> str:
    if NUL in title:
        raise InvalidRequest("the title must not contain NUL (U+0000) characters", "title")
    title = title.strip()
    if not title:
        raise InvalidRequest("the title must not be empty", "title")
    if len(title) > MAX_TITLE_LENGTH:
        raise InvalidRequest(f"the title is longer than {MAX_TITLE_LENGTH} characters", "title")
    return title


def document_row(slug: str) -> Document:
    """The document of ``slug``, with its draft (``UnknownDocument`` when there is none)."""
    if not SLUG.fullmatch(slug):
        raise UnknownDocument(slug)
    try:
        return Document.objects.select_related("draft").get(slug=slug, deleted_at__isnull=True)
    except Document.DoesNotExist:
        raise UnknownDocument(slug) from None


def renamed_to(slug: str) -> str | None:
    """The slug a document renamed from ``slug`` has now, if one was."""
    if not SLUG.fullmatch(slug):
        return None
    return (
        DocumentAlias.objects.filter(slug=slug, document__deleted_at__isnull=True)
        .values_list("document__slug", flat=True)
        .first()
    )
