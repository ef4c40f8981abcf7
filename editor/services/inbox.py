"""The approval inbox (spec 05 *Inbox*, spec 06 *Approval inbox*): what waits for a person,
and the decisions people made.

**Pending items** are the open items of the runs parked in ``suspended``, ``budget_exceeded``
or ``needs_reconciliation``: each run's ``status["pending"]`` (the engine's fold, stored with
every append), one item per gate, budget or lost write. Runs are read oldest first by
``parked_at`` — when the run's *oldest* open item was recorded, kept by the store — through
the ``(state, parked_at)`` index, and their items are expanded in ``seq`` order. A page is a
constant number of queries however many items it holds: the runs (with their documents), the
versions of the page's graphs, and — only the first time a process meets a graph — the
graph's canonical bytes, from which the node names are read once and kept (frozen graphs
never change).

**The pending count** in the navigation bar counts *runs* waiting for a person, not items:
one ``COUNT`` on the same index, whatever the number of items. A run waiting at several gates
at once (a map of gates) counts once; its cards all appear in the inbox.

**The decision log** (the resolution events, newest first) is :mod:`editor.services.inbox_log`;
the filters both share are :mod:`editor.services.inbox_filters`.

Resolving goes through :func:`editor.services.runs.resume`, the one place that records a
resolution (exactly once, checked against the recorded schema).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.db import connection
from django.db.models import Exists, OuterRef, Q

from editor.engine.states import PARKED
from editor.engine.status import scope_key
from editor.graph import short_hash
from editor.models import FrozenGraph, Run, RunEvent, Version
from editor.services.access import can_approve, can_operate
from editor.services.errors import InvalidCursor, UnknownRun
from editor.services.inbox_filters import NO_FILTER, InboxFilter, document_runs
from editor.services.links import card_id
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of

__all__ = [
    "GraphChoice",
    "InboxItem",
    "graph_choices",
    "may_resolve",
    "pending_count",
    "pending_item",
    "pending_items",
    "suggested_limit",
]

_PARKED = tuple(sorted(state.value for state in PARKED))
#: The events that open an item, whose payloads the item-level filters look into.
_PARKING_KINDS = ("BudgetExceeded", "ReconciliationNeeded", "Suspended")

#: How many graphs the filter offers (the graphs with the most recent waiting runs).
GRAPH_CHOICES = 100


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def may_resolve(user: Any, kind: str) -> bool:
    """A gate needs an approver; a budget or a reconciliation an operator (spec 06)."""
    return can_approve(user) if kind == "gate" else can_operate(user)


def event_time(text: str) -> datetime | None:
    """An event's ``recorded_at`` (RFC 3339, ``Z``) as a datetime; ``None`` when unreadable."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One card of the inbox: a pending gate, budget or reconciliation of one run."""

    kind: str
    run: str
    graph_hash: str
    node: str
    seq: int
    #: The parking event's ``recorded_at`` (RFC 3339, UTC).
    suspended_at: str
    document: str | None = None
    document_title: str | None = None
    version: int | None = None
    node_name: str | None = None
    scope: list[Any] | None = None
    # gate
    reason: str | None = None
    input_schema: Any = None
    value: Any = None
    # budget
    budget: dict[str, Any] | None = None
    observed: Any = None
    # reconciliation
    tool: str | None = None
    call: Any = None
    tool_input: Any = None

    @property
    def card_id(self) -> str:
        return card_id(self.run, self.seq)

    @property
    def display_name(self) -> str:
        return self.node_name or self.node

    @property
    def waiting_since(self) -> datetime | None:
        return event_time(self.suspended_at)

    @property
    def waiting_since_text(self) -> str:
        """``waiting_since`` as ``account/_time.html`` shows a moment, without the include
        (the inbox's first page shows 50 of them)."""
        moment = self.waiting_since
        return moment.strftime("%Y-%m-%d %H:%M") if moment else ""

    @property
    def waiting_since_iso(self) -> str:
        moment = self.waiting_since
        return moment.isoformat() if moment else ""

    @property
    def value_text(self) -> str:
        return pretty_json(self.value)

    @property
    def tool_input_text(self) -> str:
        return pretty_json(self.tool_input)

    @property
    def schema_text(self) -> str:
        return pretty_json(self.input_schema)

    @property
    def suggested_limit(self) -> int | None:
        return suggested_limit(self.budget, self.observed) if self.kind == "budget" else None

    def as_json(self) -> dict[str, Any]:
        """The item as ``GET /v1/inbox`` lists it."""
        body: dict[str, Any] = {
            "kind": self.kind,
            "run": self.run,
            "graph_hash": self.graph_hash,
            "document": self.document,
            "node": self.node,
            "node_name": self.node_name,
            "scope": self.scope,
            "seq": self.seq,
            "suspended_at": self.suspended_at,
        }
        if self.kind == "gate":
            body.update(reason=self.reason, input_schema=self.input_schema, value=self.value)
        elif self.kind == "budget":
            body.update(budget=self.budget, observed=self.observed)
        else:
            body.update(tool=self.tool, call=self.call, input=self.tool_input)
        return body


