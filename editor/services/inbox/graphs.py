"""The graphs that have something waiting, for the inbox's filter: the inbox's one raw SQL.

A process reads them at most every :data:`FRESH_FOR` seconds: the filter's list is a way to
narrow the cards, read once per page anyway (the cards themselves follow the page's stream), and
reading it for every page was a fifth of the database's time on the inbox's first page. A graph
whose first card just opened is offered a few seconds later (its hash in the address filters by
it at once); one whose last card was just decided, for a few seconds more.
"""

from __future__ import annotations

import time

from django.db import connection

from editor.services.inbox.items import GraphChoice

__all__ = ["FRESH_FOR", "GRAPH_CHOICES", "forget_graph_choices", "graph_choices"]

#: How many graphs the filter offers (the first so many by hash; the filter also reads a hash
#: in the address).
GRAPH_CHOICES = 100
#: How long (seconds) a process keeps the choices it read.
FRESH_FOR = 10.0

#: When the choices were read, and what they were (a tuple is replaced whole: no lock).
_kept: tuple[float, list[GraphChoice]] | None = None


# A loose index scan over run_parked_graph (graph, parked_at) WHERE parked_at IS NOT NULL: one
# index probe per distinct graph, however many runs wait, where SELECT DISTINCT reads them all;
# with each graph the title and number of its first version (the first document that froze it),
# in the same query. Plain SQL that SQLite and PostgreSQL both run; parked_at is set exactly
# while a run is parked.
_PARKED_GRAPHS_SQL = """
WITH RECURSIVE graphs(graph_id) AS (
    SELECT MIN(graph_id) FROM editor_run WHERE parked_at IS NOT NULL AND test_revision IS NULL
    UNION ALL
    SELECT (SELECT MIN(graph_id) FROM editor_run
            WHERE parked_at IS NOT NULL AND test_revision IS NULL AND graph_id > graphs.graph_id)
    FROM graphs WHERE graphs.graph_id IS NOT NULL
)
SELECT graph_id, title, number FROM (
    SELECT parked.graph_id, document.title, version.number, ROW_NUMBER() OVER (
        PARTITION BY parked.graph_id ORDER BY version.document_id, version.number
    ) AS nth
    FROM (SELECT graph_id FROM graphs WHERE graph_id IS NOT NULL LIMIT %s) AS parked
    LEFT JOIN editor_version AS version ON version.graph_id = parked.graph_id
    LEFT JOIN editor_document AS document ON document.id = version.document_id
) AS firsts WHERE nth = 1
"""


def graph_choices() -> list[GraphChoice]:
    """The graphs that have something waiting, for the inbox's filter (one query, at most
    every :data:`FRESH_FOR` seconds)."""
    global _kept
    kept = _kept
    now = time.monotonic()
    if kept is not None and now - kept[0] < FRESH_FOR:
        return list(kept[1])
    choices = _read_choices()
    _kept = (now, choices)
    return list(choices)


def forget_graph_choices() -> None:
    """Read the choices again on the next page (tests: each starts from what it made)."""
    global _kept
    _kept = None


def _read_choices() -> list[GraphChoice]:
    with connection.cursor() as cursor:
        cursor.execute(_PARKED_GRAPHS_SQL, [GRAPH_CHOICES])
        choices = [GraphChoice(digest, title, number) for digest, title, number in cursor]
    return sorted(choices, key=lambda choice: (choice.title is None, choice.label))
