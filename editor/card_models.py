"""Persistence of the inbox's own rows (``docs/inbox.md``): the waiting cards, who each names,
and the notes the decision log keeps beside the runs' events. ``editor.models`` re-exports
them, so Django finds them where it finds every other model.

A **card** is one open item of a parked run, as the inbox lists it (a gate, a budget, a write
to reconcile): a projection of ``Run.status["pending"]`` that the store writes in the same
transaction as each append that opens, changes or closes an item (``editor.waiting``), with
what the inbox sorts and filters by in columns of its own: the due time, who may decide
(``InboxCardName``), four eyes, the votes counted, an escalation, a claim. It exists exactly
while its item waits, so the inbox reads a page of it in the order people work, and the
deadlines the workers act on are indexed instants.

A **note** records what happens to a card that the run's log does not: a claim and its release,
a reminder sent, a due time that passed with nothing to do. A deadline's note is unique per item
and kind: of two workers acting on the same deadline, one writes it.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models

__all__ = ["DEADLINE_NOTES", "NAME_ROLES", "InboxCard", "InboxCardName", "InboxNote"]

#: Who a card names: a group or a user that may decide it, or a person four eyes or an earlier
#: vote keeps from deciding it (``excluded``).
NAME_ROLES = ("excluded", "group", "user")
#: The notes a deadline writes, once per item each.
DEADLINE_NOTES = ("overdue", "reminder")


class InboxCard(models.Model):
    """One open item of a parked run, as the inbox lists it (module docstring)."""

    # Found by run through the unique (run, seq) index, which leads with it.
    run = models.ForeignKey(
        "editor.Run", on_delete=models.CASCADE, related_name="cards", db_index=False
    )
    #: The position of the event that opened the item (its card's id in the page).
    seq = models.PositiveIntegerField()
    #: ``gate``, ``budget`` or ``reconciliation``.
    kind = models.CharField(max_length=16)
    node = models.TextField()
    scope = models.JSONField(null=True, blank=True)
    #: When the item was recorded: the card's age, and the order among cards due alike.
    opened_at = models.DateTimeField()
    #: The policy's due time and reminder, from ``opened_at`` (``None``: none).
    due_at = models.DateTimeField(null=True, blank=True)
    remind_at = models.DateTimeField(null=True, blank=True)
    #: When a worker sent the reminder, and acted on the due time (escalated, resolved with the
    #: policy's value, or noted overdue): each set once, by a conditional ``UPDATE``.
    reminded_at = models.DateTimeField(null=True, blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    #: When the gate was escalated (``GateEscalated``), whoever acted.
    escalated_at = models.DateTimeField(null=True, blank=True)
    quorum = models.PositiveSmallIntegerField(default=1)
    #: Approvals counted so far (``ApprovalVoted``).
    approvals = models.PositiveSmallIntegerField(default=0)
    four_eyes = models.BooleanField(default=False)
    #: Whether anyone holding the approvers role may decide it (``approvers`` among the
    #: deciders, or a run recorded without a policy).
    role_decides = models.BooleanField(default=False)
    starter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    #: "I'm on it": who, since when, and until when unless they act on it again.
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("run", "seq"), name="one_card_per_item")
        ]
        indexes: ClassVar[list[models.Index]] = [
            # The inbox's order: due first (no due time last: PostgreSQL's ascending order puts
            # NULL last, as the query asks), then oldest first.
            models.Index(fields=("due_at", "opened_at", "id"), name="card_queue"),
            # The workers' look for deadlines that came: only the cards still waiting for one.
            models.Index(
                fields=("remind_at",),
                name="card_reminders",
                condition=models.Q(reminded_at__isnull=True, remind_at__isnull=False),
            ),
            models.Index(
                fields=("due_at",),
                name="card_deadlines",
                condition=models.Q(expired_at__isnull=True, due_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"card {self.run_id}#{self.seq} ({self.kind} {self.node})"


class InboxCardName(models.Model):
    """A group or user a card names (``role``: one of :data:`NAME_ROLES`)."""

    card = models.ForeignKey(
        InboxCard, on_delete=models.CASCADE, related_name="names", db_index=False
    )
    role = models.CharField(max_length=8)
    name = models.CharField(max_length=150)

    class Meta:
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("card", "role", "name"), name="one_name_per_role")
        ]
        indexes: ClassVar[list[models.Index]] = [
            # The cards that name a person or their groups (the views' condition), found by the
            # names rather than by reading every card's.
            models.Index(fields=("role", "name", "card"), name="card_names_by_name"),
        ]

    def __str__(self) -> str:
        return f"{self.role} {self.name}"


class InboxNote(models.Model):
    """What happened to a card that its run's log does not record (module docstring)."""

    run = models.ForeignKey(
        "editor.Run", on_delete=models.CASCADE, related_name="inbox_notes", db_index=False
    )
    #: The card's item: the position of the event that opened it.
    seq = models.PositiveIntegerField()
    node = models.TextField()
    scope = models.JSONField(null=True, blank=True)
    #: ``claim``, ``release``, ``reminder`` or ``overdue``.
    kind = models.CharField(max_length=16)
    #: Who: a username, or ``the deadline``.
    by = models.CharField(max_length=150)
    #: RFC 3339, UTC, microseconds, as the events' ``recorded_at``: the log sorts both alike.
    recorded_at = models.CharField(max_length=32)
    #: What the note says beyond that: a claim's ``until``, a release's ``reason``, how many
    #: people a reminder went to, why a due time found nothing to do.
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(
                fields=("run", "seq", "kind"),
                name="one_deadline_note",
                condition=models.Q(kind__in=DEADLINE_NOTES),
            )
        ]
        indexes: ClassVar[list[models.Index]] = [
            models.Index(fields=("run", "seq"), name="note_item"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of {self.run_id}#{self.seq} by {self.by}"
