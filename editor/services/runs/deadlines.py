"""What a gate's due time does to its run (``docs/inbox.md``, *Deadlines that act*): escalate
it to the deciders its policy names, or resolve it with the policy's value, as "the deadline".

Both append at the log's next position through the store, as every resolution does
(``resolutions``): of two writers of one position the database lets one in, so a deadline and
the quorum's last vote (or two workers acting on one deadline) decide the gate once. A writer
that loses its position prepares again on the longer log, a bounded number of times, and finds
the gate escalated or gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from editor.drives import enqueue_run
from editor.engine import DEADLINE, prepare_escalation, prepare_resume, run_status
from editor.engine.approvals import Expiry, gate_policy_of
from editor.engine.errors import InvalidResumeInput, NotParked, RunLost, TransitionRefused
from editor.engine.ports import Envelope
from editor.models import Run
from editor.services.errors import RunBusy
from editor.services.runs.rows import record, store

__all__ = ["ESCALATED", "GONE", "INVALID", "RESOLVED", "escalate", "resolve_with"]

#: What acting on a gate's due time did.
ESCALATED, RESOLVED, GONE, INVALID = "escalated", "resolved", "gone", "invalid"
#: As for a person's decision (resolutions): a deadline that keeps losing its position is losing
#: to a run that appends far faster than people decide; the sweep tries again later.
_ATTEMPTS = 10


def _open_gate(status: dict[str, Any], seq: int) -> dict[str, Any] | None:
    return next(
        (
            item
            for item in status.get("pending") or ()
            if int(item.get("seq", -1)) == seq
            and item.get("kind") == "gate"
            and item.get("wait") != "signal"
        ),
        None,
    )


def escalate(
    run: Run,
    seq: int,
    expiry: Expiry,
    due_at: str,
    also: Callable[[list[Envelope]], None] | None = None,
) -> str:
    """Record the escalation of the open gate at ``seq`` (``GateEscalated``, by the deadline,
    naming ``expiry``'s groups and users); :data:`ESCALATED`, or :data:`GONE` when the gate
    no longer waits or was escalated already. ``also`` runs inside the append's transaction
    (the inbox's note and notices), with the events recorded."""
    to = {"groups": list(expiry.groups), "users": list(expiry.users)}
    for _attempt in range(_ATTEMPTS):
        current = record(run)
        item = _open_gate(run_status(current.events), seq)
        if item is None or item.get("escalated"):
            return GONE
        body = {"node": item["node"], "scope": item.get("scope")}
        try:
            events, after = prepare_escalation(current, body, to, due_at, timezone.now())
        except (NotParked, TransitionRefused):
            return GONE
        try:
            with transaction.atomic():
                store().record(current.run_id, events, after)
                if also is not None:
                    also(events)
        except (RunLost, TransitionRefused):
            continue
        return ESCALATED
    raise RunBusy()


def resolve_with(
    run: Run,
    seq: int,
    value: Any,
    due_at: str,
    also: Callable[[list[Envelope]], None] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Resolve the open gate at ``seq`` with ``value`` as the deadline (``Resumed`` by
    ``the deadline``, with ``deadline: {"due_at"}`` and the approvals counted before it) and
    hand the run to a worker, as a person's resolution does. Answers :data:`RESOLVED`,
    :data:`GONE` when the gate no longer waits, or :data:`INVALID` with the violations when
    ``value`` breaks the gate's recorded schema (nothing recorded then)."""
    for _attempt in range(_ATTEMPTS):
        current = record(run)
        item = _open_gate(run_status(current.events), seq)
        if item is None:
            return GONE, []
        body: dict[str, Any] = {"input": value, "node": item["node"]}
        if item.get("scope"):
            body["scope"] = item["scope"]
        policy = gate_policy_of(run.approval_policy, str(item["node"]))
        extra: dict[str, Any] = {"deadline": {"due_at": due_at}}
        if item.get("votes"):
            extra["votes"] = item["votes"]
        if policy.quorum > 1:
            extra["quorum"] = policy.quorum
        try:
            events, after = prepare_resume(current, body, DEADLINE, timezone.now(), extra=extra)
        except NotParked:
            return GONE, []
        except InvalidResumeInput as error:
            return INVALID, error.violations
        try:
            with transaction.atomic():
                store().record(current.run_id, events, after)
                enqueue_run(current.run_id)
                if also is not None:
                    also(events)
        except (RunLost, TransitionRefused):
            continue
        return RESOLVED, []
    raise RunBusy()
