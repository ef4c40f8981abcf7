"""Who may do what: the role permissions of spec 06.

Any signed-in user may read everything, validate, and manage their own API
tokens. The rest needs a role (a group), or being a superuser.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

__all__ = [
    "APPROVE",
    "AUTHOR",
    "OPERATE",
    "ActingUser",
    "author_of",
    "can_approve",
    "can_author",
    "can_operate",
    "can_resolve",
    "can_resolve_any",
]

AUTHOR = "editor.author"
OPERATE = "editor.operate"
APPROVE = "editor.approve"

#: Who a service acts for: the user of a request, signed in or not (``request.user``; the API's
#: ``request.auth``). Every service checks the role itself, so an anonymous one is refused there.
type ActingUser = User | AnonymousUser


def author_of(user: ActingUser | None) -> User | None:
    """The user to record as who made a row (a revision, a run, an agent, a token): ``None``
    for the command line, or for a user not signed in."""
    return user if isinstance(user, User) and user.pk else None


def can_author(user: ActingUser) -> bool:
    """Create and edit documents and drafts, freeze, import, post graphs and agents."""
    return bool(user.is_authenticated and user.has_perm(AUTHOR))


def can_operate(user: ActingUser) -> bool:
    """Start and abandon runs, raise budgets, reconcile writes."""
    return bool(user.is_authenticated and user.has_perm(OPERATE))


def can_approve(user: ActingUser) -> bool:
    """Resolve gates."""
    return bool(user.is_authenticated and user.has_perm(APPROVE))


def can_resolve(user: ActingUser, kind: str) -> bool:
    """Resolve a pending item of ``kind``: a gate needs an approver, a budget, a
    reconciliation or a signal wait (``signal``, spec 08) an operator."""
    return can_approve(user) if kind == "gate" else can_operate(user)


def can_resolve_any(user: ActingUser) -> bool:
    """Resolve some kind of item: only such a person is told that an item no longer waits,
    or who resolved it first."""
    return can_approve(user) or can_operate(user)
