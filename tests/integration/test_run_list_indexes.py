"""Each filter of the runs list is served by an index, on PostgreSQL: the plans of the list's
query (``editor.services.runs.run_list_query``) read the index made for it, in the list's
order, and never the whole table. On SQLite, which plans from other statistics, this module is
skipped naming the engine (as ``test_database.py`` does); ``make bench-scale`` times both.

The tables here are tiny, where a sequential scan is always cheapest, so the plans are read
with ``enable_seqscan`` off: what is checked is that an index *can* serve each query, which is
what the planner chooses on a large table (``docs/benchmarks.md``, the scale benchmark).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from editor.services import documents, runs
from editor.services.paging import encode_cursor
from editor.services.run_filters import read_run_filter
from tests.integration.api.running import ECHO_CHAIN
from tests.integration.test_database import engine_in_use

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip(f"PostgreSQL only; this run uses {engine_in_use()}")


@pytest.fixture
def some_runs(author: User, operator: User) -> dict[str, str]:
    made = documents.create_document(author, title="Notes", text=json.dumps(ECHO_CHAIN))
    digest = documents.freeze(author, made.slug, expected_revision=1).graph
    started = [
        runs.start_run(operator, digest, None, {"team": "a"}, document_slug=made.slug)
        for _ in range(5)
    ]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE editor_run")
    return {"graph": digest, "document": made.slug, "run": started[2].run}


def plan(params: dict[str, Any], cursor: str | None = None) -> str:
    query = runs.run_list_query(read_run_filter(params), cursor)[:51]
    sql, values = query.query.sql_with_params()
    with connection.cursor() as database:
        database.execute("SET LOCAL enable_seqscan = off")
        database.execute("EXPLAIN " + sql, values)
        lines = [row[0] for row in database.fetchall()]
        database.execute("SET LOCAL enable_seqscan = on")
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("params", "index", "ordered"),
    [
        ({}, "run_created", True),
        ({"state": "queued"}, "run_state_created", True),
        ({"graph": "graph"}, "run_graph_created", True),
        ({"document": "document"}, "run_document_created", True),
        ({"person": "otto"}, "run_starter_created", True),
        ({"from": "2026-01-01", "to": "2026-12-31"}, "run_created", True),
        # Containment in the GIN index, then the newest of what it found.
        ({"label": "team=a"}, "run_labels", False),
        ({"label": "team"}, "run_labels", False),
    ],
)
def test_each_filter_of_the_runs_list_is_read_through_its_index(
    some_runs: dict[str, str], params: dict[str, str], index: str, ordered: bool
) -> None:
    params = {key: some_runs.get(value, value) for key, value in params.items()}
    run = runs.get_run(some_runs["run"])
    later = encode_cursor([run.created_at.isoformat(), run.run])

    for cursor in (None, later):
        explained = plan(params, cursor)

        assert index in explained, explained
        assert "Seq Scan on editor_run" not in explained, explained
        if ordered:  # the index gives the list's order: the first rows read are the page
            assert "Sort" not in explained, explained
