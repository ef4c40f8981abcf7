"""The waiting cards (``editor.card_models``): a projection of the parked runs' open items,
kept by the store in the same transaction as every append that opens, changes or closes one.

:func:`card_shapes` is the projection itself, plain data from a run's status and the policy it
recorded: one :class:`CardShape` per item a person resolves (a signal wait is a system's, a test
run's gates are its author's, in the editor). :func:`sync_cards` writes it: the cards of items
no longer open go, new ones come, and a card whose votes or escalation changed is written again.
A card with a due time has deadlines (a reminder, the due time itself); the ones a sync creates
are handed to the task :func:`connect` named, queued for their instant once the append has
committed (``editor.tasks.act_on_deadline``), as a sleeping run's wake is. Every worker's sweep
is the safety net for a task that is lost (``editor.tasks.act_on_due_deadlines``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.tasks import Task

from editor.engine.approvals import LEGACY, ROLE_GROUP, GatePolicy, authors_of, gate_policy_of
from editor.engine.events import TERMINAL_KINDS
from editor.engine.states import PARKED
from editor.engine.status import ITEM_KINDS, PARKING_KINDS, RESOLUTION_KINDS, instant
from editor.models import InboxCard, InboxCardName, Run

__all__ = [
    "CARD_EVENTS",
    "EXPIRE",
    "REMIND",
    "CardShape",
    "Deadline",
    "card_shapes",
    "connect",
    "escalated_names",
    "queue_notice",
    "rebuild_cards",
    "schedule",
    "sync_cards",
]

#: The events after which a run's cards may differ: an item opened, resolved, voted on or
#: escalated, or the run ended (a run ends with nothing open).
CARD_EVENTS = frozenset({*PARKING_KINDS, *RESOLUTION_KINDS, *ITEM_KINDS, *TERMINAL_KINDS})
#: The two deadlines of a card: its reminder, and its due time.
REMIND, EXPIRE = "remind", "expire"
_PARKED = frozenset(state.value for state in PARKED)


@dataclass(frozen=True, slots=True)
class Deadline:
    """A card's deadline to act on at ``at``."""

    run: str
    seq: int
    kind: str
    at: datetime


@dataclass(frozen=True, slots=True)
class CardShape:
    """What a card's row holds, from its item and its run's policy."""

    seq: int
    kind: str
    node: str
    scope: Any
    opened_at: datetime
    due_at: datetime | None = None
    remind_at: datetime | None = None
    quorum: int = 1
    approvals: int = 0
    four_eyes: bool = False
    role_decides: bool = False
    escalated_at: datetime | None = None
    #: ``(role, name)``: the groups and users that may decide it, and who may not.
    names: tuple[tuple[str, str], ...] = ()

    def row(self) -> dict[str, Any]:
        """The card's columns (but its run, starter and claim)."""
        return {
            "seq": self.seq,
            "kind": self.kind,
            "node": self.node,
            "scope": self.scope,
            "opened_at": self.opened_at,
            "due_at": self.due_at,
            "remind_at": self.remind_at,
            "quorum": self.quorum,
            "approvals": self.approvals,
            "four_eyes": self.four_eyes,
            "role_decides": self.role_decides,
            "escalated_at": self.escalated_at,
        }


