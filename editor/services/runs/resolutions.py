"""Resolving and abandoning runs (spec 04 *Suspension and resume*, spec 05 *Runs*).

What this module writes, it writes through the store's unleased append
(``OrmRunStore.record``), which is guarded by the run's event count: of two writers of the same
position in a log exactly one wins, so a suspension is resolved exactly once and an abandon
never interleaves with a worker's step. A resolved run is handed back to a worker.

The request bodies are the reference's: ``{"input", "comment"?}`` for a gate; for a budget the
reference's ``{"extend": {"steps" | "tokens" | "cost_usd" | "wall_time_seconds": n}}`` (as the
input, or beside it; ``n`` is the new limit) or our
``{"limit": n}``; for a reconciliation ``{"output": …}`` or ``{"retry": true}``, or
:func:`resolve`. Who may do what is spec 06's table: *approvers* resolve gates, *operators*
raise budgets, reconcile writes, recover and abandon runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from editor.drives import enqueue_run
from editor.engine import errors as engine_errors
from editor.engine import (
    prepare_abandon,
    prepare_decision,
    prepare_resume,
    prepare_wake,
    run_status,
)
from editor.engine.errors import InvalidResumeInput, NotParked, RunLost, TransitionRefused
from editor.engine.ports import Envelope
from editor.engine.states import PARKED, RunState
from editor.engine.status import VOTE_KINDS, instant, scope_key
from editor.models import Run
from editor.presentation.approval_forms import decision_key
from editor.services.access import ActingUser, can_operate, can_resolve, can_resolve_any
from editor.services.errors import (
    AlreadyFinished,
    AlreadyVoted,
    InvalidRequest,
    InvalidResume,
    NotAllowed,
    NotSuspended,
    RunBusy,
    StillSleeping,
    WrongState,
)
from editor.services.runs import approvals
from editor.services.runs.rows import public_status, record, run_row, store
from editor.services.storable import check_storable

__all__ = [
    "AbandonOutcome",
    "ResolveOutcome",
    "ResumeOutcome",
    "abandon",
    "resolve",
    "resume",
    "resume_run",
]

#: How often an abandon retries when a worker appended between its read and its write. A
#: worker appends once per engine step, so losing this many times in a row means the run is
#: appending far faster than any real step; the caller is told to try again.
_ABANDON_ATTEMPTS = 10
#: How often a decision is prepared again when another writer took its position first. A gate
#: takes at most five votes, so a decision that keeps losing is losing to a run that appends
#: far faster than people decide; the caller is told to try again.
_DECIDE_ATTEMPTS = 10

_PARKED = frozenset(state.value for state in PARKED)
_DRIVABLE = frozenset({RunState.QUEUED.value, RunState.RUNNING.value})
#: What the reference's ``extend`` may name, and the budget kind each raises (its
#: ``wall_time_seconds``, and ``wall_time`` as the kind is named in ``BudgetExceeded``).
_EXTENDABLE = {
    "steps": "steps",
    "tokens": "tokens",
    "cost_usd": "cost_usd",
    "wall_time_seconds": "wall_time",
    "wall_time": "wall_time",
}


@dataclass(frozen=True, slots=True)
class ResumeOutcome:
    """``POST /v1/runs/{id}/resume``'s answer: the resolution is recorded, a worker drives on."""

    run: str
    status: str = RunState.RUNNING.value
    outcome: str = "driving"


@dataclass(frozen=True, slots=True)
class AbandonOutcome:
    """``POST /v1/runs/{id}/abandon``'s receipt: where ``RunAbandoned`` landed."""

    run: str
    status: dict[str, Any]
    appended_seq: int
    abandoned: bool = True


@dataclass(frozen=True, slots=True)
class ResolveOutcome:
    """``POST /v1/runs/{id}/resolve``'s answer: the write's output is recorded."""

    run: str
    status: dict[str, Any]
    resolved: bool = True


def _actor(user: ActingUser) -> str:
    return str(user.get_username())


def _pending_item(status: dict[str, Any], body: dict[str, Any]) -> dict[str, Any] | None:
    """The pending item a resume resolves: the one ``body`` names (``node``, ``scope``), or
    the oldest (as the engine picks it)."""
    pending = status.get("pending") or []
    if body.get("node") is None:
        return pending[0] if pending else None
    scope = scope_key(body.get("scope"))
    for item in pending:
        if item.get("node") == body["node"] and scope_key(item.get("scope")) == scope:
            return item
    return None


def _check_resolver(user: ActingUser, item: dict[str, Any] | None) -> None:
    # Nothing to resolve: the engine says so (409), unless the caller may resolve nothing.
    # A signal wait (spec 08) is an operator's to answer, never an approver's task.
    kind = "signal" if item is not None and item.get("wait") == "signal" else None
    kind = kind or (str(item.get("kind")) if item is not None else None)
    allowed = can_resolve_any(user) if kind is None else can_resolve(user, kind)
    if not allowed:
        raise NotAllowed()


def _test_gate(run: Run, item: dict[str, Any] | None) -> bool:
    return run.test_revision is not None and item is not None and item.get("kind") == "gate"


