"""The event catalogue and the forward-tolerant reader (spec 04, *Events*).

Reading is tolerant (seed 002's posture): an event kind the catalogue does not model is kept
as it is and shown under its raw kind; a payload field it does not model is kept too. The
audit (``manage.py audit_events``) counts both. Appending is strict: :func:`check_append`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from editor.engine.errors import AppendRefused
from editor.engine.ports import SCHEMA_VERSION, Envelope

__all__ = [
    "EVENT_FIELDS",
    "TERMINAL_KINDS",
    "Audit",
    "audit",
    "check_append",
    "envelope_from_json",
    "unmodeled_fields",
]

_SCOPED = ("scope",)

# kind → the payload fields we model (required and optional alike).
EVENT_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(fields)
    for kind, fields in {
        # ``approval_policy``: the policy in force when the run started (engine.approvals).
        "GraphRunStarted": ("graph_hash", "input", "labels", "forked_from", "approval_policy"),
        "NodeEntered": ("node", *_SCOPED),
        "NodeExited": ("node", "output", "pinned", *_SCOPED),
        "NodeSkipped": ("node", "reason", *_SCOPED),
        "ToolCallRequested": (
            "node",
            "tool",
            "input",
            "effect",
            "idempotency_key",
            "call",
            *_SCOPED,
        ),
        "ToolCallCompleted": ("node", "tool", "output", "call", "deduplicated_from", *_SCOPED),
        "ModelCallRequested": ("node", "model", "call", "idempotency_key", *_SCOPED),
        "ModelCallCompleted": ("node", "call", "reply", "usage", *_SCOPED),
        "BranchTaken": ("node", "case", *_SCOPED),
        "MapFannedOut": ("node", "items", *_SCOPED),
        "MapIterationStarted": ("node", "index", "child_run", *_SCOPED),
        "MapIterationJoined": ("node", "index", *_SCOPED),
        "FoldIterationStarted": ("node", "index", *_SCOPED),
        "FoldIterationJoined": ("node", "index", *_SCOPED),
        "FoldConverged": ("node", "winner_index", "reason", *_SCOPED),
        "Suspended": ("node", "reason", "input_schema", "kind", "value", *_SCOPED),
        # ``votes`` and ``quorum``: a gate decided by several people (engine.approvals);
        # ``deadline``: resolved by its due time with the policy's value (``by``: the deadline).
        "Resumed": (
            "node",
            "input",
            "by",
            "comment",
            "schema_hash",
            "votes",
            "quorum",
            "deadline",
            *_SCOPED,
        ),
        # One approval of a gate whose quorum it does not complete: the run stays parked.
        "ApprovalVoted": (
            "node",
            "input",
            "by",
            "comment",
            "schema_hash",
            "approvals",
            "quorum",
            *_SCOPED,
        ),
        # A gate past its due time whose policy escalates it: ``to`` may now decide it too.
        "GateEscalated": ("node", "to", "by", "due_at", *_SCOPED),
        "BudgetExceeded": ("node", "budget", "observed", *_SCOPED),
        "BudgetRaised": ("node", "kind", "limit", "by", *_SCOPED),
        "ReconciliationNeeded": ("node", "tool", "call", "input", "idempotency_key", *_SCOPED),
        "Reconciled": ("node", "call", "by", "output", "retry", *_SCOPED),
        "NowObserved": ("now",),
        "SleepStarted": ("wake_at", "node", *_SCOPED),
        "SleepCompleted": ("node", "by", "comment", *_SCOPED),
        "RunCompleted": ("output",),
        "RunFailed": ("error", "code", "node", *_SCOPED),
        "RunAbandoned": ("reason", "by"),
    }.items()
}

TERMINAL_KINDS = frozenset({"RunCompleted", "RunFailed", "RunAbandoned"})


def envelope_from_json(value: dict[str, Any]) -> Envelope:
    """Read a stored or served envelope, keeping whatever it does not model."""
    event = value.get("event") or {}
    return Envelope(
        run_id=str(value["run_id"]),
        seq=int(value["seq"]),
        recorded_at=str(value.get("recorded_at", "")),
        kind=str(event.get("kind", "")),
        payload=dict(event.get("payload") or {}),
        schema_version=int(value.get("schema_version", SCHEMA_VERSION)),
    )


def unmodeled_fields(envelope: Envelope) -> list[str]:
    """The payload fields of a modeled kind that the catalogue does not know (sorted)."""
    known = EVENT_FIELDS.get(envelope.kind)
    if known is None:
        return []
    return sorted(name for name in envelope.payload if name not in known)


def check_append(existing_count: int, last_kind: str | None, events: Sequence[Envelope]) -> None:
    """The strict append guard: events must continue the log without a gap or repeat, carry
    schema version 1 and one run id, and nothing may follow a terminal event."""
    if not events:
        raise AppendRefused("nothing to append")
    run_id = events[0].run_id
    previous = last_kind
    for offset, envelope in enumerate(events):
        if envelope.schema_version != SCHEMA_VERSION:
            raise AppendRefused(
                f"event {envelope.seq} has schema_version {envelope.schema_version}; "
                f"only {SCHEMA_VERSION} is written"
            )
        if envelope.run_id != run_id:
            raise AppendRefused(f"event {envelope.seq} belongs to another run")
        expected = existing_count + offset
        if envelope.seq != expected:
            raise AppendRefused(f"event seq {envelope.seq} does not continue the log at {expected}")
        if expected == 0 and envelope.kind != "GraphRunStarted":
            raise AppendRefused("a run's log opens with GraphRunStarted")
        if expected > 0 and envelope.kind == "GraphRunStarted":
            raise AppendRefused("GraphRunStarted opens a log; it cannot follow other events")
        if previous in TERMINAL_KINDS:
            raise AppendRefused(f"the run ended with {previous}; nothing can follow it")
        previous = envelope.kind


@dataclass(slots=True)
class Audit:
    """Counts over a body of events: unknown kinds, and unmodeled fields per kind."""

    events: int = 0
    unknown_kinds: Counter[str] = field(default_factory=Counter)
    unmodeled: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def clean(self) -> bool:
        return not self.unknown_kinds and not self.unmodeled


def audit(envelopes: Iterable[Envelope]) -> Audit:
    report = Audit()
    for envelope in envelopes:
        report.events += 1
        if envelope.kind not in EVENT_FIELDS:
            report.unknown_kinds[envelope.kind] += 1
            continue
        for name in unmodeled_fields(envelope):
            report.unmodeled[(envelope.kind, name)] += 1
    return report
