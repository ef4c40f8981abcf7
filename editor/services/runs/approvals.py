"""Who may decide a run's gate: the approval policy the run recorded when it started
(``docs/inbox.md``, *Approval policies*), checked the same way by every path that decides one
(``POST /v1/runs/{id}/resume``, the inbox's cards, the inbox page's read-only cards).

:func:`refusal` is that one check: ``None`` when the person may answer the gate now, else the
error to raise (or to show), in this order: **not an approver** (the policy's deciders do not
name them, or they lack the approvers role: a policy narrows who decides, never widens it),
**four eyes** (they started the run, or wrote the version it runs), **already voted** (they
approved this gate already and it waits for others). A gate escalated past its due time
(``GateEscalated``) may also be decided by the deciders its escalation names, under the same
rules. A gate of a run recorded without a policy keeps spec 06's rule
(:data:`~editor.engine.approvals.LEGACY`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from editor.engine.approvals import ROLE_GROUP, GatePolicy, authors_of, gate_policy_of
from editor.roles import groups_and_roles
from editor.services.access import can_approve
from editor.services.errors import AlreadyVoted, FourEyes, NotAnApprover, ServiceError

__all__ = [
    "Decider",
    "GateCheck",
    "authors_of",
    "check_gate",
    "decider",
    "escalated_to",
    "gate_check",
    "refusal",
]


@dataclass(frozen=True, slots=True)
class Decider:
    """The person who asks: their name, their groups and whether they hold the approvers
    role (read once per request)."""

    pk: Any
    username: str
    groups: frozenset[str]
    approver: bool


def decider(user: Any) -> Decider:
    """``user`` as :func:`refusal` reads them: one query for their groups and roles."""
    if not getattr(user, "is_authenticated", False):
        return Decider(None, "", frozenset(), approver=False)
    groups = groups_and_roles(user)
    return Decider(user.pk, str(user.get_username()), groups, approver=can_approve(user))


@dataclass(frozen=True, slots=True)
class GateCheck:
    """What the check of one open gate reads: its policy, the run's starter, the version's
    authors (from the run's record), the votes already cast and the deciders an escalation
    added (from the gate's item)."""

    node: str
    policy: GatePolicy
    starter: Any
    authors: tuple[str, ...]
    votes: tuple[Mapping[str, Any], ...]
    escalated_groups: tuple[str, ...] = ()
    escalated_users: tuple[str, ...] = ()

    @property
    def groups(self) -> tuple[str, ...]:
        """Every group that may decide the gate now, the escalation's after the policy's."""
        return tuple(dict.fromkeys((*self.policy.groups, *self.escalated_groups)))

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.policy.users, *self.escalated_users)))


def escalated_to(item: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The groups and users an escalation of the open gate ``item`` added (none when none)."""
    escalated = item.get("escalated")
    to = escalated.get("to") if isinstance(escalated, Mapping) else None
    if not isinstance(to, Mapping):
        return (), ()

    def names(key: str) -> tuple[str, ...]:
        found = to.get(key)
        return tuple(str(name) for name in found) if isinstance(found, list) else ()

    return names("groups"), names("users")


def gate_check(recorded_policy: Any, starter: Any, item: Mapping[str, Any]) -> GateCheck:
    """The check of the open gate ``item`` (a pending item of the run's status) of a run that
    recorded ``recorded_policy`` and was started by the user of id ``starter``."""
    node = str(item.get("node"))
    votes = item.get("votes")
    groups, users = escalated_to(item)
    return GateCheck(
        node=node,
        policy=gate_policy_of(recorded_policy, node),
        starter=starter,
        authors=authors_of(recorded_policy),
        votes=tuple(vote for vote in votes if isinstance(vote, Mapping))
        if isinstance(votes, Sequence)
        else (),
        escalated_groups=groups,
        escalated_users=users,
    )


def refusal(person: Decider, check: GateCheck) -> ServiceError | None:
    """Why ``person`` may not answer the gate now, or ``None`` when they may."""
    policy = check.policy
    groups, users = check.groups, check.users
    named = ROLE_GROUP in groups or person.username in users or not person.groups.isdisjoint(groups)
    if not person.approver or not named:
        return NotAnApprover(check.node, groups, users, needs_role=named and not person.approver)
    if policy.four_eyes:
        if person.pk is not None and person.pk == check.starter:
            return FourEyes(check.node, "started")
        if person.username in check.authors:
            return FourEyes(check.node, "authored")
    for vote in check.votes:
        if vote.get("by") == person.username:
            at = vote.get("at")
            return AlreadyVoted(
                check.node, at if isinstance(at, str) else None, len(check.votes), policy.quorum
            )
    return None


def check_gate(
    user: Any, recorded_policy: Any, starter: Any, item: Mapping[str, Any]
) -> GatePolicy:
    """Raise :func:`refusal`'s error unless ``user`` may answer the open gate ``item`` now;
    answers the gate's policy."""
    check = gate_check(recorded_policy, starter, item)
    found = refusal(decider(user), check)
    if found is not None:
        raise found
    return check.policy
