"""Who may do what: the role permissions of spec 06.

Any signed-in user may read everything, validate, and manage their own API
tokens. The rest needs a role (a group), or being a superuser.
"""

from __future__ import annotations

from typing import Any

__all__ = ["APPROVE", "AUTHOR", "OPERATE", "can_approve", "can_author", "can_operate"]

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