def suggested_limit(budget: dict[str, Any] | None, observed: Any) -> int:
    """The reference inbox's suggestion for a new budget limit (upstream facts §7): twice the
    old limit, and never below what was observed. Our engine wants a whole number *above*
    what was observed, hence the ``+ 1`` on the floor."""
    limit = (budget or {}).get("limit")
    old = limit if isinstance(limit, int | float) and not isinstance(limit, bool) else 0
    seen = observed if isinstance(observed, int | float) and not isinstance(observed, bool) else 0
    floor = math.floor(max(seen, old)) + 1
    return max(floor, math.ceil(2 * old))


@dataclass(frozen=True, slots=True)
class GraphChoice:
    graph_hash: str
    title: str | None
    version: int | None

    @property
    def label(self) -> str:
        short = short_hash(self.graph_hash)
        if self.title:
            version = f" v{self.version}" if self.version is not None else ""
            return f"{self.title}{version} ({short})"
        return f"sha256:{short}"


# --- Node names, read once per graph per process ---------------------------------------------

_NAMES_LIMIT = 512
_names: dict[str, dict[str, str]] = {}
_names_lock = threading.Lock()


def _collect_names(value: Any, names: dict[str, str]) -> None:
    """Every node's ``name`` in a graph's wire form, embedded subgraphs included (a node of
    a map's body subgraph can be a gate too); the first of two equal ids wins."""
    if isinstance(value, dict):
        payload = value.get("payload")
        if "kind" in value and isinstance(payload, dict):
            node_id, name = payload.get("id"), payload.get("name")
            if isinstance(node_id, str) and isinstance(name, str):
                names.setdefault(node_id, name)
        for item in value.values():
            if isinstance(item, dict | list):
                _collect_names(item, names)
    elif isinstance(value, list):
        for item in value:
            _collect_names(item, names)


def node_names(hashes: Iterable[str]) -> dict[str, dict[str, str]]:
    """``graph hash → {node id: name}`` for these graphs: at most one query, for the graphs
    this process has not read yet."""
    wanted = set(hashes)
    with _names_lock:
        missing = [digest for digest in wanted if digest not in _names]
    if missing:
        rows = FrozenGraph.objects.filter(hash__in=missing).values_list("hash", "canonical")
        read: dict[str, dict[str, str]] = {}
        for digest, canonical in rows:
            names: dict[str, str] = {}
            # Stored graphs are canonical JSON; a row that is not would only lose its names.
            with contextlib.suppress(orjson.JSONDecodeError):
                _collect_names(orjson.loads(bytes(canonical)), names)
            read[digest] = names
        with _names_lock:
            if len(_names) + len(read) > _NAMES_LIMIT:
                _names.clear()
            _names.update(read)
    with _names_lock:
        return {digest: _names.get(digest, {}) for digest in wanted}


def forget_node_names() -> None:
    """Empty the node-name cache (for tests that count queries from a cold start)."""
    with _names_lock:
        _names.clear()


# --- Pending items ---------------------------------------------------------------------------


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


def label_of(
    run: Run, versions: dict[str, list[tuple[int | None, str, str, int]]]
) -> tuple[str | None, str | None, int | None]:
    """The run's document (slug, title) and the version number of its graph in it; for a
    run started without a document, the first document that froze this graph."""
    frozen = versions.get(run.graph_id, [])
    if run.document_id is not None:
        number = next((n for doc, _, _, n in frozen if doc == run.document_id), None)
        return run.document.slug, run.document.title, number
    if frozen:
        _, slug, title, number = frozen[0]
        return slug, title, number
    return None, None, None


def _item(
    run: Run,
    raw: dict[str, Any],
    label: tuple[str | None, str | None, int | None],
    names: dict[str, str],
) -> InboxItem:
    slug, title, number = label
    node = str(raw.get("node"))
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
    )


def _items_of(
    runs: list[Run], skip: tuple[str, int] | None = None, filters: InboxFilter = NO_FILTER
) -> list[tuple[Run, dict[str, Any]]]:
    expanded = []
    for run in runs:
        pending = (run.status or {}).get("pending") or []
        for raw in sorted(pending, key=lambda entry: int(entry.get("seq", 0))):
            if skip is not None and str(run.id) == skip[0] and int(raw.get("seq", 0)) <= skip[1]:
                continue
            if filters.item_level and not filters.keeps_item(
                raw.get("node"), raw.get("at"), raw.get("reason")
            ):
                continue
            expanded.append((run, raw))
    return expanded


