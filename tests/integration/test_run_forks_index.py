"""A run's page lists its forks through ``run_forks``, a partial index over the forks alone, on
both engines. With the plain foreign-key index, where every run that is not a fork sits under
one key (no origin), SQLite's planner judged a lookup by origin as costly as reading every run,
and scanned the whole table in the list's order instead: 127 ms for a run page at 100,000 runs
(``docs/benchmarks.md``, the scale benchmark)."""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth.models import User
from django.db import connection

from editor.models import Run
from editor.services import documents, runs
from editor.services.runs.forks import fork_children
from tests.integration.api.running import ECHO_CHAIN

pytestmark = pytest.mark.django_db


def plan_of_the_fork_list(run_id: str) -> str:
    query = Run.objects.select_related("document").filter(origin_id=uuid.UUID(run_id))
    sql, values = query.order_by("created_at", "id").query.sql_with_params()
    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with connection.cursor() as cursor:
        cursor.execute(explain + sql, values)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


def test_the_fork_list_reads_the_index_of_the_forks_among_many_runs(
    author: User, operator: User
) -> None:
    made = documents.create_document(author, title="Notes", text=json.dumps(ECHO_CHAIN))
    digest = documents.freeze(author, made.slug, expected_revision=1).graph
    origin = runs.start_run(operator, digest, None, None, document_slug=made.slug).run
    model = Run.objects.get(id=origin)
    fields = [f.attname for f in Run._meta.concrete_fields if f.attname != "id"]
    others = [Run(id=uuid.uuid4(), **{f: getattr(model, f) for f in fields}) for _ in range(3000)]
    fork = Run(id=uuid.uuid4(), **{f: getattr(model, f) for f in fields if f != "origin_id"})
    fork.origin_id = model.id
    Run.objects.bulk_create([*others, fork])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    assert [child.run for child in fork_children(origin)] == [str(fork.id)]
    assert "run_forks" in plan_of_the_fork_list(origin)
