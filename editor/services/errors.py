"""The error family of the application layer.

Services raise these; the edges render them (the API maps each class to a status code
and an error code once, in ``editor.api.errors``; the command line prints the message).
Each class carries the data its rendering needs, never an HTTP status.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AlreadyFinished",
    "InputTooLarge",
    "InvalidAgent",
    "InvalidCursor",
    "InvalidGraph",
    "InvalidRequest",
    "InvalidResume",
    "NotAllowed",
    "NotRunnable",
    "NotSuspended",
    "PreconditionRequired",
    "RunBusy",
    "ServiceError",
    "SlugTaken",
    "StaleDraft",
    "UnknownAgent",
    "UnknownDocument",
    "UnknownGraph",
    "UnknownRun",
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


class InputTooLarge(InvalidRequest):
    """A run's input whose first event (``GraphRunStarted``) would pass the event cap."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"the input is too large: the run's first event would be {size} bytes, over the "
            f"limit of {limit} bytes (GATEHOUSE_EVENT_MAX_BYTES)",
            "input",
        )
        self.size = size
        self.limit = limit

    def details(self) -> dict[str, Any]:
        return {"field": "input", "limit": self.limit, "size": self.size}


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


class UnknownRun(ServiceError):
    """No run has this id (or the text is not a run id at all)."""

    def __init__(self, run: str) -> None:
        super().__init__("no run has this id")
        self.run = run


class NotRunnable(ServiceError):
    """A valid graph that cannot run on this installation: names that do not resolve
    (spec 02, run-time resolution). ``errors`` are all of them, in document order; the
    edge answers with the first one's ``code``."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        first = errors[0]["message"] if errors else "the graph cannot run here"
        super().__init__(f"the graph cannot run here: {first}")
        self.errors = errors

    @property
    def code(self) -> str:
        return str(self.errors[0]["code"]) if self.errors else "not_runnable"

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors}


class NotSuspended(ServiceError):
    """A resume for a run that is not waiting for one; when someone resolved it already,
    who and when."""

    def __init__(
        self, state: str, resolved_by: str | None = None, resolved_at: str | None = None
    ) -> None:
        if resolved_by is not None:
            message = f"the run was already resolved by {resolved_by} at {resolved_at}"
        else:
            message = f"the run is not waiting for a resolution (it is `{state}`)"
        super().__init__(message)
        self.state = state
        self.resolved_by = resolved_by
        self.resolved_at = resolved_at

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"state": self.state}
        if self.resolved_by is not None:
            details["resolved_by"] = self.resolved_by
            details["resolved_at"] = self.resolved_at
        return details


class AlreadyFinished(ServiceError):
    """An abandon (or another change) of a run that has already ended."""

    def __init__(self, state: str) -> None:
        super().__init__(f"the run has already finished (it is `{state}`)")
        self.state = state

    def details(self) -> dict[str, Any]:
        return {"state": self.state}


class RunBusy(ServiceError):
    """A change that kept losing the race against the worker driving the run."""

    message = "the run kept changing while this request tried to change it; try again"


class InvalidResume(ServiceError):
    """A resume input that breaks the recorded schema; nothing was recorded."""

    def __init__(self, violations: list[dict[str, Any]]) -> None:
        super().__init__(f"the resume input has {len(violations)} violation(s)")
        self.violations = violations

    def details(self) -> dict[str, Any]:
        return {"violations": self.violations}
