"""What people are told when a gate's deadline acts (``docs/inbox.md``, *Deadlines that act*):
a **reminder**, an **escalation**, a resolution **by the deadline**, or that the gate is
**overdue**; by email to the people the run's policy names, and as JSON to the webhooks
(``GATEHOUSE_WEBHOOKS``).

A notice is queued by the deadline's own transaction (``editor.services.inbox.deadlines``), so
it exists exactly when what it announces was recorded; the worker that takes it reads the run
again and sends it. A reminder or an overdue notice of a gate decided meanwhile is not sent;
nor is an escalation's.

========== ============================================================================
notice     goes to
========== ============================================================================
reminder   the people who may decide the gate now (its deciders and any escalation's,
           but for four eyes and earlier voters)
escalation the people the escalation names (the same exceptions)
resolved   every decider the gate had: it was decided without them
overdue    the people who may decide the gate now
========== ============================================================================
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson

from editor.engine import DEADLINE
from editor.engine.approvals import LEGACY, authors_of, gate_policy_of
from editor.engine.history import event_time
from editor.models import Run, RunEvent
from editor.services.inbox import node_names
from editor.services.inbox.notifications import (
    card_link,
    decider_addresses,
    email_configured,
    gate_addresses,
    send_each,
)
from editor.services.inbox.webhooks import post_all, webhooks_configured
from editor.services.links import absolute_url
from editor.waiting import escalated_names

__all__ = [
    "ESCALATION",
    "KINDS",
    "OVERDUE",
    "REMINDER",
    "RESOLVED",
    "Notice",
    "mail_notice",
    "notice",
    "post_notice",
]

logger = logging.getLogger(__name__)

REMINDER, ESCALATION, RESOLVED, OVERDUE = "reminder", "escalation", "resolved", "overdue"
KINDS = (REMINDER, ESCALATION, RESOLVED, OVERDUE)
#: The ``event`` a webhook's JSON names.
_WEBHOOK_EVENTS = {
    REMINDER: "gate_reminder",
    ESCALATION: "gate_escalated",
    RESOLVED: "gate_resolved_by_deadline",
    OVERDUE: "gate_overdue",
}


@dataclass(frozen=True, slots=True)
class Notice:
    """One deadline's message: what to say, and to whom."""

    kind: str
    run: str
    seq: int
    node: str
    name: str
    graph: str
    graph_hash: str
    document: str | None
    due_at: datetime | None
    subject: str
    body: str
    link: str
    recipients: list[str] = field(default_factory=list)

    def webhook_json(self) -> dict[str, Any]:
        return {
            "event": _WEBHOOK_EVENTS[self.kind],
            "text": f"{self.subject}: {self.link}",
            "run": self.run,
            "node": self.node,
            "gate": self.name,
            "graph": self.graph_hash,
            "document": self.document,
            "due_at": self.due_at.isoformat() if self.due_at else None,
            "link": self.link,
        }


