"""``/v1/inbox``: what waits for a person, and the decision log (spec 05, *Inbox*); claims and
decisions of several cards at once (Gatehouse extensions, ``docs/reference-api.md``).

Both lists take the inbox's filters (``editor.services.inbox.filters``): ``graph``,
``document``, ``node``, ``person``, ``from``, ``to``, ``q`` and ``run``. Resolving one item is
``POST /v1/runs/{id}/resume`` (``editor.api.runs``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Field, Query, Router

from editor.api.auth import AuthenticatedRequest
from editor.api.errors import error_body
from editor.api.inbox_schemas import (
    BulkDecisionIn,
    BulkDecisionOut,
    ClaimIn,
    ClaimOut,
)
from editor.api.paging import PageQuery
from editor.api.schemas import ErrorOut, InboxListOut, InboxResolvedOut
from editor.services import inbox
from editor.services.errors import InvalidRequest
from editor.services.inbox import bulk, claims, exports, queue
from editor.services.inbox import log as inbox_log
from editor.services.inbox.filters import InboxFilter, read_filter
from editor.streams.lists import paged_response

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


class PendingQuery(InboxQuery):
    #: ``mine``, ``groups`` or ``all`` (operators); absent: every item, oldest first.
    view: str | None = Field(None, max_length=20)


class LogQuery(InboxQuery):
    #: One kind of entry (``decision``, ``vote``, ``deadline``, ``escalation``, ``reminder``,
    #: ``overdue``, ``claim``); absent: every kind.
    kind: str | None = Field(None, max_length=20)


class ExportQuery(LogQuery):
    format: str = Field("jsonl", max_length=10)


@router.get(
    "/inbox", response={200: InboxListOut, 400: ErrorOut, 403: ErrorOut}, summary="Pending items"
)
def pending(request: AuthenticatedRequest, query: Query[PendingQuery]) -> dict[str, Any]:
    """Gates, budgets and reconciliations waiting for a person. With `view`, the inbox for the
    caller, sorted by due time (none last) then oldest first: `mine` the cards they may decide
    now under each run's approval policy, `groups` the cards their groups are named for, `all`
    every card (operators). Without it, every item, oldest first. `graph` keeps one graph's
    items (its full hash); `document` the items whose card shows that document (its slug),
    including runs started from a graph hash that document froze first; `node` one node id;
    `person` the runs someone started (username); `from`/`to` the items recorded on or after
    / on or before a day (`YYYY-MM-DD`, UTC); `q` text in the prompt; `run` one run's items
    (its id)."""
    filters = query.filters()
    if query.view is None or not query.view.strip():
        page = inbox.pending_items(filters, cursor=query.cursor, limit=query.limit)
    else:
        person = queue.person_of(request.auth)
        view = queue.read_view(query.view, person)
        page = queue.waiting_cards(
            request.auth, view, filters, cursor=query.cursor, limit=query.limit, person=person
        )
    return {"items": page.items, "next": page.next}


@router.get(
    "/inbox/resolved", response={200: InboxResolvedOut, 400: ErrorOut}, summary="Decision log"
)
def resolved(request: HttpRequest, query: Query[LogQuery]) -> dict[str, Any]:
    """Everything decided about the cards and what happened to them, newest first: each
    resolution (`Resumed`, `BudgetRaised`, `Reconciled`) with who decided what, when, and the
    hash of the gate schema the input was checked against; approvals counted toward a quorum,
    resolutions by a gate's due time, escalations, reminders, due times that found nothing to
    do, claims and releases (`entry` says which; `kind` keeps one of them). The same filters as
    `GET /v1/inbox`, with `person` the one who decided (or acted) and `q` searching the
    decision's comment and the prompt it answered. Paged by an opaque cursor: a page stays the
    same however many entries are added meanwhile."""
    kind = inbox_log.read_log_kind(query.kind)
    page = inbox_log.decision_log(
        query.filters(), kind=kind, cursor=query.cursor, limit=query.limit
    )
    return {"items": page.items, "next": page.next}


EXPORT_RESPONSES: dict[str, Any] = {
    "responses": {
        200: {
            "description": (
                "The decision log, streamed: one entry of `GET /v1/inbox/resolved` a line "
                "(`format=jsonl`), or a header row and one row an entry (`format=csv`)."
            ),
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    }
}


@router.get(
    "/inbox/resolved/export",
    response={400: ErrorOut},
    openapi_extra=EXPORT_RESPONSES,
    summary="The decision log as CSV or JSON lines",
)
def export(request: HttpRequest, query: Query[ExportQuery]) -> StreamingHttpResponse:
    """The whole decision log that the filters and `kind` keep, newest first, streamed a page
    at a time: `format=jsonl` (one entry of `GET /v1/inbox/resolved` a line) or `format=csv`
    (a header row, then one row an entry)."""
    if query.format not in exports.FORMATS:
        raise InvalidRequest("`format` must be csv or jsonl", "format")
    filters, kind = query.filters(), inbox_log.read_log_kind(query.kind)
    return paged_response(
        request,
        exports.header(query.format),
        lambda cursor: exports.export_page(query.format, filters, kind, cursor),
        exports.FORMATS[query.format],
        f"decision-log.{query.format}",
    )


def _claim_out(outcome: claims.ClaimOutcome) -> dict[str, Any]:
    return {
        "run": outcome.run,
        "node": outcome.node,
        "seq": outcome.seq,
        "scope": outcome.scope,
        "claimed_by": outcome.by,
        "claimed_at": outcome.at,
        "until": outcome.until,
    }


def _scope(given: list[tuple[str, int]] | None) -> list[list[Any]] | None:
    return [list(pair) for pair in given] if given else None


_CLAIM_ERRORS = {400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut}


@router.post(
    "/runs/{run}/claim",
    response={200: ClaimOut, **_CLAIM_ERRORS},
    summary="Claim a card: I'm on it",
)
def claim(request: AuthenticatedRequest, run: str, payload: ClaimIn) -> dict[str, Any]:
    """Claim the card of the run's item `node` (and `scope`; the oldest without them) for the
    caller, who must be able to decide it now (`403 not_an_approver`, `403 four_eyes`,
    `409 already_voted`), or renew their claim. Others see who is on it, and may still decide
    it. It holds for 30 minutes from the last claim; `409 claimed` names who holds it when
    someone else does; `409 not_suspended` when the item no longer waits."""
    return _claim_out(claims.claim(request.auth, run, payload.node, _scope(payload.scope)))


@router.post(
    "/runs/{run}/release",
    response={200: ClaimOut, **_CLAIM_ERRORS},
    summary="Release a claimed card",
)
def release(request: AuthenticatedRequest, run: str, payload: ClaimIn) -> dict[str, Any]:
    """Give up the caller's claim on the card; `409 not_claimed` when they do not hold it (it
    ran out, or it is someone else's)."""
    return _claim_out(claims.release(request.auth, run, payload.node, _scope(payload.scope)))


