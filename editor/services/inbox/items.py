"""An inbox item as a card shows it, and the graphs the inbox's filter offers."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from editor.engine.approvals import LEGACY, ROLE_GROUP, GatePolicy
from editor.engine.history import event_time
from editor.graph import short_hash
from editor.graph.jsonio import pretty_json
from editor.presentation import deadlines
from editor.services.errors import ServiceError
from editor.services.links import card_id
from editor.services.runs import approvals

__all__ = ["GraphChoice", "InboxItem", "suggested_limit", "with_claim"]


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
    #: A gate's approval policy, as its run recorded it (``None`` for other kinds), the votes
    #: already cast (``{"by", "at", "seq"}``), who started the run (a user id) and the
    #: authors of its version: what the check of who may decide reads.
    policy: GatePolicy | None = None
    votes: tuple[dict[str, Any], ...] = ()
    starter: Any = None
    recorded_policy: Any = None
    #: The gate's escalation past its due time (``GateEscalated``): when, and the groups and
    #: users it added.
    escalated_at: str | None = None
    escalated_groups: tuple[str, ...] = ()
    escalated_users: tuple[str, ...] = ()
    #: "I'm on it": who holds the card's claim, since and until when (a claim run out is
    #: ``None``).
    claimed_by: str | None = None
    claimed_at: datetime | None = None
    claim_until: datetime | None = None
    #: When the card was read: what *overdue* and *due soon* are measured against.
    now: datetime | None = None

    def refusal(self, person: approvals.Decider) -> ServiceError | None:
        """Why ``person`` may not decide this gate now under its run's policy (``None``: they
        may; never anything for other kinds, whose rule is the role alone)."""
        if self.kind != "gate":
            return None
        check = approvals.GateCheck(
            node=self.node,
            policy=self.policy or LEGACY,
            starter=self.starter,
            authors=approvals.authors_of(self.recorded_policy),
            votes=self.votes,
            escalated_groups=self.escalated_groups,
            escalated_users=self.escalated_users,
        )
        return approvals.refusal(person, check)

    @property
    def opened_at(self) -> datetime | None:
        return event_time(self.suspended_at)

    @property
    def due_at(self) -> datetime | None:
        """The gate's due time, from when it was recorded (``None``: none)."""
        opened = self.opened_at
        if self.policy is None or self.policy.due is None or opened is None:
            return None
        return opened + timedelta(seconds=self.policy.due)

    @property
    def remind_at(self) -> datetime | None:
        due, opened = self.due_at, self.opened_at
        if due is None or opened is None or self.policy is None or not self.policy.remind_at:
            return None
        return opened + (due - opened) * self.policy.remind_at / 100

    @property
    def moment(self) -> datetime:
        return self.now or datetime.now(UTC)

    @property
    def overdue(self) -> bool:
        due = self.due_at
        return due is not None and self.moment >= due

    @property
    def due_soon(self) -> bool:
        return deadlines.due_soon(self.opened_at, self.due_at, self.remind_at, self.moment)

    @property
    def due_words(self) -> str:
        """``due in 3 h``, ``overdue by 20 min``; empty without a due time."""
        return deadlines.due_words(self.due_at, self.moment)

    @property
    def due_iso(self) -> str:
        due = self.due_at
        return due.isoformat() if due else ""

    @property
    def needs(self) -> deadlines.Needs | None:
        """What the gate still needs, and from whom (its policy and any escalation)."""
        if self.policy is None:
            return None
        return deadlines.needs(
            self.policy.quorum,
            len(self.votes),
            tuple(dict.fromkeys((*self.policy.groups, *self.escalated_groups))),
            tuple(dict.fromkeys((*self.policy.users, *self.escalated_users))),
            ROLE_GROUP,
        )

    @property
    def escalated_from(self) -> tuple[str, ...]:
        """Who decided the gate before its escalation: the policy's deciders."""
        if self.policy is None:
            return ()
        return tuple(
            "every approver" if name == ROLE_GROUP else name
            for name in (*self.policy.groups, *self.policy.users)
        )

    @property
    def escalated_moment(self) -> datetime | None:
        return event_time(self.escalated_at) if self.escalated_at else None

    @property
    def voters(self) -> str:
        return ", ".join(str(vote.get("by")) for vote in self.votes)

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

    @property
    def input(self) -> Any:
        """A reconciliation's tool input, under the name ``GET /v1/inbox`` gives it."""
        return self.tool_input


def with_claim(
    item: InboxItem,
    by: str | None,
    at: datetime | None,
    until: datetime | None,
    now: datetime | None = None,
) -> InboxItem:
    """``item`` with its card's live claim (``by`` ``None``: nobody is on it)."""
    return replace(item, claimed_by=by, claimed_at=at, claim_until=until, now=now or item.now)


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
