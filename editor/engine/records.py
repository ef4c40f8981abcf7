"""Building envelopes outside a drive: a run's first event, resolutions and abandonment.

These are what the services append for a person (start, resume, abandon); the worker's
engine appends everything else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from editor.engine.errors import AlreadyVoted, InvalidResumeInput, NotParked, TransitionRefused
from editor.engine.ports import Envelope, RunRecord
from editor.engine.schemas import violations
from editor.engine.states import TERMINAL, RunState, check_transition
from editor.engine.status import PARKING_KINDS, last_resolution, run_status, scope_key
from editor.graph import hash_value

__all__ = [
    "DEADLINE",
    "RESUME_CHECK_SECONDS",
    "park_again",
    "prepare_abandon",
    "prepare_decision",
    "prepare_escalation",
    "prepare_failure",
    "prepare_resume",
    "start_event",
    "timestamp",
]


#: The longest a resume input may take to check against its gate's approval schema. The check
#: runs in the web process, inside the request: a schema written to multiply its size by the
#: value's (thousands of ``allOf`` branches over a long array) would otherwise hold a thread
#: for hours. Ordinary checks take microseconds; past this, the input is refused, saying so.
RESUME_CHECK_SECONDS = 2.0
#: Who a gate's due time acts as (``by`` of its escalation, or of the resolution with the
#: policy's value): no username can hold a space, so no person is ever taken for it.
DEADLINE = "the deadline"


def timestamp(now: datetime) -> str:
    """RFC 3339, UTC, microseconds, ``Z`` (spec 04, *Events*)."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def start_event(
    run_id: str,
    graph_hash: str,
    input: Any,
    labels: dict[str, str] | None,
    now: datetime,
    approval_policy: dict[str, Any] | None = None,
) -> Envelope:
    """``GraphRunStarted``; ``approval_policy``: the policy in force, as
    :meth:`editor.engine.approvals.RunPolicy.as_record` writes it (absent: none applies)."""
    payload: dict[str, Any] = {"graph_hash": graph_hash, "input": input}
    if labels:
        payload["labels"] = dict(labels)
    if approval_policy is not None:
        payload["approval_policy"] = approval_policy
    return Envelope(run_id, 0, timestamp(now), "GraphRunStarted", payload)


def _pick_pending(status: dict[str, Any], body: dict[str, Any]) -> dict[str, Any] | None:
    pending: list[dict[str, Any]] = status.get("pending") or []
    node = body.get("node")
    if node is None:
        return pending[0] if pending else None
    scope = scope_key(body.get("scope"))
    for item in pending:
        if item["node"] == node and scope_key(item.get("scope")) == scope:
            return item
    return None


