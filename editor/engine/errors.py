"""The engine's error family: one root, subclasses that carry their data."""

from __future__ import annotations

from typing import Any

__all__ = [
    "AlreadyVoted",
    "AppendRefused",
    "EngineError",
    "ForkRefused",
    "InvalidForkNode",
    "InvalidResumeInput",
    "NotParked",
    "OriginMoving",
    "OriginNeedsReconciliation",
    "ProviderError",
    "RunLost",
    "ToolError",
    "TransitionRefused",
    "WriteReplayHazard",
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


class AlreadyVoted(EngineError):
    """A second vote from the same person on one open gate (HTTP 409 ``already_voted``)."""

    def __init__(self, by: str, at: str | None) -> None:
        super().__init__(f"{by} already voted on this gate at {at}")
        self.by = by
        self.at = at


class InvalidResumeInput(EngineError):
    """A resume input that breaks the recorded schema: every violation, with its path."""

    def __init__(self, violations: list[dict[str, Any]]) -> None:
        super().__init__(f"the resume input has {len(violations)} violation(s)")
        self.violations = violations


class ForkRefused(EngineError):
    """A fork that cannot be made (spec 05, ``POST /v1/runs/{id}/fork``); nothing is created."""


class InvalidForkNode(ForkRefused):
    """The node is not a boundary the origin reached at the top of its graph: unknown, never
    entered (skipped, unreached, or failed before its entry), or inside a map's or fold's
    body (``invalid_fork_node``)."""

    def __init__(self, node: str, why: str) -> None:
        super().__init__(why)
        self.node = node


class OriginNeedsReconciliation(ForkRefused):
    """The origin waits for a person to settle a cut-off write (``origin_needs_reconciliation``):
    a fork would inherit a write whose outcome nobody knows."""

    def __init__(self, run_id: str, intent: dict[str, Any] | None) -> None:
        super().__init__(
            f"run {run_id} waits for a cut-off write to be reconciled; resolve it first, so "
            f"the fork does not inherit an unsettled write"
        )
        self.intent = intent


class OriginMoving(ForkRefused):
    """The origin is queued or running: the writes its re-walked segment holds are not known
    yet (``wrong_state``)."""

    def __init__(self, run_id: str, state: str) -> None:
        super().__init__(
            f"run {run_id} is still moving (it is `{state}`); fork it once it rests (parked "
            f"or finished), when the writes a fork would re-walk are known"
        )
        self.state = state


class WriteReplayHazard(ForkRefused):
    """The segment a fork re-walks holds recorded ``write`` calls the caller did not
    acknowledge (``write_replay_hazard``): ``writes`` are exactly those."""

    def __init__(self, run_id: str, from_node: str, writes: list[dict[str, Any]]) -> None:
        seqs = ", ".join(str(write["seq"]) for write in writes)
        super().__init__(
            f"forking run {run_id} from node `{from_node}` would run {len(writes)} recorded "
            f"write(s) again; acknowledge them (acknowledge_writes: [{seqs}]) to accept that "
            f"they may happen twice, then fork"
        )
        self.writes = writes