def escalated_names(item: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The groups and users an escalation of ``item`` (a pending gate) added."""
    escalated = item.get("escalated")
    to = escalated.get("to") if isinstance(escalated, Mapping) else None
    to = to if isinstance(to, Mapping) else {}
    groups, users = to.get("groups"), to.get("users")
    return (
        [str(name) for name in groups] if isinstance(groups, list) else [],
        [str(name) for name in users] if isinstance(users, list) else [],
    )


def _gate_shape(
    item: Mapping[str, Any], policy: GatePolicy, authors: Sequence[str]
) -> dict[str, Any]:
    opened = instant(item.get("at"))
    assert opened is not None  # the fold writes every item's ``at``
    due_at = remind_at = None
    if policy.due is not None:
        due_at = opened + timedelta(seconds=policy.due)
        if policy.remind_at is not None:
            remind_at = opened + timedelta(seconds=policy.due * policy.remind_at / 100)
    more_groups, more_users = escalated_names(item)
    groups = dict.fromkeys((*policy.groups, *more_groups))
    users = dict.fromkeys((*policy.users, *more_users))
    votes = [vote for vote in item.get("votes") or () if isinstance(vote, Mapping)]
    excluded = dict.fromkeys(
        [*(authors if policy.four_eyes else ()), *(str(vote.get("by")) for vote in votes)]
    )
    names = [("group", name) for name in groups if name != ROLE_GROUP]
    names += [("user", name) for name in users]
    names += [("excluded", name) for name in excluded]
    escalated = item.get("escalated")
    return {
        "due_at": due_at,
        "remind_at": remind_at,
        "quorum": policy.quorum,
        "approvals": len(votes),
        "four_eyes": policy.four_eyes,
        "role_decides": ROLE_GROUP in groups,
        "escalated_at": instant(escalated.get("at")) if isinstance(escalated, Mapping) else None,
        "names": tuple(names),
    }


def _open_items(status: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    """The items of ``status`` that a person resolves, by their ``seq``, while the run is
    parked (a signal wait is a system's, spec 08)."""
    if status.get("state") not in _PARKED:
        return {}
    return {
        int(item.get("seq", 0)): item
        for item in status.get("pending") or ()
        if item.get("wait") != "signal" and instant(item.get("at")) is not None
    }


def card_shapes(
    status: Mapping[str, Any], recorded_policy: Any, seqs: Iterable[int] | None = None
) -> list[CardShape]:
    """The cards of a run whose status is ``status`` and which recorded ``recorded_policy``
    (its ``approval_policy``, or ``None``): one per open item a person resolves, while the
    run is parked (``seqs``: of those items only). A test run has none (its caller says so:
    its gates are its author's)."""
    items = _open_items(status)
    wanted = items if seqs is None else {seq: items[seq] for seq in seqs if seq in items}
    authors = authors_of(recorded_policy)
    # A map of gates opens many items of one node: its policy is read once.
    policies: dict[str, GatePolicy] = {}
    shapes = []
    for seq, item in wanted.items():
        opened = instant(item.get("at"))
        assert opened is not None  # _open_items keeps the items that have one
        kind, node = str(item.get("kind")), str(item.get("node"))
        shape = CardShape(
            seq=seq, kind=kind, node=node, scope=item.get("scope") or None, opened_at=opened
        )
        if kind == "gate":
            if node not in policies:
                policies[node] = (
                    gate_policy_of(recorded_policy, node) if recorded_policy else LEGACY
                )
            shape = replace(shape, **_gate_shape(item, policies[node], authors))
        shapes.append(shape)
    return shapes


def _changed(row: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    """Whether an open item's votes or escalation differ from its card's."""
    votes = [vote for vote in item.get("votes") or () if isinstance(vote, Mapping)]
    escalated = item.get("escalated")
    at = instant(escalated.get("at")) if isinstance(escalated, Mapping) else None
    return bool(row["approvals"] != len(votes) or row["escalated_at"] != at)


def _deadlines(run_id: str, shape: CardShape) -> list[Deadline]:
    found = []
    if shape.remind_at is not None:
        found.append(Deadline(run_id, shape.seq, REMIND, shape.remind_at))
    if shape.due_at is not None:
        found.append(Deadline(run_id, shape.seq, EXPIRE, shape.due_at))
    return found


def _create(run_id: str, starter: Any, shapes: Iterable[CardShape]) -> None:
    shapes = list(shapes)
    if not shapes:
        return
    cards = InboxCard.objects.bulk_create(
        [InboxCard(run_id=run_id, starter_id=starter, **shape.row()) for shape in shapes]
    )
    _name(zip(cards, shapes, strict=True))


def _name(pairs: Iterable[tuple[InboxCard, CardShape]]) -> None:
    InboxCardName.objects.bulk_create(
        [
            InboxCardName(card_id=card.pk, role=role, name=name[:150])
            for card, shape in pairs
            for role, name in shape.names
        ]
    )


def sync_cards(run_id: str, status: Mapping[str, Any]) -> list[Deadline]:
    """Make the run's cards those of ``status`` (the run's status after an append), inside the
    append's transaction; the deadlines of the cards it created. One query when the cards do
    not change; only the cards of items opened, voted on or escalated are computed again."""
    existing = {
        row["seq"]: row
        for row in InboxCard.objects.filter(run_id=run_id).values(
            "id", "seq", "approvals", "escalated_at"
        )
    }
    items = _open_items(status)
    if not items and not existing:
        return []
    gone = [row["id"] for seq, row in existing.items() if seq not in items]
    if gone:
        InboxCard.objects.filter(pk__in=gone).delete()
    fresh = [seq for seq in items if seq not in existing]
    changed = [seq for seq in items if seq in existing and _changed(existing[seq], items[seq])]
    if not fresh and not changed:
        return []
    run = (
        Run.objects.filter(pk=run_id)
        .values("test_revision", "approval_policy", "created_by_id")
        .first()
    )
    if run is None or run["test_revision"] is not None:
        return []  # a test run's gates are its author's, decided in the editor
    shapes = {
        shape.seq: shape
        for shape in card_shapes(status, run["approval_policy"], [*fresh, *changed])
    }
    for seq in changed:
        shape = shapes[seq]
        InboxCard.objects.filter(pk=existing[seq]["id"]).update(
            approvals=shape.approvals, escalated_at=shape.escalated_at
        )
    if changed:
        ids = [existing[seq]["id"] for seq in changed]
        InboxCardName.objects.filter(card_id__in=ids).delete()
        _name((InboxCard(pk=existing[seq]["id"]), shapes[seq]) for seq in changed)
    new = [shapes[seq] for seq in fresh]
    _create(run_id, run["created_by_id"], new)
    return [deadline for shape in new for deadline in _deadlines(run_id, shape)]


def rebuild_cards(run_ids: Sequence[str], *, batch: int = 1000) -> int:
    """Write the cards of these runs again from their stored status (for runs written around
    the store: a benchmark's bulk clones), in bulk; how many cards they have."""
    InboxCard.objects.filter(run_id__in=run_ids).delete()
    rows = Run.objects.filter(pk__in=run_ids, test_revision__isnull=True).values_list(
        "id", "status", "approval_policy", "created_by_id"
    )
    pending: list[tuple[InboxCard, CardShape]] = []
    made = 0
    for run_id, status, policy, starter in rows.iterator(chunk_size=batch):
        for shape in card_shapes(status or {}, policy):
            pending.append((InboxCard(run_id=run_id, starter_id=starter, **shape.row()), shape))
        if len(pending) >= batch:
            made += _write(pending)
            pending = []
    return made + _write(pending)


def _write(pending: list[tuple[InboxCard, CardShape]]) -> int:
    cards = InboxCard.objects.bulk_create([card for card, _ in pending])
    _name(zip(cards, (shape for _, shape in pending), strict=True))
    return len(cards)


_actor: Task | None = None
_notify: Callable[[str, int, str], None] | None = None


def connect(deadline: Task, notify: Callable[[str, int, str], None] | None = None) -> None:
    """Name the task that acts on a deadline (arguments: run id, seq, ``remind``/``expire``),
    and what queues a deadline's notice (run id, seq, notice kind: the worker side's
    ``editor.tasks.queue_deadline_notice``)."""
    global _actor, _notify
    _actor = deadline
    _notify = notify


def queue_notice(run_id: str, seq: int, kind: str) -> None:
    """Queue a deadline's notice in the current transaction: its tasks exist exactly when what
    they announce was recorded, and a worker sends them once it has committed."""
    if _notify is not None:
        _notify(str(run_id), int(seq), kind)


def schedule(deadlines: Sequence[Deadline]) -> None:
    """Queue each deadline's task for its instant once the current transaction commits (the
    workers' sweep acts on any whose task is lost)."""
    if deadlines:
        transaction.on_commit(functools.partial(_queue, list(deadlines)), robust=True)


def _queue(deadlines: list[Deadline]) -> None:
    if _actor is None:
        raise ImproperlyConfigured("no task acts on deadlines: editor.apps connects editor.tasks")
    for deadline in deadlines:
        _actor.using(run_after=deadline.at).enqueue(deadline.run, deadline.seq, deadline.kind)
