"""Each filter of the runs list is served by an index, on PostgreSQL: the plans of the list's
query (``editor.services.runs.run_list_query``) read the index made for it, in the list's
order, and never the whole table. On SQLite, which plans from other statistics, this module is
skipped naming the engine (as ``test_database.py`` does); ``make bench-scale`` times both.

The tables here are tiny, where a sequential scan is always cheapest, so the plans are read with
``enable_seqscan`` off (and ``enable_bitmapscan`` too where the list's order is checked): what is
checked is that an index *can* serve each query, which is what the planner chooses on a large table
(``docs/benchmarks.md``, the scale benchmark).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from editor.models import Run
from editor.services import documents, runs
from editor.services.paging import encode_cursor
from editor.services.runs.filters import read_run_filter
from tests.integration.api.running import ECHO_CHAIN
from tests.integration.test_database import engine_in_use

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip(f"PostgreSQL only; this run uses {engine_in_use()}")


@pytest.fixture
def some_runs(author: User, operator: User) -> dict[str, str]:
    """Many runs of one document, by one person, labelled alike, queued; a few of another
    document, by another person, labelled otherwise, completed: the filters ask for the few,
    as a filter on a large table does, so the planner has a reason to read their index."""
    rare_doc = documents.create_document(author, title="Rare", text=json.dumps(ECHO_CHAIN))
    digest = documents.freeze(author, rare_doc.slug, expected_revision=1).graph
    common = documents.create_document(author, title="Common", text=json.dumps(ECHO_CHAIN))
    documents.freeze(author, common.slug, expected_revision=1)
    few = [
        runs.start_run(
            author_operator(author), digest, None, {"team": "a"}, document_slug=rare_doc.slug
        )
        for _ in range(3)
    ]
    Run.objects.filter(id__in=[run.run for run in few]).update(state="completed")
    model = Run.objects.get(
        id=runs.start_run(operator, digest, None, {"team": "b"}, document_slug=common.slug).run
    )
    copies = []
    for _ in range(400):
        model.pk = uuid.uuid4()
        model._state.adding = True
        copies.append(
            Run(**{f.attname: getattr(model, f.attname) for f in Run._meta.concrete_fields})
        )
    Run.objects.bulk_create(copies)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE editor_run")
    return {"graph": digest, "document": rare_doc.slug, "run": few[1].run, "person": "ada"}


def author_operator(author: User) -> User:
    """The author, who starts the few runs, as an operator too."""
    author.groups.add(Group.objects.get(name="operators"))
    return User.objects.get(pk=author.pk)


def plan(params: dict[str, Any], cursor: str | None = None, *, bitmaps: bool = False) -> str:
    """The plan of a page of the list: of index scans (how an index gives the list's order;
    on a later page, where the tiny table leaves a row or two, a bitmap scan and a sort of them
    cost the same and were sometimes chosen); with ``bitmaps``, of bitmap scans only (how a
    GIN index is read, which an ordered scan of a tiny table would beat)."""
    query = runs.run_list_query(read_run_filter(params), cursor)[:51]
    sql, values = query.query.sql_with_params()
    switched = ["enable_seqscan", "enable_indexscan" if bitmaps else "enable_bitmapscan"]
    with connection.cursor() as database:
        for setting in switched:
            database.execute(f"SET LOCAL {setting} = off")
        database.execute("EXPLAIN " + sql, values)
        lines = [row[0] for row in database.fetchall()]
        for setting in switched:
            database.execute(f"SET LOCAL {setting} = on")
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("params", "index", "ordered"),
    [
        ({}, "run_created", True),
        ({"state": "completed"}, "run_state_created", True),
        ({"document": "document"}, "run_document_created", True),
        ({"person": "person"}, "run_starter_created", True),
        ({"from": "2026-01-01", "to": "2026-12-31"}, "run_created", True),
        # Containment in the GIN index, then the newest of what it found.
        ({"label": "team=a"}, "run_labels", False),
    ],
)
def test_each_filter_of_the_runs_list_is_read_through_its_index(
    some_runs: dict[str, str], params: dict[str, str], index: str, ordered: bool
) -> None:
    params = {key: some_runs.get(value, value) for key, value in params.items()}
    run = runs.get_run(some_runs["run"])
    later = encode_cursor([run.created_at.isoformat(), run.run])

    # A later page of the GIN's filter may as well start from the list's own index.
    for cursor in (None, later) if ordered else (None,):
        explained = plan(params, cursor, bitmaps=not ordered)

        assert index in explained, explained
        assert "Seq Scan on editor_run" not in explained, explained
        if ordered:  # the index gives the list's order: the first rows read are the page
            assert "Sort" not in explained, explained
