"""A card's policy and deadlines in words (``docs/inbox.md``, *The inbox for a person*):
"2 of 3 approvals, needs one more from *finance*", "due in 3 h", "overdue by 20 min",
"escalated from *desk* at 09:00". Plain Python: the template emphasises the names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "DUE_SOON_SHARE",
    "Needs",
    "due_soon",
    "due_words",
    "needs",
    "span_words",
]

#: A card without a reminder is *due soon* once this share of its due time has passed (the
#: share a reminder is usually set at); with one, once its reminder time has come.
DUE_SOON_SHARE = 0.75


def span_words(seconds: float) -> str:
    """A span as people say it, rounded to its largest unit: ``40 s``, ``25 min``, ``3 h``,
    ``2 d``."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{round(seconds)} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"


def due_words(due_at: datetime | None, now: datetime) -> str:
    """``due in 3 h`` or ``overdue by 20 min``; empty without a due time."""
    if due_at is None:
        return ""
    left = (due_at - now).total_seconds()
    if left > 0:
        return f"due in {span_words(left)}"
    return f"overdue by {span_words(-left)}"


def due_soon(
    opened_at: datetime | None, due_at: datetime | None, remind_at: datetime | None, now: datetime
) -> bool:
    """Whether a card not yet overdue is due soon: its reminder time has come, or (without
    a reminder) :data:`DUE_SOON_SHARE` of its due time has passed."""
    if due_at is None or now >= due_at:
        return False
    if remind_at is not None:
        return now >= remind_at
    if opened_at is None:
        return False
    return now >= opened_at + (due_at - opened_at) * DUE_SOON_SHARE


@dataclass(frozen=True, slots=True)
class Needs:
    """What a gate still needs: ``counted`` (``2 of 3 approvals``; empty under a quorum of
    one), ``more`` (``needs one more``, ``needs 2 more``; ``needs one approval`` under a
    quorum of one) and the
    groups and users it needs them ``from`` (empty when any approver will do)."""

    counted: str
    more: str
    names: tuple[str, ...]


def _more(count: int, quorum: int) -> str:
    if quorum == 1:
        return "needs one approval"
    return "needs one more" if count == 1 else f"needs {count} more"


def needs(
    quorum: int, approvals: int, groups: Sequence[str], users: Sequence[str], role: str
) -> Needs:
    """What a gate of ``quorum`` with ``approvals`` counted needs, from the ``groups`` and
    ``users`` that may decide it (``role``: the group that stands for every approver, left
    out of the names: it says nothing beyond the inbox itself)."""
    count = max(0, quorum - approvals)
    names = tuple(name for name in (*groups, *users) if name != role)
    counted = f"{approvals} of {quorum} approvals" if quorum > 1 else ""
    return Needs(counted, _more(count, quorum), names)
