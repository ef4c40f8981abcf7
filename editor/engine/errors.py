"""The engine's error family: one root, subclasses that carry their data."""

from __future__ import annotations

from typing import Any

__all__ = [
    "AppendRefused",
    "EngineError",
    "InvalidResumeInput",
    "NotParked",
    "ProviderError",
    "RunLost",
    "ToolError",
    "TransitionRefused",
]


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""


class TransitionRefused(EngineError):
    """A run-state change the table of spec 04 does not allow (HTTP 409)."""

    def __init__(self, current: str, target: str, why: str | None = None) -> None:
        message = f"a run cannot go from `{current}` to `{target}`"
        super().__init__(f"{message}: {why}" if why else message)
        self.current = current
        self.target = target


class AppendRefused(EngineError):
    """The strict append guard refused events: wrong schema version, a seq gap or repeat,
    a wrong run id, or anything after a terminal event."""


class RunLost(EngineError):
    """The driving worker no longer owns the run: its lease was taken over, someone else
    appended first (an abandon, say), or the run ended. The worker stops and discards any
    in-flight result."""


class ToolError(EngineError):
    """Raised by a tool to fail its call; the message becomes
    ``tool node `{node}` failed: {message}``."""


class ProviderError(EngineError):
    """Raised by a model provider; the message becomes ``agent node `{node}`: {message}``."""


class NotParked(EngineError):
    """A resume for a run that is not waiting for one (HTTP 409 ``not_suspended``)."""

    def __init__(self, state: str, resolved_by: str | None = None, resolved_at: str | None = None):
        super().__init__(f"the run is not waiting for a resolution (it is `{state}`)")
        self.state = state
        self.resolved_by = resolved_by
        self.resolved_at = resolved_at


class InvalidResumeInput(EngineError):
    """A resume input that breaks the recorded schema: every violation, with its path."""

    def __init__(self, violations: list[dict[str, Any]]) -> None:
        super().__init__(f"the resume input has {len(violations)} violation(s)")
        self.violations = violations
