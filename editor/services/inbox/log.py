"""The decision log (spec 05 *Inbox*, spec 06 *Approval inbox*): the resolution events
(``Resumed``, ``BudgetRaised``, ``Reconciled``) and the votes of gates that need several
approvals (``ApprovalVoted``), newest first, kept by the inbox's filters
(:mod:`editor.services.inbox.filters`), and the receipt of one card. A gate's entry shows the
approval policy its run recorded for it (``docs/inbox.md``, *Approval policies*)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import BooleanField, Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT

from editor.engine.approvals import gate_policy_of
from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.engine.status import scope_key
from editor.graph.jsonio import pretty_json
from editor.models import DECISION_KINDS, RESOLUTION_KINDS, Run, RunEvent
from editor.services.inbox import graph_titles
from editor.services.inbox.filters import NO_FILTER, InboxFilter
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of

__all__ = ["Decision", "decision", "decision_log", "receipt", "resolution_of"]

#: Decision event kind → the kind of item it answers.
_RESOLVED_KIND = {
    "Resumed": "gate",
    "ApprovalVoted": "gate",
    "BudgetRaised": "budget",
    "Reconciled": "reconciliation",
}
_RESOLUTIONS = RESOLUTION_KINDS
#: The decisions, as the decision log's partial index (``event_decisions``) spells them:
#: literal SQL, since SQLite takes a partial index only for a condition of literals, and with
#: it the newest decisions are the first entries of that index instead of a sort of them all.
_IS_DECISION = RawSQL(
    '"editor_runevent"."kind" IN ({})'.format(", ".join(f"'{kind}'" for kind in DECISION_KINDS)),
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
    #: An approval counted toward a quorum, the gate still waiting (``ApprovalVoted``).
    vote: bool = False
    #: For a gate resolved by several people: the approvals before this one
    #: (``{"by", "at", "seq"}``), and how many it needed.
    votes: tuple[dict[str, Any], ...] = ()
    quorum: int | None = None
    #: The gate's approval policy as its run recorded it (the API's shape), ``None`` for other
    #: kinds and for runs that recorded none.
    policy: dict[str, Any] | None = None

    @property
    def input_text(self) -> str:
        return pretty_json(self.input)

    #: For a vote, how many approvals the gate had with it (its log records it).
    counted: int | None = None

    @property
    def approvals(self) -> int:
        """How many approvals the gate had with this entry: its earlier votes and itself."""
        return self.counted if self.counted is not None else len(self.votes) + 1

    @property
    def policy_words(self) -> str:
        """The policy in a line: ``finance, ada · four eyes · quorum 2 · due 1d``."""
        if self.policy is None:
            return ""
        deciders = self.policy.get("deciders") or {}
        names = [*(deciders.get("groups") or ()), *(deciders.get("users") or ())]
        words = [", ".join(str(name) for name in names) or "—"]
        if self.policy.get("four_eyes"):
            words.append("four eyes")
        words.append(f"quorum {self.policy.get('quorum', 1)}")
        if self.policy.get("due"):
            words.append(f"due {self.policy['due']}")
        return " · ".join(words)

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
    policy: dict[str, Any] | None = None,
) -> Decision:
    """The decision a resolution or vote event (``kind``, ``payload``) records: the one
    builder of the log's entries and of a card's receipt."""
    payload = payload if isinstance(payload, dict) else {}
    comment = payload.get("comment")
    votes = payload.get("votes")
    quorum = payload.get("quorum")
    counted = payload.get("approvals")
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
        vote=kind == "ApprovalVoted",
        votes=tuple(vote for vote in votes if isinstance(vote, dict))
        if isinstance(votes, list)
        else (),
        quorum=quorum if isinstance(quorum, int) and not isinstance(quorum, bool) else None,
        policy=policy,
        counted=counted if isinstance(counted, int) and not isinstance(counted, bool) else None,
    )


def receipt(
    run: str, graph_hash: str, events: Iterable[Envelope], policy: dict[str, Any] | None = None
) -> Decision | None:
    """A card's receipt, from the events its resolution or vote recorded (nothing read
    again); ``policy``: the gate's, as its run recorded it."""
    for envelope in events:
        if envelope.kind in DECISION_KINDS:
            return decision(
                envelope.kind,
                envelope.payload,
                run=run,
                graph_hash=graph_hash,
                seq=envelope.seq,
                at=envelope.recorded_at,
                policy=policy,
            )
    return None


def _decision_input(kind: str, payload: dict[str, Any]) -> Any:
    if kind in ("Resumed", "ApprovalVoted"):
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
    rows = _filtered(RunEvent.objects.filter(_IS_DECISION), filters).order_by("-id")
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
    policies = _policies({row["run_id"] for row in page.items if row["kind"] in _GATE_KINDS})
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
                policy=_gate_policy(policies, row),
            )
        )
    return Page(decisions, page.next)


_GATE_KINDS = frozenset({"Resumed", "ApprovalVoted"})


def _policies(run_ids: set[Any]) -> dict[Any, Any]:
    """The approval policy each of these runs recorded (one query; none when none)."""
    if not run_ids:
        return {}
    rows = Run.objects.filter(pk__in=run_ids, approval_policy__isnull=False)
    return dict(rows.values_list("pk", "approval_policy"))


def _gate_policy(policies: dict[Any, Any], row: dict[str, Any]) -> dict[str, Any] | None:
    recorded = policies.get(row["run_id"])
    payload = row["payload"] if isinstance(row["payload"], dict) else {}
    if recorded is None or row["kind"] not in _GATE_KINDS:
        return None
    return gate_policy_of(recorded, str(payload.get("node"))).as_json()


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
