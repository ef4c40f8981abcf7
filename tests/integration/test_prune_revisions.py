"""Data retention of draft revisions (``manage.py prune``): the revisions saved longer ago than
``GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS`` go, in small transactions, but never the draft's
current state, the edit state it stands on, what Redo brings back, nor a revision frozen as a
version; ``GATEHOUSE_DRAFT_HISTORY``'s bound keeps the frozen ones too. At scale: ten thousand
revisions of two hundred drafts."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from pytest_django import Settings

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Document, Draft, DraftRevision, Version
from editor.services import documents
from editor.services.retention import finished_cutoff, prune_draft_revisions

pytestmark = pytest.mark.django_db(transaction=True)

DOCUMENTS = 200
REVISIONS = 50
OLD = 40  # revisions 1–40 of each draft were saved 100 days ago, 41–50 yesterday


def text(n: int) -> str:
    return json.dumps(wire_value(approval_gate("sha256:" + f"{n:064x}")))


def numbers(slug: str) -> list[int]:
    return sorted(
        DraftRevision.objects.filter(document__slug=slug).values_list("number", flat=True)
    )


def age_everything(days: int) -> None:
    DraftRevision.objects.update(created_at=timezone.now() - timedelta(days=days))


def an_undone_draft(author: User) -> str:
    """r1–r3 saved, r3 frozen, r4 and r5 saved, then Undo (r6: back to r4, Redo brings r5)."""
    slug = documents.create_document(author, title="Notes", text=text(1)).slug
    for n in (2, 3):
        documents.save_draft(author, slug, text=text(n), expected_revision=n - 1)
    documents.freeze(author, slug, expected_revision=3)
    for n in (4, 5):
        documents.save_draft(author, slug, text=text(n), expected_revision=n - 1)
    documents.undo(author, slug, expected_revision=5)
    return slug


def test_old_revisions_go_but_those_the_draft_stands_on_or_that_were_frozen(
    author: User,
) -> None:
    slug = an_undone_draft(author)
    age_everything(100)

    removed = prune_draft_revisions(finished_cutoff(30), pause=0)

    assert removed == 2
    assert numbers(slug) == [3, 4, 5, 6]
    assert Version.objects.get(document__slug=slug).revision == 3
    # The draft is as it was, and Undo and Redo still work from it.
    assert documents.read_draft(slug).text == text(4)
    assert documents.read_draft_record(slug).can_undo and documents.read_draft_record(slug).can_redo
    assert documents.redo(author, slug, expected_revision=6).text == text(5)
    assert documents.restore_revision(author, slug, 3, expected_revision=7).text == text(3)


def test_recent_revisions_stay(author: User) -> None:
    slug = an_undone_draft(author)
    age_everything(29)

    assert prune_draft_revisions(finished_cutoff(30), pause=0) == 0
    assert numbers(slug) == [1, 2, 3, 4, 5, 6]


def at_scale(author: User) -> dict[str, Any]:
    """Two hundred drafts of fifty revisions: a third at an undo (standing on revision 7, Redo
    bringing back 9), a third with revision 12 frozen as a version."""
    source = documents.create_document(author, title="Source", text=text(0)).slug
    digest = documents.freeze(author, source, expected_revision=1).graph
    made = Document.objects.bulk_create(
        Document(slug=f"notes-{n:03d}", title=f"Notes {n}") for n in range(DOCUMENTS)
    )
    Draft.objects.bulk_create(
        Draft(document=document, text=text(REVISIONS), revision=REVISIONS) for document in made
    )
    Version.objects.bulk_create(
        Version(document=document, graph_id=digest, number=1, revision=12)
        for document in made[2::3]
    )
    old, recent = timezone.now() - timedelta(days=100), timezone.now() - timedelta(days=1)
    rows = []
    for index, document in enumerate(made):
        for number in range(1, REVISIONS + 1):
            undone = index % 3 == 1 and number == REVISIONS
            rows.append(
                DraftRevision(
                    document=document,
                    number=number,
                    text=text(number),
                    summary="an edit",
                    kind="undo" if undone else "edit",
                    base=7 if undone else number,
                    parent=None if number == 1 else number - 1,
                    redo=[9] if undone else [],
                    created_at=old if number <= OLD else recent,
                )
            )
    DraftRevision.objects.bulk_create(rows, batch_size=2_000)
    return {"documents": made, "source": source}


def test_at_scale_they_go_in_small_transactions_and_only_they(author: User) -> None:
    made = at_scale(author)["documents"]
    undone, frozen = len(made[1::3]), len(made[2::3])
    batches: list[int] = []

    def watch(removed: int) -> None:
        assert not connection.in_atomic_block  # nothing holds the database between batches
        batches.append(removed)

    cutoff = finished_cutoff(30)
    expected = DOCUMENTS * OLD - undone * 2 - frozen
    assert prune_draft_revisions(cutoff, batch_revisions=700, dry_run=True) == expected
    assert DraftRevision.objects.count() == DOCUMENTS * REVISIONS + 1

    removed = prune_draft_revisions(cutoff, batch_revisions=700, pause=0, on_batch=watch)

    assert removed == expected == sum(batches)
    assert max(batches) <= 700 and len(batches) >= expected // 700
    kept_old = set(
        DraftRevision.objects.filter(number__lte=OLD, document__in=made).values_list(
            "document__slug", "number"
        )
    )
    assert kept_old == {(d.slug, 7) for d in made[1::3]} | {(d.slug, 9) for d in made[1::3]} | {
        (d.slug, 12) for d in made[2::3]
    }
    assert DraftRevision.objects.filter(number__gt=OLD).count() == DOCUMENTS * (REVISIONS - OLD)


def test_the_command_removes_what_the_setting_says_and_a_dry_run_only_counts(
    author: User, settings: Settings
) -> None:
    slug = an_undone_draft(author)
    age_everything(100)
    settings.GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS = 90
    out = io.StringIO()

    call_command("prune", "--dry-run", stdout=out)
    assert "2 draft revisions saved before" in out.getvalue()
    assert "would be removed" in out.getvalue()
    assert numbers(slug) == [1, 2, 3, 4, 5, 6]

    call_command("prune", "--pause", "0", "--batch-revisions", "1", stdout=out)

    assert "Removed 2 draft revisions saved before" in out.getvalue()
    assert "in 2 batches" in out.getvalue()
    assert numbers(slug) == [3, 4, 5, 6]


def test_without_the_setting_no_revision_is_removed(author: User, settings: Settings) -> None:
    slug = an_undone_draft(author)
    age_everything(1000)
    settings.GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS = None
    out = io.StringIO()

    call_command("prune", stdout=out)

    assert "GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS is not set" in out.getvalue()
    assert numbers(slug) == [1, 2, 3, 4, 5, 6]


def test_the_history_bound_keeps_a_revision_frozen_as_a_version(
    author: User, settings: Settings
) -> None:
    settings.GATEHOUSE_DRAFT_HISTORY = 3
    slug = documents.create_document(author, title="Notes", text=text(1)).slug
    documents.freeze(author, slug, expected_revision=1)
    for n in range(2, 7):
        documents.save_draft(author, slug, text=text(n), expected_revision=n - 1)

    assert numbers(slug) == [1, 4, 5, 6]
    assert documents.restore_revision(author, slug, 1, expected_revision=6).text == text(1)
