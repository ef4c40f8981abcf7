"""Draft history: every save of a draft kept as a revision, and undo, redo and restore.

Nothing here throws work away: undoing, redoing and restoring each write a *new* revision whose
text is an earlier one's, so the revision undone stays in the history and can be restored. The
walk is over *edit states*: an edit (or a restore) is one, whose ``parent`` is the state it was
made on; **Undo** goes to the parent of the state the draft is in, pushing that state onto the
``redo`` stack it carries; **Redo** pops it back. A new edit clears the stack, as in every editor.

Saves of one change in a row (typing in one field: the form posts as the person types) are kept
as one revision: the newer replaces the row before it when both carry the same ``coalesce`` key,
come from the same person, follow each other within :data:`COALESCE_SECONDS`, and nothing was
undone in between. The history of a document is bounded by ``GATEHOUSE_DRAFT_HISTORY``; the
oldest revisions are pruned, but for the revisions frozen as versions, which stay (and the
versions themselves are kept apart, as versions, and never pruned). ``manage.py prune`` also
removes revisions older than ``GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS``
(:mod:`editor.services.retention`).

The functions here run inside the transaction of :func:`editor.services.documents` that writes
the draft, after it has checked the draft's revision, so the rows they read are current.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from editor.graph import Graph, MalformedDocument, diff_graphs, parse_document
from editor.models import Document, DraftRevision, Version
from editor.services import quotas
from editor.services.access import ActingUser, author_of
from editor.services.errors import InvalidRequest
from editor.services.storable import storable_text

__all__ = [
    "COALESCE_SECONDS",
    "NothingToRedo",
    "NothingToUndo",
    "Planned",
    "RevisionInfo",
    "Step",
    "describe_text_change",
    "edit_step",
    "position",
    "recent_texts",
    "record",
    "redo_plan",
    "restore_plan",
    "undo_plan",
]

#: Saves of one change closer together than this are kept as one revision.
COALESCE_SECONDS = 60


class NothingToUndo(InvalidRequest):
    def __init__(self) -> None:
        super().__init__("there is nothing to undo", "revision")


class NothingToRedo(InvalidRequest):
    def __init__(self) -> None:
        super().__init__("there is nothing to redo", "revision")


@dataclass(frozen=True, slots=True)
class Step:
    """How a new revision joins the history."""

    kind: str
    summary: str
    #: The edit state the new revision is (``None``: itself).
    base: int | None = None
    parent: int | None = None
    redo: list[int] = field(default_factory=list)
    coalesce: str = ""
    #: The revision row the new one replaces (a save of the same change).
    replaces: int | None = None


@dataclass(frozen=True, slots=True)
class Planned:
    """A change to write: the new text, the held fields and its step in the history."""

    text: str
    held: list[dict[str, Any]]
    step: Step
    #: The text parsed, when the caller has it already (the verdict then skips reading it).
    graph: Any = None


@dataclass(frozen=True, slots=True)
class RevisionInfo:
    revision: int
    summary: str
    kind: str
    by: str | None
    at: datetime
    valid: bool
    error_count: int
    size: int


def _row(document: Document, number: int) -> DraftRevision | None:
    return DraftRevision.objects.filter(document=document, number=number).first()


def _state_of(row: DraftRevision | None, number: int) -> tuple[int, list[int]]:
    """The edit state and redo stack the draft is in at revision ``number``."""
    if row is None:
        return number, []
    return row.base, list(row.redo)


def edit_step(
    document: Document,
    current: int,
    *,
    summary: str,
    user: ActingUser | None,
    now: datetime,
    coalesce: str = "",
    kind: str = "edit",
) -> Step:
    """The step of an edit (or a restore) made on revision ``current``."""
    row = _row(document, current)
    base, _ = _state_of(row, current)
    if (
        coalesce
        and kind == "edit"
        and row is not None
        and row.kind == "edit"
        and row.coalesce == coalesce
        and row.created_by_id == getattr(user, "pk", None)
        and now - row.created_at <= timedelta(seconds=COALESCE_SECONDS)
    ):
        return Step(kind, summary, parent=row.parent, coalesce=coalesce, replaces=row.number)
    return Step(kind, summary, parent=base, coalesce=coalesce)


def position(document: Document, current: int) -> tuple[bool, bool]:
    """Whether Undo and Redo can do anything at revision ``current``."""
    row = _row(document, current)
    if row is None:
        return False, False
    base = _row(document, row.base) if row.base != row.number else row
    parent = base.parent if base is not None else None
    can_undo = parent is not None and _row(document, parent) is not None
    return can_undo, bool(row.redo) and _row(document, row.redo[-1]) is not None


def undo_plan(document: Document, current: int) -> Planned:
    row = _row(document, current)
    base, redo = _state_of(row, current)
    base_row = row if row is not None and row.number == base else _row(document, base)
    if base_row is None or base_row.parent is None:
        raise NothingToUndo()
    target = _row(document, base_row.parent)
    if target is None:
        raise NothingToUndo()
    return Planned(
        target.text,
        list(target.held),
        Step("undo", f"undid: {base_row.summary}", base=target.number, redo=[*redo, base]),
    )


def redo_plan(document: Document, current: int) -> Planned:
    row = _row(document, current)
    _, redo = _state_of(row, current)
    if not redo:
        raise NothingToRedo()
    target = _row(document, redo[-1])
    if target is None:
        raise NothingToRedo()
    return Planned(
        target.text,
        list(target.held),
        Step("redo", f"redid: {target.summary}", base=target.number, redo=redo[:-1]),
    )


def restore_plan(
    document: Document, current: int, number: int, *, user: ActingUser | None, now: datetime
) -> Planned:
    target = _row(document, number)
    if target is None:
        raise InvalidRequest(f"there is no revision {number} in this draft's history", "revision")
    step = edit_step(document, current, summary=f"restored revision {number}", user=user, now=now)
    restore = Step("restore", step.summary, parent=step.parent)
    return Planned(target.text, list(target.held), restore)


def record(
    document: Document,
    number: int,
    planned: Planned,
    *,
    valid: bool,
    error_count: int,
    size: int,
    user: ActingUser | None,
    now: datetime,
) -> None:
    """Keep revision ``number``, then prune the oldest beyond the bound."""
    step = planned.step
    released: Counter[int | None] = Counter()
    if step.replaces is not None:
        replaced = DraftRevision.objects.filter(document=document, number=step.replaces)
        released += quotas.bytes_by_saver(replaced)
        replaced.delete()
    DraftRevision.objects.create(
        document=document,
        number=number,
        text=planned.text,
        held=planned.held,
        summary=storable_text(step.summary)[:300],
        kind=step.kind,
        base=number if step.base is None else step.base,
        parent=step.parent,
        redo=step.redo,
        coalesce=storable_text(step.coalesce)[:300],
        valid=valid,
        error_count=error_count,
        size=size,
        created_at=now,
        created_by=author_of(user),
    )
    bound = settings.GATEHOUSE_DRAFT_HISTORY
    rows = DraftRevision.objects.filter(document=document)
    oldest_kept = rows.order_by("-number").values_list("number", flat=True)[bound - 1 : bound]
    cutoff = next(iter(oldest_kept), None)
    if cutoff is not None:
        # A revision frozen as a version stays, beyond the bound.
        pruned = rows.filter(number__lt=cutoff).exclude(number__in=_frozen_revisions(document))
        released += quotas.bytes_by_saver(pruned)
        pruned.delete()
    # The savers' stored bytes (GATEHOUSE_QUOTA_STORED_BYTES), last, as every write takes the
    # usage rows: a refusal rolls the whole save back.
    quotas.settle_bytes(user, size, released)


def _frozen_revisions(document: Document) -> QuerySet[Version, Any]:
    return Version.objects.filter(document=document, revision__isnull=False).values("revision")


def info(row: DraftRevision) -> RevisionInfo:
    return RevisionInfo(
        revision=row.number,
        summary=row.summary,
        kind=row.kind,
        by=row.created_by.get_username() if row.created_by else None,
        at=row.created_at,
        valid=row.valid,
        error_count=row.error_count,
        size=row.size,
    )


def _ticked(items: list[str]) -> str:
    shown = ", ".join(f"`{item}`" for item in items[:3])
    return shown + (f" and {len(items) - 3} more" if len(items) > 3 else "")


def describe_text_change(
    before: str,
    after: str,
    *,
    before_graph: Graph | None = None,
    after_graph: Graph | None = None,
) -> str:
    """One line for people saying what a save of the whole text changed (``before_graph`` and
    ``after_graph``: the texts already parsed, when the caller has them)."""
    if before == after:
        return "saved the draft unchanged"
    try:
        old = before_graph if before_graph is not None else parse_document(before)
        new = after_graph if after_graph is not None else parse_document(after)
    except MalformedDocument:
        return "edited the JSON (it does not parse)"
    changes = diff_graphs(old, new)
    nodes, edges = changes["nodes"], changes["edges"]
    added, removed, changed = nodes["added"], nodes["removed"], nodes["changed"]
    if len(added) == 1 and len(removed) == 1 and not changed:
        return f"renamed `{removed[0]}` → `{added[0]}`"
    parts = []
    if added:
        parts.append(f"added {_ticked(added)}")
    if removed:
        parts.append(f"deleted {_ticked(removed)}")
    if changed:
        fields = {
            field["path"].split(".")[0].split("[")[0] for c in changed for field in c["fields"]
        }
        what = ", ".join(sorted(fields)) if len(changed) == 1 else "fields"
        parts.append(f"changed {what} of {_ticked([c['node'] for c in changed])}")
    if edges["added"]:
        parts.append(f"added {len(edges['added'])} edge{'s' * (len(edges['added']) != 1)}")
    if edges["removed"]:
        parts.append(f"removed {len(edges['removed'])} edge{'s' * (len(edges['removed']) != 1)}")
    return "; ".join(parts) or "edited the JSON (no change to the graph)"


def recent_texts(slug: str, *, limit: int = 50) -> list[str]:
    """The texts of a document's newest revisions, newest first."""
    return list(
        DraftRevision.objects.filter(document__slug=slug)
        .order_by("-number")
        .values_list("text", flat=True)[:limit]
    )
