"""What the engine's step modules share: how a step fails or parks, payload helpers, and
what the drive offers the step mixins (:class:`DriveState`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from editor.engine.history import Scope

if TYPE_CHECKING:
    from editor.engine.ports import Clock, Installation, Limits, RunStore
    from editor.graph import Graph, Node

__all__ = [
    "Buffer",
    "DriveState",
    "Parked",
    "StepFailed",
    "compact_json",
    "error_message",
    "event_payload",
    "scope_json",
]

#: Events waiting to be appended, ``(kind, payload)``: one per thread, flushed as one step.
type Buffer = list[tuple[str, dict[str, Any]]]


class DriveState(Protocol):
    """What :class:`editor.engine.runner._Drive` offers its step mixins (``calls``,
    ``iteration``): the mixins name it as their base for the type checker only, so it checks
    both that they use nothing else and that the drive provides all of it."""

    run_id: str
    store: RunStore
    installation: Installation
    limits: Limits
    clock: Clock

    def flush(self, buffer: Buffer, *, check_size: bool = True) -> None: ...
    def remaining_time(self) -> float: ...
    def check_wall_time(self) -> None: ...
    def wall_time_spent(self) -> StepFailed: ...
    def count_map_items(self, count: int) -> None: ...
    def take_map_threads(self, wanted: int) -> int: ...
    def give_map_threads(self, count: int) -> None: ...
    def walk(self, graph: Graph, value: Any, scope: Scope, buffer: Buffer) -> Any: ...
    def run_node(
        self, graph: Graph, node: Node, value: Any, scope: Scope, buffer: Buffer
    ) -> tuple[Any, str | None]: ...
    def check_schema(self, schema: Any, value: Any, what: str, field: str) -> None: ...


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class StepFailed(Exception):
    """The run fails with this message (recorded as ``RunFailed``). ``node`` and ``scope``
    name the node it failed at, set by the innermost node the failure passes through."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.node: str | None = None
        self.scope: Scope = ()

    def at_node(self, node: str, scope: Scope) -> None:
        """Name the node the failure happened at, unless a node inside it was named first."""
        if self.node is None:
            self.node, self.scope = node, scope

    def payload(self) -> dict[str, Any]:
        """``RunFailed``'s payload: ``{"error", "code"?, "node"?, "scope"?}``."""
        payload: dict[str, Any] = {"error": self.message}
        if self.code:
            payload["code"] = self.code
        if self.node is not None:
            payload["node"] = self.node
            if self.scope:
                payload["scope"] = scope_json(self.scope)
        return payload


class Parked(Exception):
    """The walk stopped to wait for a person; ``events`` are the parking events to record."""

    def __init__(self, events: Buffer) -> None:
        super().__init__(f"{len(events)} parking event(s)")
        self.events = events


def scope_json(scope: Scope) -> list[list[Any]]:
    return [[owner, index] for owner, index in scope]


def event_payload(node: str, scope: Scope, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"node": node, **fields}
    if scope:
        payload["scope"] = scope_json(scope)
    return payload


def error_message(error: BaseException) -> str:
    text = str(error).strip()
    return text or type(error).__name__
