"""The graphs that have something waiting, for the inbox's filter: the inbox's one raw SQL."""

from __future__ import annotations

from django.db import connection

from editor.services.inbox.items import GraphChoice
from editor.services.inbox.pending import graph_titles

__all__ = ["GRAPH_CHOICES", "graph_choices"]

#: How many graphs the filter offers (the graphs with the most recent waiting runs).
GRAPH_CHOICES = 100


# A loose index scan over run_parked_graph (graph, parked_at) WHERE parked_at IS NOT NULL: one
# index probe per distinct graph, however many runs wait, where SELECT DISTINCT reads them all.
# Plain SQL that SQLite and PostgreSQL both run; parked_at is set exactly while a run is parked.
_PARKED_GRAPHS_SQL = """
WITH RECURSIVE graphs(graph_id) AS (
    SELECT MIN(graph_id) FROM editor_run WHERE parked_at IS NOT NULL AND test_revision IS NULL
    UNION ALL
    SELECT (SELECT MIN(graph_id) FROM editor_run
            WHERE parked_at IS NOT NULL AND test_revision IS NULL AND graph_id > graphs.graph_id)
    FROM graphs WHERE graphs.graph_id IS NOT NULL
)
SELECT graph_id FROM graphs WHERE graph_id IS NOT NULL LIMIT %s
"""


def _parked_graphs(limit: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(_PARKED_GRAPHS_SQL, [limit])
        return [row[0] for row in cursor.fetchall()]


def graph_choices() -> list[GraphChoice]:
    """The graphs that have something waiting, for the inbox's filter (two queries)."""
    hashes = _parked_graphs(GRAPH_CHOICES)
    versions = graph_titles(hashes) if hashes else {}
    choices = []
    for digest in hashes:
        first = versions.get(digest, [])
        title, number = (first[0][2], first[0][3]) if first else (None, None)
        choices.append(GraphChoice(digest, title, number))
    return sorted(choices, key=lambda choice: (choice.title is None, choice.label))
