"""An inbox item as a card shows it, and the graphs the inbox's filter offers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from editor.engine.approvals import GatePolicy
from editor.engine.history import event_time
from editor.graph import short_hash
from editor.graph.jsonio import pretty_json
from editor.services.links import card_id

__all__ = ["GraphChoice", "InboxItem", "suggested_limit"]


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

    @property
    def approvals_needed(self) -> int:
        """How many more approvals the gate needs (0 for anything but a gate)."""
        if self.policy is None:
            return 0
        return max(0, self.policy.quorum - len(self.votes))

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

    @property
    def input(self) -> Any:
        """A reconciliation's tool input, under the name ``GET /v1/inbox`` gives it."""
        return self.tool_input


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
