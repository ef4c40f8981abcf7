"""``/v1/inbox``: what waits for a person, and the decisions people made (spec 05, *Inbox*).

Resolving an item is ``POST /v1/runs/{id}/resume`` (``editor.api.runs``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router

from editor.api.schemas import ErrorOut, InboxListOut, InboxResolvedOut
from editor.services import inbox
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT

router = Router(tags=["inbox"])


@router.get("/inbox", response={200: InboxListOut, 400: ErrorOut}, summary="Pending items")
def pending(
    request: HttpRequest,
    graph: str | None = None,
    document: str | None = None,
    cursor: str | None = None,
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
) -> dict[str, Any]:
    """Gates, budgets and reconciliations waiting for a person, oldest first; `graph` keeps
    one graph's items (its full hash), `document` one document's (its slug)."""
    page = inbox.pending_items(graph=graph, document=document, cursor=cursor, limit=limit)
    return {"items": [item.as_json() for item in page.items], "next": page.next}


@router.get(
    "/inbox/resolved", response={200: InboxResolvedOut, 400: ErrorOut}, summary="Decision log"
)
def resolved(
    request: HttpRequest,
    cursor: str | None = None,
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
) -> dict[str, Any]:
    """Every resolution (`Resumed`, `BudgetRaised`, `Reconciled`), newest first: who decided
    what, when, and the hash of the gate schema the input was checked against."""
    page = inbox.decision_log(cursor=cursor, limit=limit)
    return {"items": [item.as_json() for item in page.items], "next": page.next}
