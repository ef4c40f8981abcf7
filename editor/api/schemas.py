"""The request and response schemas of ``/v1`` (``ThingIn`` / ``ThingOut``).

Graph documents and agent definitions are not described here: those bodies are read
as raw bytes by our strict parsers, not by pydantic. Free JSON (a graph's wire form,
validation error objects, diff field changes) is typed as plain objects so that
nothing in it is dropped or rewritten.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from ninja import Field, Schema
from pydantic import SerializerFunctionWrapHandler, model_serializer

__all__ = [
    "AgentCreatedOut",
    "AgentListOut",
    "AgentOut",
    "DiffOut",
    "DocumentDetailOut",
    "DocumentIn",
    "DocumentListOut",
    "DocumentOut",
    "DraftIn",
    "DraftOut",
    "ErrorOut",
    "FreezeIn",
    "FreezeOut",
    "GraphCreatedOut",
    "GraphListOut",
    "GraphOut",
    "GraphSummaryOut",
    "ValidationOut",
    "VersionListOut",
    "VersionOut",
]

SLUG_PATTERN = r"^[a-z0-9-]{1,64}$"


class _OmitNone(Schema):
    """A schema whose optional keys (``_omitted_when_none``) are left out rather than null."""

    _omitted_when_none: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    # No return annotation: with one, pydantic would describe the output as a bare object.
    def _omit(self, handler: SerializerFunctionWrapHandler):
        data = handler(self)
        for key in self._omitted_when_none:
            if data.get(key) is None:
                data.pop(key, None)
        return data


# --- Errors -----------------------------------------------------------------------------------


class ErrorBody(_OmitNone):
    _omitted_when_none = frozenset({"details"})

    code: str
    message: str
    details: dict[str, Any] | None = None


class ErrorOut(Schema):
    """The one error envelope of ``/v1``."""

    error: ErrorBody


# --- Graphs -----------------------------------------------------------------------------------


class GraphCreatedOut(Schema):
    graph: str
    created: bool


class SummaryOut(Schema):
    node_count: int
    edge_count: int
    entry_nodes: list[str]
    terminal_nodes: list[str]


class GraphSummaryOut(Schema):
    graph: str
    node_count: int
    edge_count: int
    entry_nodes: list[str]
    terminal_nodes: list[str]


class GraphListOut(Schema):
    graphs: list[GraphSummaryOut]
    #: Present only when the request asked for a page (``cursor`` or ``limit``).
    next: str | None = None


class GraphOut(Schema):
    graph: str
    document: dict[str, Any]


class ValidationOut(_OmitNone):
    """``{"valid": true, "graph", "summary"}`` or ``{"valid": false, "errors"}``."""

    _omitted_when_none = frozenset({"graph", "summary", "errors"})

    valid: bool
    graph: str | None = None
    summary: SummaryOut | None = None
    errors: list[dict[str, Any]] | None = None


# --- Documents --------------------------------------------------------------------------------


class DocumentIn(Schema):
    slug: str | None = Field(None, pattern=SLUG_PATTERN)
    title: str = Field(min_length=1, max_length=200)
    text: str = ""


class DraftStateOut(Schema):
    revision: int
    valid: bool
    error_count: int


class LatestOut(Schema):
    version: int
    graph: str


class VersionOut(Schema):
    version: int
    graph: str
    frozen_by: str | None
    frozen_at: datetime
    note: str


class DocumentOut(_OmitNone):
    _omitted_when_none = frozenset({"latest"})

    slug: str
    title: str
    draft: DraftStateOut
    latest: LatestOut | None = None
    updated_at: datetime


class DocumentDetailOut(DocumentOut):
    versions: list[VersionOut]


class DocumentListOut(Schema):
    documents: list[DocumentOut]
    next: str | None


class VersionListOut(Schema):
    versions: list[VersionOut]
    next: str | None


class DraftIn(Schema):
    text: str


class DraftOut(Schema):
    text: str
    revision: int
    validation: ValidationOut


class FreezeIn(Schema):
    note: str = Field("", max_length=2000)


class FreezeOut(Schema):
    graph: str
    version: int
    created: bool


class NodeChangeOut(Schema):
    node: str
    #: ``{"path", "from"?, "to"?}``: a side is absent where the field is absent.
    fields: list[dict[str, Any]]


class NodeChangesOut(Schema):
    added: list[str]
    removed: list[str]
    changed: list[NodeChangeOut]


class EdgeChangesOut(Schema):
    #: Edges as in the document: ``{"from", "to", "label"?}``.
    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]


class DiffOut(Schema):
    identical: bool
    from_: str = Field(alias="from")
    to: str
    nodes: NodeChangesOut
    edges: EdgeChangesOut


# --- Agents -----------------------------------------------------------------------------------


class AgentCreatedOut(Schema):
    agent: str
    created: bool


class AgentOut(Schema):
    agent: str
    name: str | None
    #: The hashed form of the definition: no name, defaults written out.
    definition: dict[str, Any]


class AgentListOut(Schema):
    agents: list[AgentOut]
    next: str | None