def prepare_resume(
    record: RunRecord,
    body: dict[str, Any],
    by: str,
    now: datetime,
    *,
    extra: dict[str, Any] | None = None,
) -> tuple[list[Envelope], dict[str, Any]]:
    """The events that resolve a parked run's pending item, and the status after them.

    ``body`` is the resume body of spec 05: ``{"input", "comment"?}``, and optionally
    ``"node"`` (with ``"scope"``) to pick one of several pending items (default: the oldest).
    For a gate the input must satisfy the recorded ``input_schema``; for a budget it is
    ``{"limit": n}`` above what was observed; for a reconciliation ``{"output": …}`` or
    ``{"retry": true}``. Nothing is appended here: the caller appends, and the store's
    ``(run, seq)`` guard makes the resolution happen once. ``extra``: fields a gate's
    ``Resumed`` also records (its earlier ``votes``, its ``quorum``).
    """
    events = record.events
    status = run_status(events)
    item = _pick_pending(status, body)
    if item is None:
        by_whom, at = last_resolution(events, body.get("node"))
        raise NotParked(status["state"], by_whom, at)
    if "input" not in body:
        raise InvalidResumeInput([{"path": "$", "message": "the resume body needs an `input`"}])
    value = body["input"]
    payload: dict[str, Any] = {"node": item["node"]}
    if item["kind"] == "gate":
        schema = item.get("input_schema")
        problems = violations(schema, value, seconds=RESUME_CHECK_SECONDS)
        if problems:
            raise InvalidResumeInput(problems)
        kind = "Resumed"
        payload.update(input=value, by=by)
        comment = body.get("comment")
        if isinstance(comment, str) and comment.strip():
            payload["comment"] = comment
        payload["schema_hash"] = hash_value(schema)
        payload.update(extra or {})
    elif item["kind"] == "budget":
        kind = "BudgetRaised"
        budget = item.get("budget") or {}
        observed = item.get("observed") or 0
        limit = value.get("limit") if isinstance(value, dict) else None
        # Steps and tokens are counts; cost (dollars) and wall time (seconds) are numbers.
        counted = budget.get("kind") in ("steps", "tokens")
        kinds = (int,) if counted else (int, float)
        if (
            isinstance(limit, bool)
            or not isinstance(limit, kinds)
            or not math.isfinite(limit)
            or limit <= observed
        ):
            what = "an integer" if counted else "a number"
            raise InvalidResumeInput(
                [
                    {
                        "path": "$.limit",
                        "message": f"the new limit must be {what} above what was "
                        f"observed ({observed})",
                    }
                ]
            )
        payload.update(kind=budget.get("kind"), limit=limit, by=by)
    else:
        kind = "Reconciled"
        if isinstance(value, dict) and value.get("retry") is True and set(value) == {"retry"}:
            payload.update(call=item.get("call"), by=by, retry=True)
        elif isinstance(value, dict) and set(value) == {"output"}:
            payload.update(call=item.get("call"), by=by, output=value["output"])
        else:
            raise InvalidResumeInput(
                [{"path": "$", "message": 'give either {"output": …} or {"retry": true}'}]
            )
    if item.get("scope"):
        payload["scope"] = item["scope"]
    envelope = Envelope(record.run_id, len(events), timestamp(now), kind, payload)
    resolved = [*events, envelope]
    again = park_again(resolved, run_status(resolved), now)
    if again is None:
        return [envelope], run_status(resolved)
    # The last item of its kind was resolved while items of another kind are open: the run
    # goes back to running and, in the same step, parks again at the oldest open item.
    return [envelope, again], run_status([*resolved, again])


def prepare_decision(
    record: RunRecord,
    body: dict[str, Any],
    by: str,
    now: datetime,
    *,
    quorum: int = 1,
    decision_key: str | None = None,
) -> tuple[list[Envelope], dict[str, Any]]:
    """A person's answer to a pending item, under a gate's ``quorum`` (1–5 distinct people
    must approve): the events to append and the status after them.

    For a gate, ``by`` may answer once: a second answer while the gate is open is refused
    (:class:`AlreadyVoted`) before the input is checked. The input is checked against the
    recorded schema, then:

    * it **rejects** when ``decision_key`` (the schema's approve/reject boolean, as the card
      draws it) is ``false``: the gate is resolved at once with this answer;
    * else it is one **approval**: the last one the quorum needs resolves the gate with this
      answer (``Resumed``, with the earlier ``votes`` and the ``quorum``); an earlier one is
      recorded as ``ApprovalVoted`` and the run stays parked.

    Any other item (or a gate of quorum 1 without earlier votes) is :func:`prepare_resume`."""
    status = run_status(record.events)
    item = _pick_pending(status, body)
    if item is None or item["kind"] != "gate":
        return prepare_resume(record, body, by, now)
    votes: list[dict[str, Any]] = list(item.get("votes") or [])
    for vote in votes:
        if vote.get("by") == by:
            raise AlreadyVoted(by, vote.get("at"))
    value = body.get("input")
    rejects = (
        decision_key is not None and isinstance(value, dict) and value.get(decision_key) is False
    )
    if rejects or len(votes) + 1 >= quorum:
        extra: dict[str, Any] = {}
        if votes:
            extra["votes"] = votes
        if quorum > 1:
            extra["quorum"] = quorum
        return prepare_resume(record, body, by, now, extra=extra)  # checks the input
    if "input" not in body:
        raise InvalidResumeInput([{"path": "$", "message": "the resume body needs an `input`"}])
    schema = item.get("input_schema")
    problems = violations(schema, value, seconds=RESUME_CHECK_SECONDS)
    if problems:
        raise InvalidResumeInput(problems)
    payload: dict[str, Any] = {"node": item["node"], "input": value, "by": by}
    comment = body.get("comment")
    if isinstance(comment, str) and comment.strip():
        payload["comment"] = comment
    payload["schema_hash"] = hash_value(schema)
    payload["approvals"] = len(votes) + 1
    payload["quorum"] = quorum
    if item.get("scope"):
        payload["scope"] = item["scope"]
    envelope = Envelope(record.run_id, len(record.events), timestamp(now), "ApprovalVoted", payload)
    return [envelope], run_status([*record.events, envelope])


