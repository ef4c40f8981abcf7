"""Drafts: reading and saving a document's draft, and walking its history.

A draft may hold any text, even invalid JSON: it is work in progress. Every change goes through
:func:`_write`: at the revision the writer read or not at all (a writer of an old revision gets
:class:`StaleDraft` with the current one instead of overwriting it), with its verdict stored
beside the text (validation errors plus the fields the editor could not take), and kept in the
history as a revision (:mod:`editor.services.documents.history`). Undo, redo and restore are
changes too, so nothing a person does is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from editor.graph import ErrorData, Graph, MalformedDocument, parse_document
from editor.models import Document, Draft
from editor.services.access import ActingUser
from editor.services.documents import history
from editor.services.documents.graphs import (
    check_graph,
    validate_graph_document,
    validate_parsed,
)
from editor.services.documents.rows import author_of, check_text, document_row, require_author
from editor.services.errors import InvalidGraph, PreconditionRequired, StaleDraft
from editor.services.paging import DEFAULT_LIMIT, Page, page_by_number
from editor.services.storable import check_storable

__all__ = [
    "KEEP",
    "SavedDraft",
    "Verdict",
    "graph_to_freeze",
    "held_error",
    "keep_layout",
    "list_revisions",
    "parsed_draft",
    "read_draft",
    "redo",
    "restore_revision",
    "save_draft",
    "undo",
    "verdict_of",
]

Plan = Callable[[Document, Draft, datetime], history.Planned]


@dataclass(frozen=True, slots=True)
class SavedDraft:
    """A draft as read or just written: its text, revision and verdict."""

    text: str
    revision: int
    validation: dict[str, Any]
    #: Fields the editor could not take, kept with what was typed (see ``Draft.held``).
    held: tuple[dict[str, Any], ...] = ()


def verdict_of(
    text: str,
    held: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    graph: Graph | None = None,
) -> Verdict:
    """The validation body of ``text``, and the draft's verdict: its errors plus held fields.
    ``graph`` is ``text`` parsed, when the caller has it (then it is not read again)."""
    body = validate_parsed(text, graph) if graph is not None else validate_graph_document(text)
    errors = len(body.get("errors", ())) + len(held)
    size = len(text.encode("utf-8", "surrogatepass"))
    return Verdict(body, valid=body["valid"] and not held, error_count=errors, size=size)


@dataclass(frozen=True, slots=True)
class Verdict:
    body: dict[str, Any]
    valid: bool
    error_count: int
    size: int


def read_draft(slug: str) -> SavedDraft:
    """A document's draft: its text, revision and validation verdict."""
    draft = document_row(slug).draft
    return SavedDraft(
        draft.text, draft.revision, validate_graph_document(draft.text), tuple(draft.held)
    )


#: Keep the held fields as they are (a save that is not about them).
KEEP = None


def parsed_draft(document: Document) -> Graph | None:
    """The draft parsed, valid or not; ``None`` when it does not parse."""
    try:
        return parse_document(document.draft.text)
    except MalformedDocument:
        return None


def save_draft(
    user: ActingUser,
    slug: str,
    *,
    text: str,
    expected_revision: int | None,
    summary: str = "",
    held: list[dict[str, Any]] | None = KEEP,
    coalesce: str = "",
    graph: Graph | None = None,
    previous: tuple[str, Graph] | None = None,
) -> SavedDraft:
    """Replace the draft's text if it is still at ``expected_revision``; the save is kept in
    the history as a revision (``summary`` says what changed; without one it is worked out).
    ``graph`` is ``text`` parsed, ``previous`` a text and its graph the caller read before:
    given, they are not parsed again.

    ``held`` replaces the fields the editor could not take; by default they are kept, less
    those whose node is gone. Raises :class:`PreconditionRequired` without a revision and
    :class:`StaleDraft` (carrying the current revision) when someone saved in between.
    """
    text = check_text(text)

    def plan(document: Document, draft: Draft, now: datetime) -> history.Planned:
        kept = _keep_held(text, draft.held) if held is KEEP else held
        check_storable({"held": kept})  # text typed into a field the editor could not take
        step = history.edit_step(
            document,
            draft.revision,
            summary=summary
            or history.describe_text_change(
                draft.text,
                text,
                before_graph=previous[1] if previous and previous[0] == draft.text else None,
                after_graph=graph,
            ),
            user=user,
            now=now,
            coalesce=coalesce,
        )
        return history.Planned(text, kept, step, graph)

    return _write(user, slug, expected_revision, plan)


