"""The error family of the graph package, and the shape of the errors validation collects.

Parsing raises, validation collects: a document that cannot be read raises
:class:`MalformedDocument`; a document that can be read is checked by
``validate``, which returns error objects as data (:class:`ErrorData`). Every exception
raised by this package derives from :class:`GraphError`, and the ones about where a text
stops being readable carry the place as data (:class:`JsonPosition`, ``location``), so no
caller reads it back out of a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Required, TypedDict

__all__ = [
    "EdgeRef",
    "ErrorData",
    "ErrorKeys",
    "ExpressionError",
    "GraphError",
    "InvalidAgentDefinition",
    "JsonError",
    "JsonPosition",
    "MalformedDocument",
]


class GraphError(Exception):
    """Root of every exception raised by ``editor.graph``."""


@dataclass(frozen=True, slots=True)
class JsonPosition:
    """Where the strict JSON reader stopped in a text (line and column from 1), and what it
    expected there (Python's own words, such as ``Expecting ',' delimiter``)."""

    what: str
    line: int
    column: int


class JsonError(GraphError, ValueError):
    """JSON text the strict reader refuses (see spec 01, *Strict parsing*); ``at`` is where,
    when the refusal is a syntax error."""

    def __init__(self, message: str, *, at: JsonPosition | None = None) -> None:
        self.at = at
        super().__init__(message)


class MalformedDocument(GraphError, ValueError):
    """A graph document that does not parse; ``str()`` says what and where.

    The place is data too: ``at`` when the text is not JSON, else ``location`` (the path of the
    value in the document, ``nodes[0].payload``; ``""`` at the top level) and ``reason`` (the
    message without it)."""

    code = "malformed_document"

    def __init__(
        self,
        message: str,
        *,
        at: JsonPosition | None = None,
        location: str = "",
        reason: str = "",
    ) -> None:
        self.at = at
        self.location = location
        self.reason = reason or message
        super().__init__(message)


class InvalidAgentDefinition(GraphError, ValueError):
    """An agent definition with problems; ``errors`` lists each one as data."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(error["message"] for error in errors))


class ExpressionError(GraphError, ValueError):
    """A condition expression or reference that does not parse.

    ``str()`` is the exact message of spec 03: ``found {what} at character
    {position}``, or the bare message for errors that carry no position (the
    length limit, a literal given as a reference).
    """

    def __init__(self, what: str, position: int | None = None) -> None:
        self.what = what
        self.position = position
        message = what if position is None else f"found {what} at character {position}"
        super().__init__(message)


#: An edge as an error names it (``dangling_edge``, ``edge_type_mismatch``).
EdgeRef = TypedDict("EdgeRef", {"from": str, "to": str})


class ErrorKeys(TypedDict, total=False):
    """The keys an error object may carry beside its code and message: each check's own
    (spec 02's tables, the run-time resolution's, E10's findings), then ``subgraph``."""

    found: Any
    supported: int
    node: str
    edge: EdgeRef
    missing: str
    suggestion: str | None
    hash: str
    len: int
    max: int
    case: str
    error: str
    reference: str
    #: A cycle's path (``a -> b -> a``), or where in a schema a finding is (a JSON Pointer).
    path: str
    to: str
    label: str
    field: str
    owner: str
    kind: str
    body: str
    nodes: int
    edges: int
    max_nodes: int
    max_edges: int
    tool: str
    agent_hash: str
    model: str
    dialect: Any
    pattern: str
    #: The owners of the level the error is in, outermost first (absent at the top level).
    subgraph: list[str]
    #: Where a ``malformed_document`` stops being readable, added by the editor from the
    #: :class:`MalformedDocument` it read (the API's error objects never carry these):
    #: ``line``, ``column`` and ``reason`` for text that is not JSON; ``location`` and
    #: ``reason`` for JSON that is not a graph document.
    line: int
    column: int
    location: str
    reason: str


class ErrorData(ErrorKeys, total=False):
    """An error object of spec 02 (API and editor alike): ``code``, ``message``, then the keys
    of :class:`ErrorKeys` its check sets, in the order the API returns them."""

    code: Required[str]
    message: Required[str]
