"""The decision log (spec 05 *Inbox*, spec 06 *Approval inbox*; ``docs/inbox.md``, *The
decision log*): what was decided about the cards and what happened to them, newest first, kept
by the inbox's filters (:mod:`editor.services.inbox.filters`) and by the kind of entry; and the
receipt of one card. Two sources, merged by time:

* the runs' events: the resolutions (``Resumed``, ``BudgetRaised``, ``Reconciled``), a
  resolution by a gate's due time among them (``Resumed`` by "the deadline"), the votes of gates
  that need several approvals (``ApprovalVoted``) and the escalations (``GateEscalated``);
* the inbox's notes (``editor.card_models.InboxNote``): claims and their releases, reminders,
  due times that passed with nothing to do.

A gate's entry shows the approval policy its run recorded for it (*Approval policies*). Each
source is read newest first by its own id, a page at a time, and the cursor keeps where each
stopped: a page never shifts, however many entries are added meanwhile."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models import BooleanField, Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT

from editor.engine import DEADLINE
from editor.engine.approvals import gate_policy_of
from editor.models import DECISION_KINDS, RESOLUTION_KINDS, InboxNote, Run, RunEvent
from editor.services.errors import InvalidCursor, InvalidRequest
from editor.services.inbox import graph_titles
from editor.services.inbox.entries import (
    Decision,
    decision,
    note_entry,
    receipt,
    resolution_of,
)
from editor.services.inbox.filters import NO_FILTER, InboxFilter
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, encode_cursor
from editor.services.runs.log_reads import PayloadBytes

__all__ = [
    "LOG_KINDS",
    "Decision",
    "decision",
    "decision_log",
    "note_entry",
    "read_log_kind",
    "receipt",
    "resolution_of",
]

#: The kinds of entry, as ``?kind=`` names them: a person's decision, an approval counted
#: toward a quorum, a resolution by the deadline, an escalation, a reminder sent, a due time
#: that found nothing to do, and a claim taken or released.
LOG_KINDS = ("decision", "vote", "deadline", "escalation", "reminder", "overdue", "claim")
#: The notes' kinds each entry kind keeps (the others come from the events).
_NOTE_KINDS = {"reminder": ("reminder",), "overdue": ("overdue",), "claim": ("claim", "release")}
#: The decisions, as the decision log's partial index (``event_decisions``) spells them:
#: literal SQL, since SQLite takes a partial index only for a condition of literals, and with
#: it the newest decisions are the first entries of that index instead of a sort of them all.
_IS_DECISION = RawSQL(
    '"editor_runevent"."kind" IN ({})'.format(", ".join(f"'{kind}'" for kind in DECISION_KINDS)),
    (),
    output_field=BooleanField(),
)


def read_log_kind(value: Any) -> str | None:
    """The ``kind`` of entry the log keeps (one of :data:`LOG_KINDS`; blank: every kind).
    Raises :class:`InvalidRequest` naming ``kind`` for anything else."""
    text = str(value).strip() if value is not None else ""
    if not text:
        return None
    if text not in LOG_KINDS:
        raise InvalidRequest(
            f"`kind` must be one of {', '.join(LOG_KINDS)}, not {text[:20]!r}", "kind"
        )
    return text


def _event_kind(rows: Any, kind: str | None) -> Any:
    """The events of entry kind ``kind`` (``None``: all of them); ``None`` for a kind only
    notes hold."""
    if kind is None:
        return rows
    if kind in _NOTE_KINDS:
        return None
    if kind == "vote":
        return rows.filter(kind="ApprovalVoted")
    if kind == "escalation":
        return rows.filter(kind="GateEscalated")
    by_deadline = Q(kind="Resumed", payload__by=DEADLINE)
    if kind == "deadline":
        return rows.filter(by_deadline)
    return rows.filter(kind__in=RESOLUTION_KINDS).exclude(by_deadline)


def _prompted(filters: InboxFilter, node: Any) -> Any:
    """The ``Suspended`` events of the same run and node, earlier than the row, whose prompt
    holds the search."""
    assert filters.search is not None
    return RunEvent.objects.annotate(prompt_node=KT("payload__node")).filter(
        run_id=OuterRef("run_id"),
        seq__lt=OuterRef("seq"),
        kind="Suspended",
        prompt_node=node,
        payload__reason__icontains=filters.search,
    )


def _filtered(rows: Any, filters: InboxFilter) -> Any:
    if filters.matches_nothing:
        return rows.none()
    rows = rows.filter(filters.on_run("run__"), filters.on_event())
    if filters.person is not None:
        rows = rows.filter(payload__by=filters.person)
    if filters.search is not None:
        # The prompt is the Suspended event's that this resolution answered (same node,
        # earlier in the log); the comment is the resolution's own.
        rows = rows.annotate(resolved_node=KT("payload__node")).filter(
            Q(payload__comment__icontains=filters.search)
            | Exists(_prompted(filters, OuterRef("resolved_node")))
        )
    return rows


def _notes(filters: InboxFilter, kind: str | None) -> Any:
    """The notes ``filters`` and the entry ``kind`` keep; ``None`` for a kind only events
    hold."""
    if kind is not None and kind not in _NOTE_KINDS:
        return None
    notes = InboxNote.objects.all()
    if kind is not None:
        notes = notes.filter(kind__in=_NOTE_KINDS[kind])
    if filters.matches_nothing:
        return notes.none()
    notes = notes.filter(filters.on_run("run__"))
    if filters.node is not None:
        notes = notes.filter(node=filters.node)
    if filters.since_text is not None:
        notes = notes.filter(recorded_at__gte=filters.since_text)
    if filters.until_text is not None:
        notes = notes.filter(recorded_at__lt=filters.until_text)
    if filters.person is not None:
        notes = notes.filter(by=filters.person)
    if filters.search is not None:
        prompt = RunEvent.objects.filter(
            run_id=OuterRef("run_id"),
            seq=OuterRef("seq"),
            payload__reason__icontains=filters.search,
        )
        notes = notes.filter(Exists(prompt))
    return notes


_EVENT_FIELDS = (
    "id",
    "run_id",
    "seq",
    "kind",
    "payload",
    "recorded_at",
    "run__graph_id",
    "run__document__slug",
    "run__document__title",
)
_NOTE_FIELDS = (
    "id",
    "run_id",
    "seq",
    "node",
    "scope",
    "kind",
    "by",
    "recorded_at",
    "detail",
    "run__graph_id",
    "run__document__slug",
    "run__document__title",
)


def _cursor(cursor: str | None) -> tuple[int, int]:
    """Where each source goes on: below these ids (``0``: from the newest, the first page)."""
    if cursor is None:
        return 0, 0
    events, notes = decode_cursor(cursor, (int, int))
    if events < 0 or notes < 0:
        raise InvalidCursor()
    return events, notes


def _sized(events: Any, limit: int, max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
    """The newest of ``events`` whose payloads fit in ``max_bytes`` (at least one, at most
    ``limit + 1``), measured by the database first so that no payload past the bound is read;
    and whether the bound cut them short."""
    sized = list(events.order_by("-id").values_list("id", PayloadBytes())[: limit + 1])
    kept: list[int] = []
    total = 0
    for event_id, size in sized:
        if kept and total + size > max_bytes:
            break
        kept.append(event_id)
        total += size
    rows = list(RunEvent.objects.filter(id__in=kept).order_by("-id").values(*_EVENT_FIELDS))
    return rows, len(kept) < len(sized)


def _key(pair: tuple[str, dict[str, Any]]) -> tuple[str, bool, int]:
    return pair[1]["recorded_at"], pair[0] == "event", pair[1]["id"]


def decision_log(
    filters: InboxFilter = NO_FILTER,
    *,
    kind: str | None = None,
    cursor: str | None = None,
    limit: int = DEFAULT_LIMIT,
    max_bytes: int | None = None,
) -> Page[Decision]:
    """Every entry ``filters`` and the entry ``kind`` keep, newest first: a query a source a
    page (one more for the documents of runs started without one, one for the policies of the
    page's gates). ``max_bytes``: the page's events hold at most that much payload (at least
    one event), for a reader of the whole log (its exports)."""
    after_event, after_note = _cursor(cursor)
    events = _event_kind(_filtered(RunEvent.objects.filter(_IS_DECISION), filters), kind)
    notes = _notes(filters, kind)
    event_rows: list[dict[str, Any]] = []
    note_rows: list[dict[str, Any]] = []
    cut = False
    if events is not None:
        if after_event:
            events = events.filter(id__lt=after_event)
        if max_bytes is None:
            event_rows = list(events.order_by("-id").values(*_EVENT_FIELDS)[: limit + 1])
        else:
            event_rows, cut = _sized(events, limit, max_bytes)
    if notes is not None:
        if after_note:
            notes = notes.filter(id__lt=after_note)
        note_rows = list(notes.order_by("-id").values(*_NOTE_FIELDS)[: limit + 1])
    merged = sorted(
        [("event", row) for row in event_rows] + [("note", row) for row in note_rows],
        key=_key,
        reverse=True,
    )
    if cut:
        # Events past the bound were not read: nothing older than the last one read is shown
        # yet, or a later page would show an entry newer than this one's last.
        boundary = _key(("event", event_rows[-1]))
        merged = [pair for pair in merged if _key(pair) >= boundary]
    shown = merged[:limit]
    next_cursor = None
    if len(merged) > limit or cut:
        next_cursor = encode_cursor(
            [
                _bound("event", shown, event_rows, after_event),
                _bound("note", shown, note_rows, after_note),
            ]
        )
    return Page(_entries(shown), next_cursor)


def _bound(
    source: str,
    shown: list[tuple[str, dict[str, Any]]],
    fetched: list[dict[str, Any]],
    after: int,
) -> int:
    """Where the next page reads ``source`` from (below this id): its last entry shown; none
    shown, just above the newest it read (those are all older than this page's last); none
    read, nothing more (``1``): an entry added later is newer than any page already shown."""
    ids = [row["id"] for kind, row in shown if kind == source]
    if ids:
        return min(ids)
    if fetched:
        return max(row["id"] for row in fetched) + 1
    return after or 1


def _entries(shown: list[tuple[str, dict[str, Any]]]) -> list[Decision]:
    # A run started from a graph hash alone shows the document that froze the graph first,
    # as its card did.
    rows = [row for _, row in shown]
    docless = {row["run__graph_id"] for row in rows if row["run__document__slug"] is None}
    frozen = graph_titles(docless) if docless else {}
    policies = _policies(
        {row["run_id"] for source, row in shown if source == "note" or row["kind"] in _GATE_KINDS}
    )
    entries = []
    for source, row in shown:
        slug, title = row["run__document__slug"], row["run__document__title"]
        if slug is None and frozen.get(row["run__graph_id"]):
            _, slug, title, _ = frozen[row["run__graph_id"]][0]
        if source == "note":
            policy = _gate_policy(policies, row["run_id"], row["node"])
            entries.append(note_entry(row, document=slug, document_title=title, policy=policy))
            continue
        payload = row["payload"] if isinstance(row["payload"], dict) else {}
        policy = None
        if row["kind"] in _GATE_KINDS:
            policy = _gate_policy(policies, row["run_id"], payload.get("node"))
        entry = decision(
            row["kind"],
            row["payload"],
            run=str(row["run_id"]),
            graph_hash=row["run__graph_id"],
            seq=row["seq"],
            at=row["recorded_at"],
            document=slug,
            document_title=title,
            policy=policy,
        )
        entries.append(replace(entry, source=("event", row["id"])))
    return entries


_GATE_KINDS = frozenset({"Resumed", "ApprovalVoted", "GateEscalated"})


def _policies(run_ids: set[Any]) -> dict[Any, Any]:
    """The approval policy each of these runs recorded (one query; none when none)."""
    if not run_ids:
        return {}
    rows = Run.objects.filter(pk__in=run_ids, approval_policy__isnull=False)
    return dict(rows.values_list("pk", "approval_policy"))


def _gate_policy(policies: dict[Any, Any], run_id: Any, node: Any) -> dict[str, Any] | None:
    recorded = policies.get(run_id)
    if recorded is None:
        return None
    return gate_policy_of(recorded, str(node)).as_json()
