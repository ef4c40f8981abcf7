"""Deadlines that act (``docs/inbox.md``, *Deadlines that act*): a card's **reminder** and its
**due time**, acted on by the workers exactly once each.

Each card with a due time has two deadlines, kept on its row (``remind_at``, ``due_at``). When a
card is created, a task is queued for each at its instant (``editor.waiting``); every worker's
sweep acts on those whose task was lost (:func:`due_deadlines`, a look on the cards' partial
indexes). Whoever comes first acts; the rest find it done:

* **the reminder**: the card's ``reminded_at`` is set by a conditional ``UPDATE`` (``WHERE
  reminded_at IS NULL``) and its note written (unique per item and kind), with the notice
  queued, in one transaction;
* **the due time**, as the gate's policy says: **escalate** (``GateEscalated`` appended at the
  log's next position: the escalation's deciders may now decide it too), **resolve** with the
  policy's value (``Resumed`` by "the deadline", through the resolutions' own path: the quorum's
  last vote and the deadline race for one position, and one wins), or, with nothing set, a note
  that it is **overdue**; the card's ``expired_at`` is claimed the same way, and the notice
  queued with it.

A value to resolve with that the run's own schema refuses (the policy changed since its version
was frozen) resolves nothing: the card is noted overdue, naming why, and stays open.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from editor.engine import DEADLINE
from editor.engine.approvals import LEGACY, gate_policy_of
from editor.engine.ports import Envelope
from editor.engine.records import timestamp
from editor.models import InboxCard, InboxNote
from editor.services.inbox.notices import ESCALATION, OVERDUE, REMINDER, RESOLVED
from editor.services.runs import deadlines as run_deadlines
from editor.waiting import EXPIRE, REMIND, queue_notice

__all__ = ["GRACE_SECONDS", "SWEEP_LIMIT", "act", "due_deadlines"]

logger = logging.getLogger(__name__)

#: The sweep leaves a deadline this long to its own task, which is usually taken at its instant.
GRACE_SECONDS = 5
#: The most deadlines one sweep acts on (the next sweep takes the rest).
SWEEP_LIMIT = 200


def due_deadlines(
    now: datetime, *, grace: float = GRACE_SECONDS, limit: int = SWEEP_LIMIT
) -> list[tuple[str, int, str]]:
    """``(run, seq, remind|expire)`` of the deadlines that came at least ``grace`` seconds
    before ``now`` and were not acted on: two queries on the cards' partial indexes."""
    until = now - timedelta(seconds=grace)
    reminders = (
        InboxCard.objects.filter(
            reminded_at__isnull=True, remind_at__isnull=False, remind_at__lte=until
        )
        .order_by("remind_at")
        .values_list("run_id", "seq")[:limit]
    )
    expiries = (
        InboxCard.objects.filter(expired_at__isnull=True, due_at__isnull=False, due_at__lte=until)
        .order_by("due_at")
        .values_list("run_id", "seq")[:limit]
    )
    found = [(str(run), seq, REMIND) for run, seq in reminders]
    found += [(str(run), seq, EXPIRE) for run, seq in expiries]
    return found


class _Done(Exception):
    """Someone acted on this deadline first: undo what this transaction wrote."""


def _note(card: InboxCard, kind: str, now: datetime, **detail: Any) -> None:
    """The deadline's note; :class:`_Done` when one exists (unique per item and kind)."""
    try:
        with transaction.atomic():
            InboxNote.objects.create(
                run_id=card.run_id,
                seq=card.seq,
                node=card.node,
                scope=card.scope,
                kind=kind,
                by=DEADLINE,
                recorded_at=timestamp(now),
                detail=detail,
            )
    except IntegrityError:
        raise _Done() from None


def _remind(card: InboxCard, now: datetime) -> str:
    try:
        with transaction.atomic():
            claimed = InboxCard.objects.filter(pk=card.pk, reminded_at__isnull=True)
            if not claimed.update(reminded_at=now):
                raise _Done()
            _note(card, "reminder", now, due_at=timestamp(card.due_at) if card.due_at else None)
            queue_notice(str(card.run_id), card.seq, REMINDER)
    except _Done:
        return "done"
    return "reminded"


def _claim_expiry(card: InboxCard, now: datetime) -> None:
    if not InboxCard.objects.filter(
        run_id=card.run_id, seq=card.seq, expired_at__isnull=True
    ).update(expired_at=now):
        raise _Done()


def _overdue(card: InboxCard, now: datetime, **detail: Any) -> str:
    try:
        with transaction.atomic():
            _claim_expiry(card, now)
            _note(card, "overdue", now, **detail)
            queue_notice(str(card.run_id), card.seq, OVERDUE)
    except _Done:
        return "done"
    return "overdue"


def _expire(card: InboxCard, now: datetime) -> str:
    run = card.run
    policy = gate_policy_of(run.approval_policy, card.node) if run.approval_policy else LEGACY
    expiry = policy.on_expiry
    due = timestamp(card.due_at) if card.due_at else timestamp(now)
    if expiry is not None and expiry.action == "escalate":

        def escalated(events: list[Envelope]) -> None:
            _claim_expiry(card, now)
            queue_notice(str(card.run_id), card.seq, ESCALATION)

        try:
            return run_deadlines.escalate(run, card.seq, expiry, due, escalated)
        except _Done:
            return "done"
    if expiry is not None and expiry.action == "resolve":
        outcome, violations = run_deadlines.resolve_with(
            run,
            card.seq,
            expiry.value,
            due,
            lambda events: queue_notice(str(card.run_id), card.seq, RESOLVED),
        )
        if outcome != run_deadlines.INVALID:
            return outcome
        said = "; ".join(f"{item['path']}: {item['message']}" for item in violations[:3])
        logger.warning("run %s: the policy's value for %s breaks its schema", run.id, card.node)
        _overdue(card, now, reason=f"the policy's value does not match the gate's schema: {said}")
        return run_deadlines.INVALID
    return _overdue(card, now)


def act(run_id: str, seq: int, kind: str, now: datetime | None = None) -> str:
    """Act on the deadline ``kind`` (``remind``, ``expire``) of the card at ``seq`` of a run,
    once: what it did (``reminded``, ``escalated``, ``resolved``, ``overdue``, ``invalid``),
    or why it did nothing (``gone``: decided meanwhile; ``early``; ``done``: acted on
    already)."""
    now = now or timezone.now()
    card = (
        InboxCard.objects.filter(run_id=run_id, seq=seq, kind="gate").select_related("run").first()
    )
    if card is None:
        return "gone"
    if kind == REMIND:
        if card.remind_at is None or card.reminded_at is not None:
            return "done"
        return "early" if card.remind_at > now else _remind(card, now)
    if card.due_at is None or card.expired_at is not None:
        return "done"
    return "early" if card.due_at > now else _expire(card, now)
