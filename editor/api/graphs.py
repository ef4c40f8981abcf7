"""``/v1/graphs`` and ``/v1/schema/graph.json``: the reference's graph API, exactly.

Graph documents are read as raw bytes and parsed by our strict parser, never by a
framework schema, so they get the same verdict here as on the command line.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status

from editor.api.auth import AuthenticatedRequest
from editor.api.schemas import ErrorOut, GraphCreatedOut, GraphListOut, GraphOut, ValidationOut
from editor.graph import short_hash
from editor.services import runs
from editor.services.documents import graphs
from editor.services.paging import MAX_LIMIT

router = Router(tags=["graphs"])

#: The request body of the operations that take a graph document, for the OpenAPI document.
GRAPH_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "A graph document (schema: /v1/schema/graph.json), read strictly.",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}

#: A frozen graph never changes, so its export may be cached for good.
FOREVER = "public, max-age=31536000, immutable"


@router.post(
    "/graphs",
    response={201: GraphCreatedOut, 400: ErrorOut, 403: ErrorOut},
    openapi_extra=GRAPH_BODY,
    summary="Store a graph",
)
def post_graph(request: AuthenticatedRequest) -> Status[graphs.StoredGraph]:
    """Store a valid graph by its hash; the same graph again stores nothing (`created: false`)."""
    return Status(201, graphs.store_graph(request.auth, request.body))


@router.get(
    "/graphs", response={200: GraphListOut, 400: ErrorOut}, exclude_unset=True, summary="List"
)
def list_graphs(
    request: HttpRequest,
    cursor: str | None = None,
    limit: int | None = Query(None, ge=1, le=MAX_LIMIT),
) -> dict[str, Any]:
    """Stored graphs sorted by hash; every one of them unless `cursor` or `limit` is given."""
    page = graphs.list_graphs(cursor=cursor, limit=limit)
    if cursor is None and limit is None:
        return {"graphs": page.items}
    return {"graphs": page.items, "next": page.next}


@router.post(
    "/graphs/validate",
    response={200: ValidationOut},
    openapi_extra=GRAPH_BODY,
    summary="Validate a graph",
)
def validate_graph(request: HttpRequest, runnable: bool = False) -> dict[str, Any]:
    """Validate a document without storing it; `200` for every body within the size cap.
    With `runnable=true`, a valid graph's answer adds `not_runnable`: every name it uses that
    does not resolve on this installation (empty when it can run here)."""
    if runnable:
        return runs.validate_runnable(request.body)
    return graphs.validate_graph_document(request.body)


@router.get("/graphs/{graph}", response={200: GraphOut, 404: ErrorOut}, summary="Get a graph")
def get_graph(request: HttpRequest, graph: str) -> dict[str, Any]:
    """A stored graph in its wire form, as an embedded JSON object."""
    return {"graph": graph, "document": graphs.graph_document(graph)}


@router.get(
    "/graphs/{graph}/export",
    response={200: Any, 404: ErrorOut},
    openapi_extra={
        "responses": {
            200: {
                "description": "The canonical bytes; their SHA-256 is the hash.",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        }
    },
    summary="Export a graph",
)
def export_graph(request: HttpRequest, graph: str) -> HttpResponse:
    """The canonical bytes of a stored graph, cacheable forever."""
    response = HttpResponse(graphs.export_graph(graph), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{short_hash(graph)}.json"'
    response["ETag"] = f'"{graph}"'
    response["Cache-Control"] = FOREVER
    return response


@router.get("/schema/graph.json", response={200: dict[str, Any]}, summary="Graph JSON Schema")
def graph_schema(request: HttpRequest) -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a graph document, generated from the model."""
    return graphs.json_schema()
