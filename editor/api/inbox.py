"""``/v1/inbox``: what waits for a person, and the decisions people made (spec 05, *Inbox*).

Both take the inbox's filters (``editor.services.inbox.filters``): ``graph``, ``document``,
``node``, ``person``, ``from``, ``to`` and ``q``. Resolving an item is
``POST /v1/runs/{id}/resume`` (``editor.api.runs``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router

from editor.api.paging import PageQuery
from editor.api.schemas import ErrorOut, InboxListOut, InboxResolvedOut
from editor.services import inbox
from editor.services.inbox import log as inbox_log
from editor.services.inbox.filters import InboxFilter, read_filter

router = Router(tags=["inbox"])


class InboxQuery(PageQuery):
    """The query of both lists: the inbox's filters, and the page."""

    graph: str | None = None
    document: str | None = None
    node: str | None = None
    person: str | None = None
    since: str | None = Field(None, alias="from")
    until: str | None = Field(None, alias="to")
    q: str | None = None
    run: str | None = None

    def filters(self) -> InboxFilter:
        return read_filter(
            {
                "graph": self.graph,
                "document": self.document,
                "node": self.node,
                "person": self.person,
                "from": self.since,
                "to": self.until,
                "q": self.q,
                "run": self.run,
            }
        )


@router.get("/inbox", response={200: InboxListOut, 400: ErrorOut}, summary="Pending items")
def pending(request: HttpRequest, query: Query[InboxQuery]) -> dict[str, Any]:
    """Gates, budgets and reconciliations waiting for a person, oldest first. `graph` keeps
    one graph's items (its full hash); `document` the items whose card shows that document
    (its slug), including runs started from a graph hash that document froze first; `node`
    one node id; `person` the runs someone started (username); `from`/`to` the items
    recorded on or after / on or before a day (`YYYY-MM-DD`, UTC); `q` text in the prompt;
    `run` one run's items (its id)."""
    page = inbox.pending_items(query.filters(), cursor=query.cursor, limit=query.limit)
    return {"items": page.items, "next": page.next}


@router.get(
    "/inbox/resolved", response={200: InboxResolvedOut, 400: ErrorOut}, summary="Decision log"
)
def resolved(request: HttpRequest, query: Query[InboxQuery]) -> dict[str, Any]:
    """Every resolution (`Resumed`, `BudgetRaised`, `Reconciled`), newest first: who decided
    what, when, and the hash of the gate schema the input was checked against. The same
    filters as `GET /v1/inbox`, with `person` the one who decided and `q` searching the
    decision's comment and the prompt it answered. Paged by an opaque cursor: a page stays
    the same however many decisions are made meanwhile."""
    page = inbox_log.decision_log(query.filters(), cursor=query.cursor, limit=query.limit)
    return {"items": page.items, "next": page.next}