def _keep_held(text: str, held: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The held fields whose node is still in ``text``."""
    if not held:
        return []
    try:
        graph = parse_document(text)
    except MalformedDocument:
        return list(held)
    return [entry for entry in held if _has_node(graph, entry.get("level", []), entry["node"])]


def _has_node(graph: Graph, level: list[str], node_id: str) -> bool:
    current: Graph | None = graph
    for owner in level:
        found = (
            next((n for n in reversed(current.nodes) if n.id == owner), None) if current else None
        )
        body = getattr(found, "body", None)
        current = getattr(body, "graph", None)
    return current is not None and any(node.id == node_id for node in current.nodes)


def undo(user: ActingUser, slug: str, *, expected_revision: int | None) -> SavedDraft:
    """Back to the state before the last change (a new revision; raises ``NothingToUndo``)."""
    return _write(user, slug, expected_revision, _at_revision(history.undo_plan))


def redo(user: ActingUser, slug: str, *, expected_revision: int | None) -> SavedDraft:
    """The change last undone, again (a new revision; raises ``NothingToRedo``)."""
    return _write(user, slug, expected_revision, _at_revision(history.redo_plan))


def _at_revision(plan: Callable[[Document, int], history.Planned]) -> Plan:
    """A step of the history planned from the draft's current revision."""
    return lambda document, draft, now: plan(document, draft.revision)


def restore_revision(
    user: ActingUser, slug: str, number: int, *, expected_revision: int | None
) -> SavedDraft:
    """The draft as it was at revision ``number``, saved as a new revision."""
    return _write(
        user,
        slug,
        expected_revision,
        lambda doc, draft, now: history.restore_plan(
            doc, draft.revision, number, user=user, now=now
        ),
    )


def list_revisions(
    slug: str, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> Page[history.RevisionInfo]:
    """The draft's saved history, newest first."""
    rows = document_row(slug).revisions.select_related("created_by").order_by("-number")
    return page_by_number(rows, cursor, limit, history.info)


def _write(
    user: ActingUser,
    slug: str,
    expected_revision: int | None,
    plan: Plan,
) -> SavedDraft:
    """The one way a draft changes: at ``expected_revision`` or not at all, kept in history."""
    require_author(user)
    if expected_revision is None:
        raise PreconditionRequired()
    document = document_row(slug)
    now = timezone.now()
    with transaction.atomic():
        # The document row first, as freeze() locks it: one lock order, no deadlock.
        Document.objects.filter(pk=document.pk).update(updated_at=now)
        # The kept layout is not needed to write (it is a large JSON value to read).
        draft = Draft.objects.select_for_update().defer("layout").get(document=document)
        if draft.revision != expected_revision:
            raise StaleDraft(draft.revision)
        planned: history.Planned = plan(document, draft, now)
        verdict = verdict_of(planned.text, planned.held, planned.graph)
        number = expected_revision + 1
        # Compare-and-set all the same: two writers of one revision cannot both win.
        written = Draft.objects.filter(pk=draft.pk, revision=expected_revision).update(
            text=planned.text,
            held=planned.held,
            revision=number,
            valid=verdict.valid,
            error_count=verdict.error_count,
            size=verdict.size,
            updated_at=now,
            updated_by=author_of(user),
        )
        if written != 1:
            raise StaleDraft(Draft.objects.get(pk=draft.pk).revision)
        history.record(
            document,
            number,
            planned,
            valid=verdict.valid,
            error_count=verdict.error_count,
            size=verdict.size,
            user=user,
            now=now,
        )
    return SavedDraft(planned.text, number, verdict.body, tuple(planned.held))


def held_error(entry: dict[str, Any]) -> ErrorData:
    """A held field as an error object: it blocks freezing like a validation error."""
    where = "".join(f"in the subgraph of `{owner}`: " for owner in entry.get("level", []))
    error: ErrorData = {
        "code": "unsaved_field",
        "message": f"{where}node `{entry['node']}`: the field `{entry['field']}` was not saved: "
        f"it {entry['message']}",
        "node": entry["node"],
        "field": entry["field"],
    }
    if entry.get("level"):
        error["subgraph"] = list(entry["level"])
    return error


def graph_to_freeze(draft: Draft) -> Graph:
    """The draft's graph when it may be frozen (or test-run): it validates and holds no field
    the editor could not take. Else :class:`InvalidGraph` with every error: validation's, then
    the held fields'."""
    if draft.held:
        found = list(validate_graph_document(draft.text).get("errors", ()))
        held = [held_error(entry) for entry in draft.held]
        raise InvalidGraph([*found, *held], malformed=False)
    return check_graph(draft.text)


def keep_layout(slug: str, layout: dict[str, Any]) -> None:
    """Keep the canvas's newest layout with the draft (not a change of the draft: no revision)."""
    Draft.objects.filter(document__slug=slug, document__deleted_at__isnull=True).update(
        layout=layout
    )
