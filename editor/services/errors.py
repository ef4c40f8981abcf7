"""The error family of the application layer.

Services raise these; the edges render them (the API maps each class to a status code
and an error code once, in ``editor.api.errors``; the command line prints the message).
Each class carries the data its rendering needs, never an HTTP status.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "InvalidAgent",
    "InvalidCursor",
    "InvalidGraph",
    "InvalidRequest",
    "NotAllowed",
    "PreconditionRequired",
    "ServiceError",
    "SlugTaken",
    "StaleDraft",
    "UnknownAgent",
    "UnknownDocument",
    "UnknownGraph",
]


class ServiceError(Exception):
    """Root of every error a service raises on purpose."""

    message = "the request cannot be carried out"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.message)

    def details(self) -> dict[str, Any] | None:
        """Data that locates or explains the error, or ``None``."""
        return None


class NotAllowed(ServiceError):
    """The user lacks the role the action needs (spec 06)."""

    message = "you are not allowed to do this"


class InvalidRequest(ServiceError):
    """A value the caller sent is not acceptable (a slug, a title, a revision)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def details(self) -> dict[str, Any] | None:
        return {"field": self.field} if self.field else None


class InvalidCursor(InvalidRequest):
    """A paging cursor this server did not hand out."""

    def __init__(self) -> None:
        super().__init__("the cursor is not one this server handed out", "cursor")


class UnknownGraph(ServiceError):
    """No stored graph has this hash (or the text is not a hash at all)."""

    def __init__(self, graph: str) -> None:
        super().__init__("no graph with this hash is stored")
        self.graph = graph


class UnknownDocument(ServiceError):
    """No document has this slug."""

    def __init__(self, slug: str) -> None:
        super().__init__("no document has this slug")
        self.slug = slug


class UnknownAgent(ServiceError):
    """No stored agent definition has this hash."""

    def __init__(self, agent: str) -> None:
        super().__init__("no agent definition with this hash is stored")
        self.agent = agent


class InvalidGraph(ServiceError):
    """A graph document that does not parse (``malformed``) or does not validate."""

    def __init__(self, errors: list[dict[str, Any]], *, malformed: bool) -> None:
        if malformed:
            message = "the graph document is not well formed"
        else:
            message = f"the graph document has {len(errors)} validation error(s)"
        super().__init__(message)
        self.errors = errors
        self.malformed = malformed

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors}


class InvalidAgent(ServiceError):
    """An agent definition that does not parse; ``errors`` lists each problem."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__(f"the agent definition has {len(errors)} error(s)")
        self.errors = errors

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors}


class SlugTaken(ServiceError):
    """Another document already has this slug."""

    def __init__(self, slug: str) -> None:
        super().__init__(f"the slug `{slug}` is taken by another document")
        self.slug = slug

    def details(self) -> dict[str, Any]:
        return {"slug": self.slug}


class PreconditionRequired(ServiceError):
    """A draft write without the revision it was based on."""

    message = 'send the revision you read as If-Match: "<revision>"'


class StaleDraft(ServiceError):
    """The draft changed since the writer read it; ``revision`` is the current one."""

    def __init__(self, revision: int) -> None:
        super().__init__(
            f"the draft has changed since you read it; it is now at revision {revision}"
        )
        self.revision = revision

    def details(self) -> dict[str, Any]:
        return {"revision": self.revision}
