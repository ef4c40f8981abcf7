"""``/v1/documents``: documents, their drafts (optimistic concurrency) and versions."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status

from editor.api.auth import AuthenticatedRequest
from editor.api.paging import PageQuery
from editor.api.schemas import (
    ApprovalPolicyIn,
    ApprovalPolicyOut,
    DeletedOut,
    DiffOut,
    DocumentDetailOut,
    DocumentIn,
    DocumentListOut,
    DocumentOut,
    DocumentPatchIn,
    DraftIn,
    DraftOut,
    DuplicateIn,
    ErrorOut,
    FreezeIn,
    FreezeOut,
    RevisionListOut,
    VersionListOut,
)
from editor.services import documents
from editor.services.documents import approvals, managing
from editor.services.errors import InvalidRequest
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT

router = Router(tags=["documents"])

_REVISION = re.compile(r'(?:W/)?"([0-9]{1,10})"|([0-9]{1,10})')

#: The failures every draft write can answer.
_WRITE_ERRORS: dict[int, Any] = {
    400: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    412: ErrorOut,
    428: ErrorOut,
}

_IF_MATCH = {
    "parameters": [
        {
            "in": "header",
            "name": "If-Match",
            "required": True,
            "description": 'The draft revision the change is based on, quoted: "3".',
            "schema": {"type": "string"},
        }
    ]
}


def _expected_revision(request: HttpRequest) -> int | None:
    """The revision in ``If-Match: "<revision>"``; ``None`` when the header is absent."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    match = _REVISION.fullmatch(header.strip())
    if match is None:
        raise InvalidRequest('If-Match must be the quoted draft revision, like "3"', "If-Match")
    return int(match.group(1) or match.group(2))


def _with_etag(response: HttpResponse, revision: int) -> None:
    response["ETag"] = f'"{revision}"'


@router.get("/documents", response={200: DocumentListOut, 400: ErrorOut}, summary="List")
def list_documents(
    request: HttpRequest,
    cursor: str | None = None,
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
    archived: bool = Query(False, description="list the archived documents instead"),
) -> dict[str, Any]:
    """Documents, most recently changed first (archived ones only with `archived=true`)."""
    page = documents.list_documents(cursor=cursor, limit=limit, archived=archived)
    return {"documents": page.items, "next": page.next}


@router.post(
    "/documents",
    response={201: DocumentOut, 400: ErrorOut, 403: ErrorOut, 409: ErrorOut},
    summary="Create a document",
)
def create_document(request: AuthenticatedRequest, payload: DocumentIn) -> Status[Any]:
    """A new document; its slug is derived from the title when not given."""
    return Status(
        201,
        documents.create_document(
            request.auth, title=payload.title, slug=payload.slug, text=payload.text
        ),
    )


@router.get("/documents/{slug}", response={200: DocumentDetailOut, 404: ErrorOut}, summary="Get")
def get_document(request: HttpRequest, slug: str) -> Any:
    """One document with its versions, newest first."""
    return documents.get_document(slug)