def _check_test_resolver(user: ActingUser, run: Run) -> None:
    """A gate of a test run is decided by the author who started it, on the editor or the
    run page, and by no one else: test runs never reach the approvers' inbox."""
    if run.created_by_id is None or run.created_by_id != getattr(user, "pk", None):
        raise NotAllowed()


def _budget_input(item: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The reference's ``{"extend": {kind: n}}`` (the input, or beside it) as ``{"limit": n}``
    for the budget the run exceeded; any other input unchanged."""
    value = body.get("input")
    extend = body.get("extend")
    if extend is None and isinstance(value, dict) and set(value) == {"extend"}:
        extend = value["extend"]
    if extend is None:
        return body
    kind = str((item.get("budget") or {}).get("kind"))
    if not isinstance(extend, dict) or len(extend) != 1:
        message = f'give {{"extend": {{"{kind}": <the new limit>}}}}'
        raise InvalidResume([{"path": "$.extend", "message": message}], item["node"], "budget")
    ((named, limit),) = extend.items()
    if _EXTENDABLE.get(named) != kind:
        known = ", ".join(f"`{name}`" for name in _EXTENDABLE)
        message = (
            f"the run exceeded its `{kind}` budget, so `extend` must name `{kind}`, not `{named}`"
            if named in _EXTENDABLE
            else f"`{named}` is not a budget here: `extend` takes {known}"
        )
        raise InvalidResume(
            [{"path": f"$.extend.{named}", "message": message}], item["node"], "budget"
        )
    return {**body, "input": {"limit": limit}}


def resume(user: ActingUser, run_id: str, body: dict[str, Any]) -> ResumeOutcome:
    """Resolve a parked run (``body``: ``{"input", "comment"?}``) and hand it back to a worker;
    without an ``input``, hand a run that is queued or running to a worker again (the
    reference's recovery of a crashed run: the lease keeps it from being driven twice).

    The input is checked before anything is recorded. Exactly once: the resolution is appended
    at the log's next position, so when two people resolve the same suspension together the
    database lets one in and the other learns who resolved it and when (:class:`NotSuspended`).
    """
    outcome, _ = resume_run(user, run_row(run_id), body)
    return outcome


def resume_run(
    user: ActingUser, run: Run, body: dict[str, Any], *, allowed: bool = False
) -> tuple[ResumeOutcome, tuple[Envelope, ...]]:
    """:func:`resume` of a run its caller has read, with the events it recorded (none when it
    only handed a run back to a worker). ``allowed``: the caller has checked that ``user`` holds
    the role a budget or a reconciliation needs (an inbox card does, before it reads the form).

    A gate is checked against the approval policy the run recorded, whatever the caller:
    :func:`editor.services.runs.approvals.check_gate` (``not_an_approver``, ``four_eyes``,
    ``already_voted``), before anything is recorded. Under a quorum, an approval that does not
    complete it is recorded as a vote (``ApprovalVoted``) and the run stays parked; the last one
    resolves the gate. An append that loses its position to another writer (a vote, another
    item's resolution) is prepared again on the longer log, a bounded number of times: a
    resolution of the same item makes it :class:`NotSuspended`."""
    check_storable(body)
    has_input = "input" in body or "extend" in body
    for _attempt in range(_DECIDE_ATTEMPTS):
        current = record(run)
        status = run_status(current.events)
        if not has_input and status["state"] in _DRIVABLE:
            return _recover(user, current.run_id), ()
        if status["state"] == RunState.SLEEPING.value:
            return _wake_if_due(user, current.run_id, status), ()
        item = _pending_item(status, body)
        if item is not None and body.get("node") is None:
            # The oldest item, as first read: a later attempt answers that one or says who
            # did, never the next item, which this caller has not seen.
            body = {**body, "node": item["node"], "scope": item.get("scope")}
        quorum, decision = 1, None
        if _test_gate(run, item):
            _check_test_resolver(user, run)
        elif _open_gate(item):
            assert item is not None
            policy = approvals.check_gate(user, run.approval_policy, run.created_by_id, item)
            quorum, decision = policy.quorum, decision_key(item.get("input_schema"))
        elif not allowed:
            _check_resolver(user, item)
        if item is not None and not has_input:
            raise InvalidRequest(
                f"the run waits at `{item['node']}`: the resume body needs an `input`", "input"
            )
        answer = (
            _budget_input(item, body) if item is not None and item["kind"] == "budget" else body
        )
        try:
            events, after = prepare_decision(
                current, answer, _actor(user), timezone.now(), quorum=quorum, decision_key=decision
            )
        except engine_errors.AlreadyVoted as error:
            votes = len((item or {}).get("votes") or ())
            raise AlreadyVoted(str((item or {}).get("node")), error.at, votes, quorum) from None
        except NotParked as error:
            raise NotSuspended(error.state, error.resolved_by, error.resolved_at) from None
        except InvalidResumeInput as error:
            node = item["node"] if item is not None else None
            kind = item["kind"] if item is not None else "gate"
            raise InvalidResume(error.violations, node, kind) from None
        try:
            with transaction.atomic():
                store().record(current.run_id, events, after)
                if any(envelope.kind not in VOTE_KINDS for envelope in events):
                    enqueue_run(current.run_id)
        except (RunLost, TransitionRefused):
            # Someone appended first: another resolution of the same item (the next attempt
            # says who), or a vote or another item's resolution (the next attempt counts it).
            continue
        if all(envelope.kind in VOTE_KINDS for envelope in events):
            return ResumeOutcome(current.run_id, str(after["state"]), "voted"), tuple(events)
        return ResumeOutcome(current.run_id), tuple(events)
    raise RunBusy()


def _open_gate(item: dict[str, Any] | None) -> bool:
    """A gate a person decides (not a signal wait, which a system owes)."""
    return item is not None and item.get("kind") == "gate" and item.get("wait") != "signal"


def _wake_if_due(user: ActingUser, run_id: str, status: dict[str, Any]) -> ResumeOutcome:
    """A resume of a sleeping run (operators; its body is not read): before its ``wake_at``,
    ``409 still_sleeping`` and nothing recorded; at or after it, the drive the waker starts."""
    if not can_operate(user):
        raise NotAllowed()
    wake_at = instant(status.get("wake_at"))
    remaining = (wake_at - timezone.now()).total_seconds() if wake_at is not None else 0.0
    if remaining > 0:
        raise StillSleeping(str(status.get("wake_at")), max(1, math.ceil(remaining)))
    return _recover(user, run_id)


def wake(user: ActingUser, run_id: str, comment: str | None = None) -> ResumeOutcome:
    """**Wake now**: end a sleeping run's wait before its ``wake_at`` (operators), recorded
    with who, and hand the run to a worker. A run that is not sleeping, or that its waker
    woke first, is ``409 wrong_state``."""
    if not can_operate(user):
        raise NotAllowed()
    check_storable({"comment": comment})
    current = record(run_row(run_id))
    try:
        events, status = prepare_wake(current, _actor(user), comment or None, timezone.now())
    except TransitionRefused as error:
        raise WrongState(
            error.current, f"the run is not sleeping (it is `{error.current}`)"
        ) from None
    try:
        with transaction.atomic():
            store().record(current.run_id, events, status)
            enqueue_run(current.run_id)
    except (RunLost, TransitionRefused):
        state = run_row(run_id).state
        raise WrongState(state, f"the run is not sleeping (it is `{state}`)") from None
    return ResumeOutcome(current.run_id)


def _recover(user: ActingUser, run_id: str) -> ResumeOutcome:
    if not can_operate(user):
        raise NotAllowed()
    with transaction.atomic():
        enqueue_run(run_id)
    return ResumeOutcome(run_id)


def resolve(user: ActingUser, run_id: str, output: Any) -> ResolveOutcome:
    """Record what a write that was cut off did (``POST /v1/runs/{id}/resolve``): the oldest
    dangling write of the run takes ``output`` as its result, and a worker drives on.

    A run with no dangling write is :class:`WrongState`, and nothing is recorded."""
    if not can_operate(user):
        raise NotAllowed()
    check_storable({"output": output})
    run = run_row(run_id)
    current = record(run)
    status = run_status(current.events)
    item = next(
        (entry for entry in status.get("pending") or [] if entry["kind"] == "reconciliation"),
        None,
    )
    if item is None:
        raise WrongState(
            status["state"],
            f"the run has no write to resolve (it is `{status['state']}`)",
        )
    body: dict[str, Any] = {"input": {"output": output}, "node": item["node"]}
    if item.get("scope"):
        body["scope"] = item["scope"]
    try:
        events, after = prepare_resume(current, body, _actor(user), timezone.now())
    except (NotParked, InvalidResumeInput):  # pragma: no cover - the item was just read
        raise WrongState(status["state"]) from None
    try:
        with transaction.atomic():
            store().record(current.run_id, events, after)
            enqueue_run(current.run_id)
    except (RunLost, TransitionRefused):
        state = run_status(record(run).events)["state"]
        raise WrongState(state, "the write was resolved, or the run changed, meanwhile") from None
    return ResolveOutcome(current.run_id, public_status(after))


def abandon(user: ActingUser, run_id: str, reason: str | None = None) -> AbandonOutcome:
    """Abandon a run that has not finished; a worker driving it stops before its next append.

    When a worker appends between this read and this write, the abandon is prepared again on
    the longer log (a bounded number of times)."""
    if not can_operate(user):
        raise NotAllowed()
    check_storable({"reason": reason})
    run = run_row(run_id)
    for _attempt in range(_ABANDON_ATTEMPTS):
        current = record(run)
        try:
            events, status = prepare_abandon(current, reason or None, _actor(user), timezone.now())
        except TransitionRefused as error:
            raise AlreadyFinished(error.current) from None
        try:
            store().record(current.run_id, events, status)
        except RunLost:
            continue
        except TransitionRefused as error:  # the run finished meanwhile
            raise AlreadyFinished(error.current) from None
        return AbandonOutcome(current.run_id, public_status(status), events[0].seq)
    raise RunBusy()