@router.post(
    "/inbox/decisions",
    response={200: BulkDecisionOut, 400: ErrorOut, 403: ErrorOut},
    summary="Decide several cards at once",
)
def decide(request: AuthenticatedRequest, payload: BulkDecisionIn) -> dict[str, Any]:
    """Decide up to 50 cards of one gate and one approval schema with one `input`: each is
    checked against its own run's policy and schema, recorded and logged on its own, as its
    own `POST /v1/runs/{id}/resume` would. A key of the schema that every card's value holds
    and `input` leaves out is taken from each card's own value. `200` with one result per card
    (`outcome`, or the `error` its own resume would have answered: `not_an_approver`,
    `four_eyes`, `already_voted`, `not_suspended`, `approval_schema_violation`, …); cards of
    more than one gate or schema are `400 mixed_cards` and nothing is recorded."""
    keys = [
        bulk.card_key(item.run, item.node, _scope(item.scope), f"items[{index}].run")
        for index, item in enumerate(payload.items)
    ]
    selection = bulk.select(request.auth, keys)
    outcome = bulk.decide(request.auth, selection, payload.input, payload.comment)
    return {
        "results": [
            {
                "run": result.run,
                "node": result.node,
                "seq": result.seq,
                "scope": result.scope,
                "outcome": result.outcome,
                "error": error_body(result.error) if result.error is not None else None,
            }
            for result in outcome.results
        ],
        "decided": outcome.decided,
        "failed": len(outcome.failed),
    }
