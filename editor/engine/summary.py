"""What a run's log adds up to besides its status: model usage, steps, the call in flight.

Pure folds of the event log (spec 05, the run object and ``/replay``):

* :func:`call_counts` — model calls requested and the tokens their completions report, for a
  slice of the log (the store adds a batch's counts to the run's running totals);
* :func:`pending_call` — the oldest model or tool call recorded as requested and not yet
  completed (a call in flight, or the write a run waits to have reconciled), or ``None``;
* :func:`usage_of` — ``{"input_tokens", "output_tokens"}`` as the API spells it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from editor.engine.ports import Envelope
from editor.engine.status import scope_key

__all__ = ["call_counts", "pending_call", "usage_of"]

_REQUESTED = {"ModelCallRequested": "model", "ToolCallRequested": "tool"}
_CLOSED = {"ModelCallCompleted": "model", "ToolCallCompleted": "tool", "Reconciled": "tool"}


def _tokens(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def call_counts(events: Iterable[Envelope]) -> tuple[int, int, int]:
    """``(model calls requested, input tokens, output tokens)`` of these events."""
    steps = tokens_in = tokens_out = 0
    for envelope in events:
        if envelope.kind == "ModelCallRequested":
            steps += 1
        elif envelope.kind == "ModelCallCompleted":
            usage = envelope.payload.get("usage")
            if isinstance(usage, dict):
                tokens_in += _tokens(usage.get("input_tokens"))
                tokens_out += _tokens(usage.get("output_tokens"))
    return steps, tokens_in, tokens_out


def usage_of(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens}


def _call_key(kind: str, payload: dict[str, Any]) -> tuple[Any, ...]:
    return (kind, str(payload.get("node")), scope_key(payload.get("scope")), payload.get("call"))


def pending_call(events: Iterable[Envelope]) -> dict[str, Any] | None:
    """The oldest call requested and not completed: ``{"kind": "model", "seq", "node",
    "model"}`` or ``{"kind": "tool", "seq", "node", "tool", "input", "effect",
    "idempotency_key"}`` (plus ``scope`` inside a map item or fold pass). ``None`` when no
    call is open, and always once the run has ended."""
    open_calls: dict[tuple[Any, ...], dict[str, Any]] = {}
    for envelope in events:
        kind, payload = envelope.kind, envelope.payload
        if kind in ("RunCompleted", "RunFailed", "RunAbandoned"):
            return None
        if kind in _REQUESTED:
            call_kind = _REQUESTED[kind]
            entry: dict[str, Any] = {"kind": call_kind, "seq": envelope.seq}
            entry["node"] = payload.get("node")
            if payload.get("scope"):
                entry["scope"] = payload["scope"]
            if call_kind == "model":
                entry["model"] = payload.get("model")
            else:
                for name in ("tool", "input", "effect", "idempotency_key"):
                    entry[name] = payload.get(name)
            open_calls[_call_key(call_kind, payload)] = entry
        elif kind in _CLOSED:
            open_calls.pop(_call_key(_CLOSED[kind], payload), None)
    if not open_calls:
        return None
    return min(open_calls.values(), key=lambda entry: entry["seq"])