def _utc(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "its due time"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def _names(groups: list[str], users: list[str]) -> str:
    named = ["every approver" if name == "approvers" else name for name in (*groups, *users)]
    return ", ".join(named) or "nobody"


def notice(run_id: str, seq: int, kind: str) -> Notice | None:
    """The notice of ``kind`` about the gate recorded at ``seq`` of a run, as things stand
    now; ``None`` when there is nothing to say (no such gate; a reminder, overdue notice or
    escalation of a gate decided meanwhile)."""
    opened = (
        RunEvent.objects.filter(run_id=run_id, seq=seq, kind="Suspended")
        .select_related("run", "run__document")
        .first()
    )
    if opened is None:
        return None
    run: Run = opened.run
    payload = opened.payload if isinstance(opened.payload, dict) else {}
    node = str(payload.get("node"))
    pending = (run.status or {}).get("pending") or []
    item = next((entry for entry in pending if entry.get("seq") == seq), None)
    if kind != RESOLVED and item is None:
        return None
    recorded = run.approval_policy
    policy = gate_policy_of(recorded, node) if recorded else LEGACY
    start = event_time(opened.recorded_at)
    due_at = start + timedelta(seconds=policy.due) if start and policy.due else None
    name = node_names([run.graph_id]).get(run.graph_id, {}).get(node) or node
    graph = run.document.title if run.document is not None else run.graph_id[:15] + "…"
    link = card_link(str(run.id), seq)
    facts = f"The gate “{name}” of {graph}"
    if kind == REMINDER:
        subject = f"Reminder: {name} ({graph}) is due at {_utc(due_at)}"
        lines = [f"{facts} still waits for a decision. It is due at {_utc(due_at)}."]
        recipients = gate_addresses(item or {}, recorded, run.created_by_id)
    elif kind == OVERDUE:
        subject = f"Overdue: {name} ({graph})"
        lines = [f"{facts} was due at {_utc(due_at)} and still waits for a decision."]
        recipients = gate_addresses(item or {}, recorded, run.created_by_id)
    elif kind == ESCALATION:
        groups, users = escalated_names(item or {})
        subject = f"Escalated to you: {name} ({graph})"
        lines = [
            f"{facts} was due at {_utc(due_at)} and nobody decided it. Its approval policy "
            f"escalates it to {_names(groups, users)}: you may now decide it."
        ]
        votes = [vote for vote in (item or {}).get("votes") or () if isinstance(vote, dict)]
        excluded = [str(vote.get("by")) for vote in votes]
        if policy.four_eyes:
            excluded += list(authors_of(recorded))
        recipients = decider_addresses(
            groups,
            users,
            excluded=excluded,
            starter=run.created_by_id if policy.four_eyes else None,
        )
    else:
        subject = f"Decided by the deadline: {name} ({graph})"
        value = policy.on_expiry.value if policy.on_expiry is not None else None
        lines = [
            f"{facts} was due at {_utc(due_at)} and nobody decided it. Its approval policy "
            f"resolved it with this value, recorded as decided by {DEADLINE}:",
            "",
            orjson.dumps(value, option=orjson.OPT_INDENT_2).decode(),
            "",
            "The run continues.",
        ]
        link = absolute_url(f"/runs/{run.id}/")
        recipients = decider_addresses(policy.groups, policy.users)
    prompt = str(payload.get("reason") or "")
    action = "See the run" if kind == RESOLVED else "Decide in the inbox"
    body = "\n".join(
        [*lines, "", prompt, "", f"{action}: {link}", "", f"Run {run.id}, graph {run.graph_id}."]
    )
    return Notice(
        kind=kind,
        run=str(run.id),
        seq=seq,
        node=node,
        name=name,
        graph=graph,
        graph_hash=run.graph_id,
        document=run.document.slug if run.document is not None else None,
        due_at=due_at,
        subject=_one_line(subject),
        body=body,
        link=link,
        recipients=recipients,
    )


def mail_notice(
    run_id: str, seq: int, kind: str, only: Collection[str] | None = None
) -> tuple[int, list[str]]:
    """Email the notice, one message per person (to the addresses ``only`` lists, on a
    second try): how many were sent, and the addresses the mail server did not take. Nothing
    without email configured, or with nothing to say."""
    if not email_configured():
        return 0, []
    found = notice(run_id, seq, kind)
    if found is None or not found.recipients:
        return 0, []
    sent, failed = send_each(found.recipients, found.subject, found.body, only)
    logger.info("run %s: %s of %s mailed to %d person(s)", run_id, kind, seq, sent)
    return sent, failed


def post_notice(
    run_id: str, seq: int, kind: str, only: Collection[int] | None = None
) -> tuple[int, list[int]]:
    """``POST`` the notice to every webhook (to the positions ``only`` lists, on a second
    try): how many took it, and the positions to try again."""
    if not webhooks_configured():
        return 0, []
    found = notice(run_id, seq, kind)
    if found is None:
        return 0, []
    return post_all(found.webhook_json(), f"gatehouse:{run_id}:{seq}:{kind}", only)
