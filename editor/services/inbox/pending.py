"""The pending items: the parked runs, oldest first, expanded into one item per open gate,
budget or lost write, and paged by a cursor on ``(parked_at, run, seq)``; the pending count."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from editor.engine.approvals import gate_policy_of
from editor.engine.states import PARKED
from editor.engine.status import scope_key
from editor.models import InboxCard, Run, RunEvent, Version
from editor.services.errors import InvalidCursor, UnknownRun
from editor.services.inbox.filters import NO_FILTER, InboxFilter
from editor.services.inbox.items import InboxItem
from editor.services.inbox.names import node_names
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of
from editor.waiting import escalated_names

__all__ = [
    "Claim",
    "Label",
    "RunFacts",
    "first_label",
    "graph_titles",
    "items_of",
    "label_of",
    "pending_count",
    "pending_item",
    "pending_items",
]

_PARKED = tuple(sorted(state.value for state in PARKED))
#: The events that open an item, whose payloads the item-level filters look into.
_PARKING_KINDS = ("BudgetExceeded", "ReconciliationNeeded", "Suspended")


def graph_titles(hashes: Iterable[str]) -> dict[str, list[tuple[int | None, str, str, int]]]:
    """``graph hash → [(document id, slug, title, version number)]``, in one query."""
    found: dict[str, list[tuple[int | None, str, str, int]]] = {}
    rows = (
        Version.objects.filter(graph_id__in=set(hashes))
        .order_by("document_id", "number")
        .values_list("graph_id", "document_id", "document__slug", "document__title", "number")
    )
    for digest, document_id, slug, title, number in rows:
        found.setdefault(digest, []).append((document_id, slug, title, number))
    return found


#: What the line above a card names: the run's document (slug, title) and the version number
#: of its graph in it.
Label = tuple[str | None, str | None, int | None]


def label_of(run: Run, versions: dict[str, list[tuple[int | None, str, str, int]]]) -> Label:
    """The run's document (slug, title) and the version number of its graph in it; for a
    run started without a document, the first document that froze this graph."""
    if run.document is not None:
        frozen = versions.get(run.graph_id, [])
        number = next((n for doc, _, _, n in frozen if doc == run.document_id), None)
        return run.document.slug, run.document.title, number
    return first_label(run.graph_id, versions)


def first_label(graph: str, versions: dict[str, list[tuple[int | None, str, str, int]]]) -> Label:
    """The label of a run of ``graph`` started without a document: the first document that
    froze the graph (none when none did)."""
    frozen = versions.get(graph)
    if frozen:
        _, slug, title, number = frozen[0]
        return slug, title, number
    return None, None, None


class RunFacts(Protocol):
    """What an item reads of its run (a :class:`Run`, or a row of the inbox's page query)."""

    @property
    def id(self) -> Any: ...

    @property
    def graph_id(self) -> Any: ...

    @property
    def approval_policy(self) -> Any: ...

    @property
    def created_by_id(self) -> Any: ...


def _item(
    run: RunFacts,
    raw: dict[str, Any],
    label: Label,
    names: dict[str, str],
    claim: Claim | None = None,
    now: datetime | None = None,
) -> InboxItem:
    slug, title, number = label
    node = str(raw.get("node"))
    gate = raw.get("kind") == "gate" and raw.get("wait") != "signal"
    groups, users = escalated_names(raw) if gate else ([], [])
    escalated = raw.get("escalated") if gate else None
    claimed_by, claimed_at, claim_until = claim if claim is not None else (None, None, None)
    return InboxItem(
        kind=str(raw.get("kind")),
        run=str(run.id),
        graph_hash=run.graph_id,
        node=node,
        seq=int(raw.get("seq", 0)),
        suspended_at=str(raw.get("at", "")),
        document=slug,
        document_title=title,
        version=number,
        node_name=names.get(node),
        scope=raw.get("scope") or None,
        reason=raw.get("reason"),
        input_schema=raw.get("input_schema"),
        value=raw.get("value"),
        budget=raw.get("budget"),
        observed=raw.get("observed"),
        tool=raw.get("tool"),
        call=raw.get("call"),
        tool_input=raw.get("input"),
        policy=gate_policy_of(run.approval_policy, node) if gate else None,
        votes=tuple(raw.get("votes") or ()) if gate else (),
        starter=run.created_by_id,
        recorded_policy=run.approval_policy if gate else None,
        escalated_at=str(escalated.get("at")) if isinstance(escalated, dict) else None,
        escalated_groups=tuple(groups),
        escalated_users=tuple(users),
        claimed_by=claimed_by,
        claimed_at=claimed_at,
        claim_until=claim_until,
        now=now,
    )


def _items_of(
    runs: list[Run], skip: tuple[str, int] | None = None, filters: InboxFilter = NO_FILTER
) -> list[tuple[Run, dict[str, Any]]]:
    expanded = []
    for run in runs:
        pending = (run.status or {}).get("pending") or []
        for raw in sorted(pending, key=lambda entry: int(entry.get("seq", 0))):
            if raw.get("wait") == "signal":  # a system owes it: nobody's task (spec 08)
                continue
            if skip is not None and str(run.id) == skip[0] and int(raw.get("seq", 0)) <= skip[1]:
                continue
            if filters.item_level and not filters.keeps_item(
                raw.get("node"), raw.get("at"), raw.get("reason")
            ):
                continue
            expanded.append((run, raw))
    return expanded


#: A card's live claim: who, since when, until when.
Claim = tuple[str | None, datetime | None, datetime | None]


def items_of(
    pairs: Sequence[tuple[RunFacts, dict[str, Any]]],
    claims: dict[tuple[str, int], Claim] | None = None,
    now: datetime | None = None,
    *,
    labels: dict[str, Label] | None = None,
) -> list[InboxItem]:
    """The items of these runs' pending entries, as cards show them (two queries at most: the
    versions of their graphs, and the names of the graphs this process has not met);
    ``claims``: the live claims by ``(run, seq)``; ``labels``: the label of the runs whose
    caller read it (by run id; a run that is not a :class:`Run` must have its label there):
    the versions are read for the others only."""
    labels = labels or {}
    hashes = {run.graph_id for run, _ in pairs}
    unlabelled = {run.graph_id for run, _ in pairs if str(run.id) not in labels}
    versions = graph_titles(unlabelled) if unlabelled else {}
    names = node_names(hashes) if hashes else {}
    claims = claims or {}
    items = []
    for run, raw in pairs:
        label = labels.get(str(run.id))
        if label is None:
            label = label_of(run, versions) if isinstance(run, Run) else (None, None, None)
        claim = claims.get((str(run.id), int(raw.get("seq", 0))))
        items.append(_item(run, raw, label, names.get(run.graph_id, {}), claim, now))
    return items


def _parked() -> Any:
    """The parked runs. ``parked_at`` is set exactly while a run is parked (the store keeps it
    with the state), and the partial indexes over it (``run_parked_order``,
    ``run_parked_graph``) let the first page walk them in order instead of sorting them all."""
    # A test run's gates are its author's to decide, never the approvers' (test_runs).
    return Run.objects.filter(
        parked_at__isnull=False, state__in=_PARKED, test_revision__isnull=True
    )


def _parked_runs() -> Any:
    return (
        _parked()
        .select_related("document")
        .only(
            "id",
            "graph",
            "status",
            "parked_at",
            "document",
            "document__slug",
            "document__title",
            "approval_policy",
            "created_by",
        )
    )


def _filtered(runs: Any, filters: InboxFilter) -> Any:
    """The parked runs that may hold an item ``filters`` keeps: the run-level parts exactly,
    the item-level ones through the events that opened items (re-checked on each item)."""
    if filters.matches_nothing:
        return runs.none()
    runs = runs.filter(filters.on_run())
    if filters.person is not None:
        runs = runs.filter(created_by__username=filters.person)
    if filters.until_moment is not None:
        # parked_at is the run's oldest open item: one recorded by then means parked_at is too.
        runs = runs.filter(parked_at__lt=filters.until_moment)
    if filters.item_level:
        opened = RunEvent.objects.filter(
            filters.on_event(), run_id=OuterRef("pk"), kind__in=_PARKING_KINDS
        )
        if filters.search is not None:
            opened = opened.filter(payload__reason__icontains=filters.search)
        runs = runs.filter(Exists(opened))
    return runs


def pending_items(
    filters: InboxFilter = NO_FILTER,
    *,
    cursor: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> Page[InboxItem]:
    """What waits for a person, oldest first, kept by ``filters``.

    Without item-level filters every parked run holds at least one item, so ``limit + 2``
    runs (the cursor's own run may have nothing left) are always enough for a page: one
    query. With them, a run may hold none, and further runs are read until the page fills."""
    ordered = _filtered(_parked_runs(), filters).order_by("parked_at", "id")
    runs = ordered
    skip: tuple[str, int] | None = None
    if cursor is not None:
        parked, key, seq = decode_cursor(cursor, (str, str, int))
        try:
            parked_at = datetime.fromisoformat(parked)
            pk = uuid.UUID(key)
        except ValueError:
            raise InvalidCursor() from None
        runs = runs.filter(Q(parked_at__gt=parked_at) | Q(parked_at=parked_at, id__gte=pk))
        skip = (str(pk), seq)
    batch = limit + 2
    pairs: list[tuple[Run, dict[str, Any]]] = []
    while True:
        fetched = list(runs[:batch])
        pairs.extend(_items_of(fetched, skip, filters))
        if len(pairs) > limit or len(fetched) < batch:
            break
        last = fetched[-1]
        runs = ordered.filter(
            Q(parked_at__gt=last.parked_at) | Q(parked_at=last.parked_at, id__gt=last.id)
        )
    page = page_of(pairs[: limit + 1], limit, _cursor_key)
    return Page(items_of(page.items), page.next)


def _cursor_key(pair: tuple[Run, dict[str, Any]]) -> list[Any]:
    run, raw = pair
    assert run.parked_at is not None  # the inbox reads parked runs only, which all have one
    return [run.parked_at.isoformat(), str(run.id), int(raw.get("seq", 0))]


def pending_item(run_id: str, node: str | None, scope: Any = None) -> tuple[Run, InboxItem | None]:
    """The run, read once, and its pending item at ``node`` (and ``scope``), or its oldest
    one; ``None`` when it no longer waits there. Raises :class:`UnknownRun`."""
    try:
        key = uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None
    run = Run.objects.select_related("document").filter(pk=key).first()
    if run is None:
        raise UnknownRun(str(run_id))
    if run.state not in _PARKED or run.test_revision is not None:
        return run, None
    pending = (run.status or {}).get("pending") or []
    wanted = scope_key(scope)
    for raw in pending:
        if raw.get("wait") == "signal":
            continue
        if node is None or (raw.get("node") == node and scope_key(raw.get("scope")) == wanted):
            now = timezone.now()
            claims = _live_claims(run, int(raw.get("seq", 0)), now)
            return run, items_of([(run, raw)], claims, now)[0]
    return run, None


def _live_claims(run: Run, seq: int, now: datetime) -> dict[tuple[str, int], Claim]:
    card = (
        InboxCard.objects.filter(run_id=run.pk, seq=seq, claim_until__gt=now)
        .select_related("claimed_by")
        .only("claimed_at", "claim_until", "claimed_by__username")
        .first()
    )
    if card is None or card.claimed_by is None:
        return {}
    return {(str(run.pk), seq): (card.claimed_by.username, card.claimed_at, card.claim_until)}


def pending_count() -> int:
    """How many runs wait for a person (the navigation bar's count): one ``COUNT``."""
    return _parked().count()
