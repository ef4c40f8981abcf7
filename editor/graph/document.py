"""``validate_document``: bytes in, the body of ``POST /v1/graphs/validate`` out.

The API, the ``graph validate`` command and the editor all call this one
function, so a document gets the same verdict everywhere. It never raises: the
byte cap is checked before reading, parse failures become one
``malformed_document`` error, and E0 bounds the cost of validation.
"""

from __future__ import annotations

from typing import Any

from editor.graph.errors import ErrorData, JsonError, MalformedDocument
from editor.graph.jsonio import read_json
from editor.graph.model import Graph
from editor.graph.parsing import parse_graph
from editor.graph.validation import DEFAULT_MAX_EDGES, DEFAULT_MAX_NODES, summarize, validate
from editor.graph.wire import graph_hash

__all__ = ["DEFAULT_MAX_BYTES", "check_document", "validate_document"]

#: The request body cap of spec 07 (8 MiB).
DEFAULT_MAX_BYTES = 8 * 1024 * 1024


def check_document(
    data: bytes | bytearray | memoryview | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> tuple[Graph | None, list[ErrorData]]:
    """Read and check a document given as JSON text: the graph (``None`` when it is too large
    or cannot be read) and every error, in the order :func:`validate_document` gives them."""
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if size > max_bytes:
        message = f"the document is {size} bytes; the limit is {max_bytes}"
        return None, [{"code": "payload_too_large", "message": message}]
    try:
        graph = parse_graph(read_json(data))
    except (JsonError, MalformedDocument) as error:
        return None, [{"code": "malformed_document", "message": str(error)}]
    return graph, validate(graph, max_nodes=max_nodes, max_edges=max_edges)


def validate_document(
    data: bytes | bytearray | memoryview | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> dict[str, Any]:
    """Validate a document given as JSON text; see spec 05 for the shape returned."""
    graph, errors = check_document(
        data, max_bytes=max_bytes, max_nodes=max_nodes, max_edges=max_edges
    )
    if graph is None or errors:
        return {"valid": False, "errors": errors}
    return {"valid": True, "graph": graph_hash(graph), "summary": summarize(graph)}