def _cards(pairs: list[tuple[Run, dict[str, Any]]]) -> list[InboxItem]:
    hashes = {run.graph_id for run, _ in pairs}
    versions = graph_titles(hashes) if hashes else {}
    names = node_names(hashes) if hashes else {}
    return [
        _item(run, raw, label_of(run, versions), names.get(run.graph_id, {})) for run, raw in pairs
    ]


def _parked() -> Any:
    """The parked runs. ``parked_at`` is set exactly while a run is parked (the store keeps it
    with the state), and the partial indexes over it (``run_parked_order``,
    ``run_parked_graph``) let the first page walk them in order instead of sorting them all."""
    return Run.objects.filter(parked_at__isnull=False, state__in=_PARKED)


def _parked_runs() -> Any:
    return (
        _parked()
        .select_related("document")
        .only("id", "graph", "status", "parked_at", "document", "document__slug", "document__title")
    )


def _filtered(runs: Any, filters: InboxFilter) -> Any:
    """The parked runs that may hold an item ``filters`` keeps: the run-level parts exactly,
    the item-level ones through the events that opened items (re-checked on each item)."""
    if filters.matches_nothing:
        return runs.none()
    if filters.run is not None:
        runs = runs.filter(id=filters.run)
    if filters.graph is not None:
        runs = runs.filter(graph_id=filters.graph)
    if filters.document is not None:
        runs = runs.filter(document_runs(filters.document))
    if filters.person is not None:
        runs = runs.filter(created_by__username=filters.person)
    if filters.until_moment is not None:
        # parked_at is the run's oldest open item: one recorded by then means parked_at is too.
        runs = runs.filter(parked_at__lt=filters.until_moment)
    if filters.item_level:
        opened = RunEvent.objects.filter(run_id=OuterRef("pk"), kind__in=_PARKING_KINDS)
        if filters.node is not None:
            opened = opened.filter(payload__node=filters.node)
        if filters.since_text is not None:
            opened = opened.filter(recorded_at__gte=filters.since_text)
        if filters.until_text is not None:
            opened = opened.filter(recorded_at__lt=filters.until_text)
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
    return Page(_cards(page.items), page.next)


def _cursor_key(pair: tuple[Run, dict[str, Any]]) -> list[Any]:
    run, raw = pair
    return [run.parked_at.isoformat(), str(run.id), int(raw.get("seq", 0))]


def pending_item(run_id: str, node: str | None, scope: Any = None) -> InboxItem | None:
    """One run's pending item at ``node`` (and ``scope``), or its oldest one; ``None`` when
    it no longer waits there. Raises :class:`UnknownRun`."""
    try:
        key = uuid.UUID(str(run_id))
    except ValueError:
        raise UnknownRun(str(run_id)) from None
    run = Run.objects.select_related("document").filter(pk=key).first()
    if run is None:
        raise UnknownRun(str(run_id))
    if run.state not in _PARKED:
        return None
    pending = (run.status or {}).get("pending") or []
    wanted = scope_key(scope)
    for raw in pending:
        if node is None or (raw.get("node") == node and scope_key(raw.get("scope")) == wanted):
            return _cards([(run, raw)])[0]
    return None


def pending_count() -> int:
    """How many runs wait for a person (the navigation bar's count): one ``COUNT``."""
    return _parked().count()


# A loose index scan over run_parked_graph (graph, parked_at) WHERE parked_at IS NOT NULL: one
# index probe per distinct graph, however many runs wait, where SELECT DISTINCT reads them all.
# Plain SQL that SQLite and PostgreSQL both run; parked_at is set exactly while a run is parked.
_PARKED_GRAPHS_SQL = """
WITH RECURSIVE graphs(graph_id) AS (
    SELECT MIN(graph_id) FROM editor_run WHERE parked_at IS NOT NULL
    UNION ALL
    SELECT (SELECT MIN(graph_id) FROM editor_run
            WHERE parked_at IS NOT NULL AND graph_id > graphs.graph_id)
    FROM graphs WHERE graphs.graph_id IS NOT NULL
)
SELECT graph_id FROM graphs WHERE graph_id IS NOT NULL LIMIT %s
"""


def _parked_graphs(limit: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(_PARKED_GRAPHS_SQL, [limit])
        return [row[0] for row in cursor.fetchall()]


def graph_choices() -> list[GraphChoice]:
    """The graphs that have something waiting, for the inbox's filter (two queries)."""
    hashes = _parked_graphs(GRAPH_CHOICES)
    versions = graph_titles(hashes) if hashes else {}
    choices = []
    for digest in hashes:
        first = versions.get(digest, [])
        title, number = (first[0][2], first[0][3]) if first else (None, None)
        choices.append(GraphChoice(digest, title, number))
    return sorted(choices, key=lambda choice: (choice.title is None, choice.label))
