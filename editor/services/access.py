"""Who may do what: the role permissions of spec 06.

Any signed-in user may read everything, validate, and manage their own API
tokens. The rest needs a role (a group), or being a superuser.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "APPROVE",
    "AUTHOR",
    "OPERATE",
    "can_approve",
    "can_author",
    "can_operate",
    "can_resolve",
    "can_resolve_any",
]

AUTHOR = "editor.author"
OPERATE = "editor.operate"
APPROVE = "editor.approve"


def can_author(user: Any) -> bool:
    """Create and edit documents and drafts, freeze, import, post graphs and agents."""
    return bool(user.is_authenticated and user.has_perm(AUTHOR))


def can_operate(user: Any) -> bool:
    """Start and abandon runs, raise budgets, reconcile writes."""
    return bool(user.is_authenticated and user.has_perm(OPERATE))


def can_approve(user: Any) -> bool:
    """Resolve gates."""
    return bool(user.is_authenticated and user.has_perm(APPROVE))


def can_resolve(user: Any, kind: str) -> bool:
    """Resolve a pending item of ``kind``: a gate needs an approver, a budget, a
    reconciliation or a signal wait (``signal``, spec 08) an operator."""
    return can_approve(user) if kind == "gate" else can_operate(user)


def can_resolve_any(user: Any) -> bool:
    """Resolve some kind of item: only such a person is told that an item no longer waits,
    or who resolved it first."""
    return can_approve(user) or can_operate(user)
