"""The entries of the decision log (``editor.services.inbox.log``) and a card's receipt: what a
resolution, vote or escalation event, or an inbox note, says as one entry."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from editor.engine import DEADLINE
from editor.engine.history import event_time
from editor.engine.ports import Envelope
from editor.engine.status import scope_key
from editor.graph.jsonio import pretty_json
from editor.models import DECISION_KINDS, RESOLUTION_KINDS, RunEvent

__all__ = ["Decision", "decision", "note_entry", "receipt", "resolution_of"]

#: Decision event kind → the kind of item it answers.
_RESOLVED_KIND = {
    "Resumed": "gate",
    "ApprovalVoted": "gate",
    "GateEscalated": "gate",
    "BudgetRaised": "budget",
    "Reconciled": "reconciliation",
}


@dataclass(frozen=True, slots=True)
class Decision:
    """One entry of the decision log (``GET /v1/inbox/resolved``)."""

    #: The kind of item: ``gate``, ``budget`` or ``reconciliation``.
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
    #: The kind of entry (one of :data:`LOG_KINDS`, ``release`` for a claim given up).
    entry: str = "decision"
    #: What the entry says beyond that: an escalation's ``to`` and ``due_at``, a resolution by
    #: the deadline's ``due_at``, a claim's ``until``, a release's ``reason``, why a due time
    #: found nothing to do.
    detail: dict[str, Any] | None = None
    #: Where the entry comes from and its id there (``event``, ``note``): the log's cursor.
    source: tuple[str, int] | None = None

    @property
    def input_text(self) -> str:
        return pretty_json(self.input)

    @property
    def escalated_to(self) -> str:
        """An escalation's deciders, in a line."""
        to = (self.detail or {}).get("to") or {}
        names = [*(to.get("groups") or ()), *(to.get("users") or ())]
        return ", ".join("every approver" if name == "approvers" else str(name) for name in names)

    @property
    def until(self) -> datetime | None:
        """A claim's end, unless its holder acts on it again."""
        return event_time((self.detail or {}).get("until"))

    @property
    def due_at(self) -> datetime | None:
        return event_time((self.detail or {}).get("due_at"))

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
    entry, detail = "decision", None
    if kind == "ApprovalVoted":
        entry = "vote"
    elif kind == "GateEscalated":
        entry, detail = "escalation", {"to": payload.get("to"), "due_at": payload.get("due_at")}
    elif kind == "Resumed" and payload.get("by") == DEADLINE:
        deadline = payload.get("deadline")
        entry, detail = "deadline", deadline if isinstance(deadline, dict) else None
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
        entry=entry,
        detail=detail,
    )


def note_entry(
    row: dict[str, Any],
    *,
    document: str | None = None,
    document_title: str | None = None,
    policy: dict[str, Any] | None = None,
) -> Decision:
    """The entry of an inbox note (a row of ``InboxNote`` with its run's graph)."""
    return Decision(
        kind="gate",
        run=str(row["run_id"]),
        graph_hash=row["run__graph_id"],
        node=str(row["node"]),
        by=row["by"],
        at=row["recorded_at"],
        input=None,
        seq=row["seq"],
        document=document,
        document_title=document_title,
        scope=row["scope"] or None,
        policy=policy,
        entry=str(row["kind"]),
        detail=row["detail"] if isinstance(row["detail"], dict) else None,
        source=("note", row["id"]),
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
    if kind == "GateEscalated":
        return None
    if kind == "BudgetRaised":
        return {"limit": payload.get("limit")}
    if payload.get("retry") is True:
        return {"retry": True}
    return {"output": payload.get("output")}


def resolution_of(run_id: str, node: str | None, scope: Any = None) -> Decision | None:
    """The latest resolution of ``node`` (at ``scope``; of any item without a node) in a run:
    the receipt of a card."""
    wanted = scope_key(scope)
    rows = (
        RunEvent.objects.filter(run_id=run_id, kind__in=RESOLUTION_KINDS)
        .order_by("-seq")
        .select_related("run")
        .only("seq", "kind", "payload", "recorded_at", "run__graph_id")
    )
    for row in rows[:50]:
        payload = row.payload if isinstance(row.payload, dict) else {}
        if node is not None and (
            payload.get("node") != node or scope_key(payload.get("scope")) != wanted
        ):
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
