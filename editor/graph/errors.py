"""The error family of the graph package.

Parsing raises, validation collects: a document that cannot be read raises
:class:`MalformedDocument`; a document that can be read is checked by
``validate``, which returns error objects as data. Every exception raised by
this package derives from :class:`GraphError`.
"""

from __future__ import annotations

__all__ = [
    "ExpressionError",
    "GraphError",
    "InvalidAgentDefinition",
    "JsonError",
    "MalformedDocument",
]


class GraphError(Exception):
    """Root of every exception raised by ``editor.graph``."""


class JsonError(GraphError, ValueError):
    """JSON text the strict reader refuses (see spec 01, *Strict parsing*)."""


class MalformedDocument(GraphError, ValueError):
    """A graph document that does not parse; ``str()`` says what and where."""

    code = "malformed_document"


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