def prepare_escalation(
    record: RunRecord,
    body: dict[str, Any],
    to: dict[str, list[str]],
    due_at: str,
    now: datetime,
) -> tuple[list[Envelope], dict[str, Any]]:
    """``GateEscalated{node, scope?, to, by: "the deadline", due_at}``: the open gate ``body``
    names (``node``, ``scope``) is past its due time and its policy names ``to`` (``{"groups",
    "users"}``) who may now decide it too; and the status after it. The run stays parked.
    A gate no longer open is :class:`NotParked`; one escalated already is
    :class:`TransitionRefused` (an escalation happens once)."""
    status = run_status(record.events)
    item = _pick_pending(status, body)
    if item is None or item["kind"] != "gate":
        by_whom, at = last_resolution(record.events, body.get("node"))
        raise NotParked(status["state"], by_whom, at)
    if item.get("escalated"):
        raise TransitionRefused(status["state"], status["state"], "the gate is escalated already")
    payload: dict[str, Any] = {"node": item["node"], "to": to, "by": DEADLINE, "due_at": due_at}
    if item.get("scope"):
        payload["scope"] = item["scope"]
    envelope = Envelope(record.run_id, len(record.events), timestamp(now), "GateEscalated", payload)
    return [envelope], run_status([*record.events, envelope])


def park_again(
    events: Sequence[Envelope], status: dict[str, Any], now: datetime
) -> Envelope | None:
    """The event that parks a run again when its status is ``running`` with items still open
    (a resolution left only items of another kind open): a copy of the oldest open item's
    own parking event, appended after ``events``. ``None`` when the run needs none."""
    pending: list[dict[str, Any]] = status.get("pending") or []
    if status.get("state") != RunState.RUNNING.value or not pending:
        return None
    seq = int(pending[0]["seq"])
    original = events[seq] if 0 <= seq < len(events) else None
    if original is None or original.seq != seq or original.kind not in PARKING_KINDS:
        return None  # pragma: no cover - the status is always the fold of this log
    return Envelope(
        original.run_id, len(events), timestamp(now), original.kind, dict(original.payload)
    )


def prepare_abandon(
    record: RunRecord, reason: str | None, by: str, now: datetime
) -> tuple[list[Envelope], dict[str, Any]]:
    """The ``RunAbandoned`` event for a run that has not finished, and the status after it."""
    status = run_status(record.events)
    state = RunState(status["state"])
    if state in TERMINAL:
        raise TransitionRefused(state.value, RunState.ABANDONED.value)
    check_transition(state, RunState.ABANDONED)
    payload: dict[str, Any] = {"by": by}
    if reason:
        payload["reason"] = reason
    envelope = Envelope(record.run_id, len(record.events), timestamp(now), "RunAbandoned", payload)
    return [envelope], run_status([*record.events, envelope])


def prepare_wake(
    record: RunRecord, by: str, comment: str | None, now: datetime
) -> tuple[list[Envelope], dict[str, Any]]:
    """An operator's **Wake now** of a sleeping run: ``SleepCompleted{node, by, comment?}``
    (spec 08; ``by`` and ``comment`` are ours), and the status after it. The drive that
    follows finds the wait over and walks on."""
    status = run_status(record.events)
    if status["state"] != RunState.SLEEPING.value:
        raise TransitionRefused(status["state"], RunState.RUNNING.value, "it is not sleeping")
    payload: dict[str, Any] = {"node": status.get("node"), "by": by}
    if comment:
        payload["comment"] = comment
    envelope = Envelope(
        record.run_id, len(record.events), timestamp(now), "SleepCompleted", payload
    )
    return [envelope], run_status([*record.events, envelope])


def prepare_failure(
    record: RunRecord, error: str, code: str, now: datetime
) -> tuple[list[Envelope], dict[str, Any]]:
    """The ``RunFailed`` event a worker records for a run whose drive could not end it (a
    crash, drives cut off too often, a drive past its wall time), and the status after it.
    Only a run that waits for a driver (queued or running) is failed this way."""
    state = RunState(run_status(record.events)["state"])
    if state not in (RunState.QUEUED, RunState.RUNNING):
        raise TransitionRefused(state.value, RunState.FAILED.value, "it is not being driven")
    envelope = Envelope(
        record.run_id,
        len(record.events),
        timestamp(now),
        "RunFailed",
        {"error": error, "code": code},
    )
    return [envelope], run_status([*record.events, envelope])
