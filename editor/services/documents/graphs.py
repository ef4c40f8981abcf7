"""Graphs: content-addressed, immutable, stored by their hash.

A graph is stored once, as its canonical bytes (the export), under ``graph_hash``.
Posting the same graph again stores nothing and keeps the first copy. Reading,
listing and exporting need only a signed-in user; storing needs the *authors* role.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from editor.graph import (
    Graph,
    canonical_graph,
    check_document,
    graph_hash,
    graph_json_schema,
    parse_document,
    summarize,
    validate,
    validate_document,
    wire_value,
)
from editor.models import FrozenGraph
from editor.services import quotas
from editor.services.access import ActingUser, author_of, can_author
from editor.services.errors import InvalidGraph, InvalidRequest, NotAllowed, UnknownGraph
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, encode_cursor
from editor.services.storable import nul_path

__all__ = [
    "PAGE_MAX_BYTES",
    "StoredGraph",
    "check_graph",
    "export_graph",
    "graph_document",
    "is_graph_hash",
    "json_schema",
    "list_graphs",
    "load_graph",
    "save_graph",
    "store_graph",
    "validate_graph_document",
]

_HASH = re.compile(r"sha256:[0-9a-f]{64}")

#: A page of ``GET /v1/graphs?limit=`` stops before its summaries pass this many bytes of JSON
#: (it always holds one graph): ``limit`` counts graphs, and one graph whose nodes are all
#: entries and terminals has a summary of megabytes.
PAGE_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class StoredGraph:
    """The outcome of storing a graph: its hash, and whether this call stored it."""

    graph: str
    created: bool


def is_graph_hash(text: str) -> bool:
    """Whether ``text`` is a full ``sha256:<64 lowercase hex>`` hash."""
    return _HASH.fullmatch(text) is not None


def _limits() -> dict[str, int]:
    return {
        "max_bytes": settings.GATEHOUSE_MAX_BODY_BYTES,
        "max_nodes": settings.GATEHOUSE_MAX_NODES,
        "max_edges": settings.GATEHOUSE_MAX_EDGES,
    }


def validate_graph_document(data: bytes | str) -> dict[str, Any]:
    """The body of ``POST /v1/graphs/validate``, with the configured limits; never stores."""
    return validate_document(data, **_limits())


def validate_parsed(text: str, graph: Graph) -> dict[str, Any]:
    """:func:`validate_graph_document` of ``text``, for a caller that parsed it already
    (``graph``): the same body, without reading the text again."""
    size = len(text.encode("utf-8", "surrogatepass"))
    limit = settings.GATEHOUSE_MAX_BODY_BYTES
    if size > limit:
        return validate_graph_document(text)
    errors = validate(
        graph, max_nodes=settings.GATEHOUSE_MAX_NODES, max_edges=settings.GATEHOUSE_MAX_EDGES
    )
    if errors:
        return {"valid": False, "errors": errors}
    return {"valid": True, "graph": graph_hash(graph), "summary": summarize(graph)}


def check_graph(data: bytes | str) -> Graph:
    """Parse and validate a document; raises :class:`InvalidGraph` with every error.

    The error objects are exactly those of :func:`validate_graph_document`.
    """
    graph, errors = check_document(data, **_limits())
    if graph is None:
        raise InvalidGraph(errors, malformed=True)
    if errors:
        raise InvalidGraph(errors, malformed=False)
    return graph


def save_graph(graph: Graph, *, by: ActingUser | None = None) -> StoredGraph:
    """Store a valid graph unless its hash is stored already (the first copy is kept).

    Safe under concurrent calls: the hash is the primary key, so of two writers of one
    graph exactly one inserts and the other sees ``created=False``. May run inside a
    caller's transaction (the insert has its own savepoint).
    """
    digest = graph_hash(graph)
    if FrozenGraph.objects.filter(hash=digest).exists():
        return StoredGraph(digest, created=False)
    summary = summarize(graph)
    if nul_path(summary) is not None:
        raise InvalidRequest("a node id with a NUL (U+0000) character cannot be stored", "nodes")
    try:
        with transaction.atomic():
            canonical = canonical_graph(graph)
            FrozenGraph.objects.create(
                hash=digest,
                canonical=canonical,
                summary=summary,
                created_by=author_of(by),
            )
            quotas.charge_bytes(by, len(canonical), "storing this graph")
    except IntegrityError:
        # Someone stored the same graph between our look and our insert.
        if not FrozenGraph.objects.filter(hash=digest).exists():
            raise
        return StoredGraph(digest, created=False)
    return StoredGraph(digest, created=True)


def store_graph(user: ActingUser, data: bytes | str) -> StoredGraph:
    """``POST /v1/graphs``: parse strictly, validate, store content-addressed."""
    if not can_author(user):
        raise NotAllowed()
    return save_graph(check_graph(data), by=user)


def _stored(digest: str) -> FrozenGraph:
    if not is_graph_hash(digest):
        raise UnknownGraph(digest)
    try:
        return FrozenGraph.objects.get(hash=digest)
    except FrozenGraph.DoesNotExist:
        raise UnknownGraph(digest) from None


def export_graph(digest: str) -> bytes:
    """The canonical bytes of a stored graph; their SHA-256 is the hash."""
    # BinaryField reads back as memoryview on PostgreSQL.
    return bytes(_stored(digest).canonical)


def load_graph(digest: str) -> Graph:
    """A stored graph, parsed back into the model."""
    return parse_document(export_graph(digest))


def graph_document(digest: str) -> dict[str, Any]:
    """A stored graph in its wire form, as JSON values (``GET /v1/graphs/{hash}``)."""
    return wire_value(load_graph(digest))


def json_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a graph document, generated from the model."""
    return graph_json_schema()


def list_graphs(*, cursor: str | None = None, limit: int | None = None) -> Page[dict[str, Any]]:
    """Stored graphs sorted by hash, with their summaries.

    Without ``cursor`` and ``limit`` every graph is listed (the reference's shape);
    otherwise a page of ``limit`` (default 50), shorter when its summaries would pass
    :data:`PAGE_MAX_BYTES`.
    """
    rows = FrozenGraph.objects.order_by("hash").values_list("hash", "summary")
    if cursor is not None:
        (after,) = decode_cursor(cursor, (str,))
        rows = rows.filter(hash__gt=after)
    if cursor is None and limit is None:
        return Page([_summary(digest, summary) for digest, summary in rows], None)
    size = limit or DEFAULT_LIMIT
    items: list[dict[str, Any]] = []
    used = 0
    # A few rows at a time: one summary of a wide graph is megabytes (every node an entry).
    for digest, summary in rows[: size + 1].iterator(chunk_size=8):
        item = _summary(digest, summary)
        cost = len(json.dumps(item))
        if len(items) == size or (items and used + cost > PAGE_MAX_BYTES):
            return Page(items, encode_cursor([items[-1]["graph"]]))
        items.append(item)
        used += cost
    return Page(items, None)


def _summary(digest: str, summary: dict[str, Any]) -> dict[str, Any]:
    return {
        "graph": digest,
        "node_count": summary["node_count"],
        "edge_count": summary["edge_count"],
        "entry_nodes": summary["entry_nodes"],
        "terminal_nodes": summary["terminal_nodes"],
    }