@router.patch(
    "/documents/{slug}",
    response={200: DocumentOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Rename or archive",
)
def update_document(request: AuthenticatedRequest, slug: str, payload: DocumentPatchIn) -> Any:
    """Change the title or the slug (the old slug then leads to the new one), or archive
    (`"archived": true`) or restore it."""
    return managing.update_document(
        request.auth,
        slug,
        title=payload.title,
        new_slug=payload.slug,
        archived=payload.archived,
    )


@router.post(
    "/documents/{slug}/duplicate",
    response={201: DocumentOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Duplicate",
)
def duplicate_document(
    request: AuthenticatedRequest, slug: str, payload: DuplicateIn | None = None
) -> Status[Any]:
    """A new document whose draft is a copy of this one's (title: `Copy of …` unless given)."""
    title = payload.title if payload else None
    return Status(201, managing.duplicate_document(request.auth, slug, title=title))


@router.delete(
    "/documents/{slug}",
    response={200: DeletedOut, 403: ErrorOut, 404: ErrorOut},
    summary="Delete",
)
def delete_document(request: AuthenticatedRequest, slug: str) -> dict[str, Any]:
    """Delete the draft and its history; frozen versions and runs stay."""
    deleted = managing.delete_document(request.auth, slug)
    return {
        "slug": deleted.slug,
        "deleted": True,
        "revisions": deleted.revisions,
        "versions_kept": deleted.versions_kept,
    }


@router.get(
    "/documents/{slug}/draft", response={200: DraftOut, 404: ErrorOut}, summary="Read the draft"
)
def read_draft(request: HttpRequest, slug: str, response: HttpResponse) -> Any:
    """The draft's text, revision (also as `ETag`) and validation verdict."""
    draft = documents.read_draft(slug)
    _with_etag(response, draft.revision)
    return draft


@router.put(
    "/documents/{slug}/draft",
    response={200: DraftOut, **_WRITE_ERRORS},
    openapi_extra=_IF_MATCH,
    summary="Save the draft",
)
def save_draft(
    request: AuthenticatedRequest, slug: str, payload: DraftIn, response: HttpResponse
) -> Any:
    """Replace the draft's text if it is still at the `If-Match` revision."""
    draft = documents.save_draft(
        request.auth, slug, text=payload.text, expected_revision=_expected_revision(request)
    )
    _with_etag(response, draft.revision)
    return draft


@router.post(
    "/documents/{slug}/freeze",
    response={200: FreezeOut, 201: FreezeOut, **_WRITE_ERRORS},
    openapi_extra=_IF_MATCH,
    summary="Freeze the draft",
)
def freeze(
    request: AuthenticatedRequest, slug: str, payload: FreezeIn | None = None
) -> Status[Any]:
    """Freeze the draft as the next version; `200` when it equals the latest version."""
    frozen = documents.freeze(
        request.auth,
        slug,
        expected_revision=_expected_revision(request),
        note=payload.note if payload else "",
    )
    return Status(201 if frozen.new_version else 200, frozen)


@router.get(
    "/documents/{slug}/versions",
    response={200: VersionListOut, 400: ErrorOut, 404: ErrorOut},
    summary="List versions",
)
def list_versions(request: HttpRequest, slug: str, paging: Query[PageQuery]) -> dict[str, Any]:
    """A document's versions, newest first."""
    page = documents.list_versions(slug, cursor=paging.cursor, limit=paging.limit)
    return {"versions": page.items, "next": page.next}


@router.get(
    "/documents/{slug}/diff",
    response={200: DiffOut, 400: ErrorOut, 404: ErrorOut},
    by_alias=True,
    summary="Compare two graphs",
)
def diff(
    request: HttpRequest,
    slug: str,
    before: str = Query(..., alias="from", description="a graph hash, or `draft`"),
    after: str = Query(..., alias="to", description="a graph hash, or `draft`"),
) -> dict[str, Any]:
    """The structural diff between two stored graphs or the draft."""
    return documents.diff(slug, before=before, after=after)


@router.get(
    "/documents/{slug}/revisions",
    response={200: RevisionListOut, 400: ErrorOut, 404: ErrorOut},
    summary="List the draft's revisions",
)
def list_revisions(request: HttpRequest, slug: str, paging: Query[PageQuery]) -> dict[str, Any]:
    """The draft's saved history, newest first."""
    page = documents.list_revisions(slug, cursor=paging.cursor, limit=paging.limit)
    return {"revisions": page.items, "next": page.next}


@router.post(
    "/documents/{slug}/revisions/{number}/restore",
    response={200: DraftOut, **_WRITE_ERRORS},
    openapi_extra=_IF_MATCH,
    summary="Restore a revision",
)
def restore_revision(
    request: AuthenticatedRequest, slug: str, number: int, response: HttpResponse
) -> Any:
    """The draft as it was at revision `number`, saved as a new revision (`If-Match` as for
    `PUT …/draft`); answers like reading the draft."""
    draft = documents.restore_revision(
        request.auth, slug, number, expected_revision=_expected_revision(request)
    )
    _with_etag(response, draft.revision)
    return draft


@router.get(
    "/documents/{slug}/approvals",
    response={200: ApprovalPolicyOut, 404: ErrorOut},
    summary="The approval policy",
)
def get_approvals(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Who may decide each gate of the draft, and how: `deciders` (groups and users;
    `approvers` stands for the role), `four_eyes`, `quorum` (1–5), `due`, `remind_at`,
    `on_expiry`. Every gate of the draft (the defaults for those the policy leaves out), and
    every gate the policy names that the draft no longer has, flagged in `warnings`."""
    return approvals.policy_json(slug)


@router.put(
    "/documents/{slug}/approvals",
    response={200: ApprovalPolicyOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut},
    summary="Set the approval policy",
)
def put_approvals(
    request: AuthenticatedRequest, slug: str, payload: ApprovalPolicyIn
) -> dict[str, Any]:
    """Replace the whole policy (authors and operators): a gate left out keeps the defaults.
    `400 invalid_policy` names the gate and field of the first problem and lists every one in
    `details.errors` (a gate the draft does not have, a group or user no one is named, a value
    to resolve with that breaks the gate's approval schema); nothing is saved then. Runs record
    the policy when they start: a change applies to runs started afterwards."""
    return approvals.replace_policy(request.auth, slug, {"gates": payload.gates})
