"""Claims: "I'm on it" on a card (``docs/inbox.md``, *Claims*).

A person who may decide a card now claims it: the card shows who is on it to everyone, and
others who may decide it still can, warned. A claim lasts :data:`CLAIM_MINUTES` from the last
time its holder acted on it (claimed it again: the page does so while they type in its form),
or until they release it; deciding the card ends it with the card. Each change is one
conditional ``UPDATE`` of the card's row whose row count says whether it happened, so of two
people claiming at once one gets it and the other is told who. Taking and releasing a claim are
noted in the decision log (``editor.card_models.InboxNote``); renewing it is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from editor.engine.records import timestamp
from editor.models import InboxCard, InboxNote
from editor.services import inbox
from editor.services.access import ActingUser, can_resolve
from editor.services.errors import Claimed, NotAllowed, NotClaimed, NotSuspended
from editor.services.inbox import log as inbox_log
from editor.services.inbox.items import InboxItem
from editor.services.runs.approvals import decider

__all__ = ["CLAIM_MINUTES", "ClaimOutcome", "claim", "claim_of", "release"]

#: How long a claim holds after its holder last acted on it.
CLAIM_MINUTES = 30


@dataclass(frozen=True, slots=True)
class ClaimOutcome:
    """A card's claim after a claim or a release (``by`` ``None``: nobody is on it)."""

    run: str
    node: str
    seq: int
    scope: list[Any] | None
    by: str | None
    at: datetime | None
    until: datetime | None
    #: The card, read again with its claim (for the page).
    item: InboxItem | None = None


def _open_item(user: ActingUser, run_id: str, node: str | None, scope: Any) -> InboxItem:
    """The open item a claim names, checked: ``user`` may decide it now. Raises
    :class:`NotSuspended` (naming who resolved it) when it no longer waits, and the policy's
    refusal (``not_an_approver``, ``four_eyes``, ``already_voted``) or :class:`NotAllowed`."""
    _, item = inbox.pending_item(run_id, node, scope)
    if item is None:
        found = inbox_log.resolution_of(run_id, node, scope) if node is not None else None
        raise NotSuspended("resolved", found.by if found else None, found.at if found else None)
    if not can_resolve(user, item.kind):
        raise NotAllowed()
    refused = item.refusal(decider(user))
    if refused is not None:
        raise refused
    return item


def _note(item: InboxItem, kind: str, by: str, now: datetime, **detail: Any) -> None:
    InboxNote.objects.create(
        run_id=item.run,
        seq=item.seq,
        node=item.node,
        scope=item.scope,
        kind=kind,
        by=by,
        recorded_at=timestamp(now),
        detail=detail,
    )


def claim(
    user: ActingUser, run_id: str, node: str | None = None, scope: Any = None
) -> ClaimOutcome:
    """Claim the open item ``node`` (at ``scope``; the oldest without one) of a run for
    ``user``, or renew their claim. Raises :class:`Claimed` when someone else is on it."""
    item = _open_item(user, run_id, node, scope)
    now = timezone.now()
    until = now + timedelta(minutes=CLAIM_MINUTES)
    card = InboxCard.objects.filter(run_id=item.run, seq=item.seq)
    with transaction.atomic():
        if card.filter(claimed_by=user.pk, claim_until__gt=now).update(claim_until=until):
            return claim_of(item.run, item.seq, item)
        free = Q(claimed_by__isnull=True) | Q(claim_until__isnull=True) | Q(claim_until__lte=now)
        if card.filter(free).update(claimed_by=user.pk, claimed_at=now, claim_until=until):
            _note(item, "claim", str(user.get_username()), now, until=timestamp(until))
            return claim_of(item.run, item.seq, item)
    held = card.select_related("claimed_by").first()
    if held is None or held.claimed_by is None or held.claim_until is None:
        raise NotSuspended("resolved")  # decided meanwhile
    raise Claimed(item.node, held.claimed_by.username, timestamp(held.claim_until))


def release(
    user: ActingUser, run_id: str, node: str | None = None, scope: Any = None
) -> ClaimOutcome:
    """Give up ``user``'s claim on the open item ``node`` of a run. Raises
    :class:`NotClaimed` when they do not hold it (it ran out, or is someone else's)."""
    _, item = inbox.pending_item(run_id, node, scope)
    if item is None:
        raise NotSuspended("resolved")
    now = timezone.now()
    with transaction.atomic():
        held = InboxCard.objects.filter(
            run_id=item.run, seq=item.seq, claimed_by=user.pk, claim_until__gt=now
        )
        if not held.update(claimed_by=None, claimed_at=None, claim_until=None):
            raise NotClaimed(item.node)
        _note(item, "release", str(user.get_username()), now, reason="released")
    return claim_of(item.run, item.seq, item)


def claim_of(run_id: str, seq: int, item: InboxItem | None = None) -> ClaimOutcome:
    """The live claim of the card at ``seq`` of a run (``by`` ``None`` when nobody is on it),
    with the card's item read again with it when ``item`` is given."""
    now = timezone.now()
    card = (
        InboxCard.objects.filter(run_id=run_id, seq=seq)
        .select_related("claimed_by")
        .only("node", "scope", "claimed_at", "claim_until", "claimed_by__username")
        .first()
    )
    live = (
        card is not None
        and card.claimed_by is not None
        and card.claim_until is not None
        and card.claim_until > now
    )
    by = card.claimed_by.username if live and card and card.claimed_by else None
    at = card.claimed_at if live and card else None
    until = card.claim_until if live and card else None
    shown = None
    if item is not None:
        shown = inbox.with_claim(item, by, at, until, now)
    return ClaimOutcome(
        run=str(run_id),
        node=card.node if card is not None else (item.node if item else ""),
        seq=seq,
        scope=card.scope if card is not None else None,
        by=by,
        at=at,
        until=until,
        item=shown,
    )
