"""The decision log (spec 05 *Inbox*, spec 06 *Approval inbox*): the resolution events
(``Resumed``, ``BudgetRaised``, ``Reconciled``), newest first, kept by the inbox's filters
(:mod:`editor.services.inbox.filters`), and the receipt of one card."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import BooleanField, Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT

from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.engine.status import scope_key
from editor.graph.jsonio import pretty_json
from editor.models import RESOLUTION_KINDS, RunEvent
from editor.services.inbox import graph_titles
from editor.services.inbox.filters import NO_FILTER, InboxFilter
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of

__all__ = ["Decision", "decision", "decision_log", "receipt", "resolution_of"]

#: Resolution event kind → the kind of item it resolves.
_RESOLVED_KIND = {"Resumed": "gate", "BudgetRaised": "budget", "Reconciled": "reconciliation"}
_RESOLUTIONS = RESOLUTION_KINDS
#: The resolutions, as the decision log's partial index (``event_resolutions``) spells them:
#: literal SQL, since SQLite takes a partial index only for a condition of literals, and with
#: it the newest decisions are the first entries of that index instead of a sort of them all.
_IS_RESOLUTION = RawSQL(
    '"editor_runevent"."kind" IN ({})'.format(", ".join(f"'{kind}'" for kind in _RESOLUTIONS)),
    (),
    output_field=BooleanField(),
)


@dataclass(frozen=True, slots=True)
class Decision:
    """One entry of the decision log (``GET /v1/inbox/resolved``)."""

    kind: str
    run: str
    graph_hash: str
    node: str
    by: str | None
    at: str
    input: Any
    seq: int
    comment: str | None = None
    schema_hash: str | None = None
    document: str | None = None
    document_title: str | None = None
    scope: list[Any] | None = None

    @property
    def input_text(self) -> str:
        return pretty_json(self.input)

    @property
    def decided_at(self) -> datetime | None:
        return event_time(self.at)


def decision(
    kind: str,
    payload: Any,
    *,
    run: str,
    graph_hash: str,
    seq: int,
    at: str,
    document: str | None = None,
    document_title: str | None = None,
) -> Decision:
    """The decision a resolution event (``kind``, ``payload``) records: the one builder of the
    log's entries and of a card's receipt."""
    payload = payload if isinstance(payload, dict) else {}
    comment = payload.get("comment")
    return Decision(
        kind=_RESOLVED_KIND.get(kind, kind),
        run=run,
        graph_hash=graph_hash,
        node=str(payload.get("node")),
        by=payload.get("by"),
        at=at,
        input=_decision_input(kind, payload),
        seq=seq,
        comment=comment if isinstance(comment, str) else None,
        schema_hash=payload.get("schema_hash"),
        document=document,
        document_title=document_title,
        scope=payload.get("scope") or None,
    )


def receipt(run: str, graph_hash: str, events: Iterable[Envelope]) -> Decision | None:
    """A card's receipt, from the events its resolution recorded (nothing read again)."""
    for envelope in events:
        if envelope.kind in _RESOLUTIONS:
            return decision(
                envelope.kind,
                envelope.payload,
                run=run,
                graph_hash=graph_hash,
                seq=envelope.seq,
                at=envelope.recorded_at,
            )
    return None


def _decision_input(kind: str, payload: dict[str, Any]) -> Any:
    if kind == "Resumed":
        return payload.get("input")
    if kind == "BudgetRaised":
        return {"limit": payload.get("limit")}
    if payload.get("retry") is True:
        return {"retry": True}
    return {"output": payload.get("output")}


def _filtered(rows: Any, filters: InboxFilter) -> Any:
    if filters.matches_nothing:
        return rows.none()
    rows = rows.filter(filters.on_run("run__"), filters.on_event())
    if filters.person is not None:
        rows = rows.filter(payload__by=filters.person)
    if filters.search is not None:
        # The prompt is the Suspended event's that this resolution answered (same node,
        # earlier in the log); the comment is the resolution's own.
        prompted = RunEvent.objects.annotate(prompt_node=KT("payload__node")).filter(
            run_id=OuterRef("run_id"),
            seq__lt=OuterRef("seq"),
            kind="Suspended",
            prompt_node=OuterRef("resolved_node"),
            payload__reason__icontains=filters.search,
        )
        rows = rows.annotate(resolved_node=KT("payload__node")).filter(
            Q(payload__comment__icontains=filters.search) | Exists(prompted)
        )
    return rows


def decision_log(
    filters: InboxFilter = NO_FILTER, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> Page[Decision]:
    """Every resolution ``filters`` keeps, newest first: one query a page (one more for the
    documents of runs started without one). Paged by a cursor on the event's id, so a page
    stays the same however many decisions are made meanwhile."""
    rows = _filtered(RunEvent.objects.filter(_IS_RESOLUTION), filters).order_by("-id")
    if cursor is not None:
        (last,) = decode_cursor(cursor, (int,))
        rows = rows.filter(id__lt=last)
    fetched = list(
        rows.values(
            "id",
            "run_id",
            "seq",
            "kind",
            "payload",
            "recorded_at",
            "run__graph_id",
            "run__document__slug",
            "run__document__title",
        )[: limit + 1]
    )
    page = page_of(fetched, limit, lambda row: [row["id"]])
    # A run started from a graph hash alone shows the document that froze the graph first,
    # as its card did.
    docless = {row["run__graph_id"] for row in page.items if row["run__document__slug"] is None}
    frozen = graph_titles(docless) if docless else {}
    decisions = []
    for row in page.items:
        slug, title = row["run__document__slug"], row["run__document__title"]
        if slug is None and frozen.get(row["run__graph_id"]):
            _, slug, title, _ = frozen[row["run__graph_id"]][0]
        decisions.append(
            decision(
                row["kind"],
                row["payload"],
                run=str(row["run_id"]),
                graph_hash=row["run__graph_id"],
                seq=row["seq"],
                at=row["recorded_at"],
                document=slug,
                document_title=title,
            )
        )
    return Page(decisions, page.next)


def resolution_of(run_id: str, node: str, scope: Any = None) -> Decision | None:
    """The latest resolution of ``node`` (at ``scope``) in a run: the receipt of a card."""
    wanted = scope_key(scope)
    rows = (
        RunEvent.objects.filter(run_id=run_id, kind__in=_RESOLUTIONS)
        .order_by("-seq")
        .select_related("run")
        .only("seq", "kind", "payload", "recorded_at", "run__graph_id")
    )
    for row in rows[:50]:
        payload = row.payload if isinstance(row.payload, dict) else {}
        if payload.get("node") != node or scope_key(payload.get("scope")) != wanted:
            continue
        return decision(
            row.kind,
            payload,
            run=str(run_id),
            graph_hash=row.run.graph_id,
            seq=row.seq,
            at=row.recorded_at,
        )
    return None
