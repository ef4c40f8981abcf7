"""The error family of the application layer.

Services raise these; the edges render them (the API maps each class to a status code
and an error code once, in ``editor.api.errors``; the command line prints the message).
Each class carries the data its rendering needs, never an HTTP status.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from editor.graph import ErrorData

__all__ = [
    "AlreadyFinished",
    "AlreadyVoted",
    "Claimed",
    "DraftInvalid",
    "ForkHazard",
    "FourEyes",
    "InputTooLarge",
    "InvalidAgent",
    "InvalidCursor",
    "InvalidForkNode",
    "InvalidGraph",
    "InvalidPin",
    "InvalidPolicy",
    "InvalidRequest",
    "InvalidResume",
    "MixedCards",
    "NoFreeSlug",
    "NotAllowed",
    "NotAnApprover",
    "NotClaimed",
    "NotComparable",
    "NotOffered",
    "NotPinned",
    "NotRunnable",
    "NotSuspended",
    "OriginNeedsReconciliation",
    "OverLimit",
    "PreconditionRequired",
    "QuotaExceeded",
    "RateLimited",
    "RunBusy",
    "ServiceError",
    "SlugTaken",
    "StaleDraft",
    "StillSleeping",
    "UnknownAgent",
    "UnknownDocument",
    "UnknownGraph",
    "UnknownRun",
    "UnsupportedMediaType",
    "WritesUnconfirmed",
    "WrongState",
    "mapped",
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


class NotAnApprover(NotAllowed):
    """A gate's approval policy does not let this person decide it (``not_an_approver``):
    its deciders do not name them, or they lack the approvers role the deciders need too
    (``needs_role``). Names who may."""

    def __init__(
        self,
        node: str,
        groups: tuple[str, ...],
        users: tuple[str, ...],
        *,
        needs_role: bool = False,
    ) -> None:
        named = [f"the group{'s' if len(groups) > 1 else ''} {', '.join(groups)}"] if groups else []
        if users:
            named.append(f"{'the users' if len(users) > 1 else 'the user'} {', '.join(users)}")
        message = f"you may not decide the gate `{node}`: "
        if needs_role:
            message += "deciding a gate needs the approvers role, which you do not hold"
        else:
            message += "its approval policy leaves it to " + " and ".join(named)
        super().__init__(message)
        self.node = node
        self.groups = groups
        self.users = users
        self.needs_role = needs_role

    def details(self) -> dict[str, Any]:
        return {"node": self.node, "groups": list(self.groups), "users": list(self.users)}


class FourEyes(NotAllowed):
    """Four eyes: the run's starter, or an author of the version it runs, may not decide its
    gate (``four_eyes``). ``reason``: ``started`` or ``authored``."""

    def __init__(self, node: str, reason: str) -> None:
        who = "you started this run" if reason == "started" else "you wrote the version it runs"
        super().__init__(f"four eyes: {who}, so another approver decides the gate `{node}`")
        self.node = node
        self.reason = reason

    def details(self) -> dict[str, Any]:
        return {"node": self.node, "reason": self.reason}


class AlreadyVoted(ServiceError):
    """A second answer from one person to a gate that needs several approvals
    (``already_voted``); nothing was recorded."""

    def __init__(self, node: str, at: str | None, approvals: int, quorum: int) -> None:
        super().__init__(
            f"you already approved the gate `{node}` at {at}: it needs {quorum} different "
            f"people and has {approvals}"
        )
        self.node = node
        self.at = at
        self.approvals = approvals
        self.quorum = quorum

    def details(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "voted_at": self.at,
            "approvals": self.approvals,
            "quorum": self.quorum,
        }


class Claimed(ServiceError):
    """A card someone else is on (``claimed``): their claim holds until ``until``. Deciding
    the card stays open to others; only taking the claim is refused."""

    def __init__(self, node: str, by: str, until: str) -> None:
        super().__init__(f"{by} is on the card of `{node}` until {until}")
        self.node = node
        self.by = by
        self.until = until

    def details(self) -> dict[str, Any]:
        return {"node": self.node, "claimed_by": self.by, "until": self.until}


class NotClaimed(ServiceError):
    """A release of a card whose claim this person does not hold (``not_claimed``)."""

    def __init__(self, node: str) -> None:
        super().__init__(f"you are not on the card of `{node}`, so there is no claim to release")
        self.node = node

    def details(self) -> dict[str, Any]:
        return {"node": self.node}


class InvalidRequest(ServiceError):
    """A value the caller sent is not acceptable (a slug, a title, a revision)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def details(self) -> dict[str, Any] | None:
        return {"field": self.field} if self.field else None


class InvalidPolicy(InvalidRequest):
    """An approval policy that cannot be saved: every problem, each naming its gate and
    field (``invalid_policy``); nothing was saved."""

    def __init__(self, problems: list[dict[str, str]]) -> None:
        first = problems[0] if problems else {"gate": "", "message": "is not a policy"}
        where = f"`{first['gate']}`" + (f", `{first['field']}`" if first.get("field") else "")
        super().__init__(f"gate {where}: {first['message']}", first.get("field"))
        self.problems = problems
        self.gate = first["gate"]

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"gate": self.gate}
        if self.field:
            details["field"] = self.field
        details["errors"] = self.problems
        return details


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


class MixedCards(InvalidRequest):
    """Cards decided together that are not of one gate and one approval schema
    (``mixed_cards``): the one form cannot fit them all; nothing was recorded."""

    def __init__(self, message: str, cards: list[dict[str, Any]]) -> None:
        super().__init__(message, "items")
        self.cards = cards

    def details(self) -> dict[str, Any]:
        return {"field": "items", "cards": self.cards}


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

    def __init__(self, errors: list[ErrorData], *, malformed: bool) -> None:
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


class NoFreeSlug(InvalidRequest):
    """Every slug a new document's title gives (``slug``, ``slug-2`` … ``slug-99``) is taken."""

    def __init__(self) -> None:
        super().__init__("too many documents have this title; choose another", "title")


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

    def __init__(self, errors: list[ErrorData]) -> None:
        first = errors[0]["message"] if errors else "the graph cannot run here"
        super().__init__(f"the graph cannot run here: {first}")
        self.errors = errors

    @property
    def code(self) -> str:
        return str(self.errors[0]["code"]) if self.errors else "not_runnable"

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors}


class StillSleeping(ServiceError):
    """A resume of a run that sleeps at a delay before its ``wake_at`` (spec 08): nothing is
    recorded. ``remaining_seconds`` is rounded up, so at least 1."""

    def __init__(self, wake_at: str, remaining_seconds: int) -> None:
        super().__init__(f"the run sleeps until {wake_at}; {remaining_seconds} s remain")
        self.wake_at = wake_at
        self.remaining_seconds = remaining_seconds

    def details(self) -> dict[str, Any]:
        return {"wake_at": self.wake_at, "remaining_seconds": self.remaining_seconds}


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


class WrongState(ServiceError):
    """A change that does not apply to a run in its state (the reference's ``wrong_state``):
    resolving a run with no dangling write, abandoning one that has ended."""

    reason: str | None = None

    def __init__(self, state: str, message: str | None = None) -> None:
        super().__init__(message or f"this does not apply to a run that is `{state}`")
        self.state = state

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"state": self.state}
        if self.reason is not None:
            details["reason"] = self.reason
        return details


class AlreadyFinished(WrongState):
    """An abandon (or another change) of a run that has already ended."""

    reason = "already_finished"

    def __init__(self, state: str) -> None:
        super().__init__(state, f"the run has already finished (it is `{state}`)")


class RunBusy(ServiceError):
    """A change that kept losing the race against the worker driving the run."""

    message = "the run kept changing while this request tried to change it; try again"


class InvalidResume(ServiceError):
    """A resume input that breaks the recorded schema (a gate's approval: the reference's
    ``approval_schema_violation``) or the shape a budget or a reconciliation takes
    (``bad_request``); nothing was recorded."""

    def __init__(
        self, violations: list[dict[str, Any]], node: str | None = None, kind: str = "gate"
    ) -> None:
        super().__init__(f"the resume input has {len(violations)} violation(s)")
        self.violations = violations
        self.node = node
        self.kind = kind

    @property
    def code(self) -> str:
        return "approval_schema_violation" if self.kind == "gate" else "bad_request"

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        if self.node is not None:
            details["node"] = self.node
        details["violations"] = self.violations
        return details


class UnsupportedMediaType(ServiceError):
    """A request body in a format the operation does not read."""

    def __init__(self, given: str, accepted: tuple[str, ...]) -> None:
        names = " or ".join(f"`{name}`" for name in accepted)
        shown = f"`{given}`" if given else "none"
        super().__init__(f"this takes a body of Content-Type {names}, not {shown}")
        self.given = given
        self.accepted = accepted

    def details(self) -> dict[str, Any]:
        return {"content_type": self.given, "accepted": list(self.accepted)}


class NotOffered(ServiceError):
    """A part of the reference's API that Gatehouse does not offer (spec README, deviations)."""

    def __init__(self, what: str, instead: str) -> None:
        super().__init__(f"{what} are not offered by this server; {instead}")


class InvalidForkNode(ServiceError):
    """A fork from a node that is no boundary the origin reached (``invalid_fork_node``)."""

    def __init__(self, node: str, message: str) -> None:
        super().__init__(message)
        self.node = node

    def details(self) -> dict[str, Any]:
        return {"node": self.node}


class OriginNeedsReconciliation(ServiceError):
    """A fork of a run that waits for a cut-off write to be settled; ``intent`` is the write."""

    def __init__(self, message: str, intent: dict[str, Any] | None) -> None:
        super().__init__(message)
        self.intent = intent

    def details(self) -> dict[str, Any] | None:
        return {"intent": self.intent} if self.intent is not None else None


class ForkHazard(ServiceError):
    """A fork that would run recorded writes again without their acknowledgement
    (``write_replay_hazard``); ``writes`` are exactly the unacknowledged ones."""

    def __init__(self, message: str, writes: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.writes = writes

    def details(self) -> dict[str, Any]:
        return {"writes": self.writes}


class OverLimit(ServiceError):
    """A quota or a rate was reached: which (``limit_name`` and its ``setting``), its value, how
    much is used, and when it resets (``resets_at``; ``None`` for a quota of things kept, which
    frees up only as they are deleted)."""

    def __init__(
        self,
        message: str,
        *,
        limit_name: str,
        setting: str,
        limit: int,
        used: int,
        resets_at: datetime | None = None,
    ) -> None:
        super().__init__(message)
        self.limit_name = limit_name
        self.setting = setting
        self.limit = limit
        self.used = used
        self.resets_at = resets_at

    def details(self) -> dict[str, Any]:
        return {
            "limit_name": self.limit_name,
            "setting": self.setting,
            "limit": self.limit,
            "used": self.used,
            "resets_at": _utc_text(self.resets_at),
        }

    def retry_after(self, now: datetime) -> int | None:
        """Whole seconds until the limit resets (at least 1), or ``None`` when it never does."""
        if self.resets_at is None:
            return None
        return max(1, math.ceil((self.resets_at - now).total_seconds()))


class QuotaExceeded(OverLimit):
    """What a user keeps (stored bytes, documents, aliases, tokens) would pass their quota."""


class RateLimited(OverLimit):
    """Too many actions in the current window (runs started an hour, writes a minute)."""


def _utc_text(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


class DraftInvalid(ServiceError):
    """A test run of a draft that does not validate (``draft_invalid``): every error, as
    validation reports them (held fields too)."""

    def __init__(self, errors: list[ErrorData], revision: int) -> None:
        first = errors[0].get("message") if errors else "it does not parse"
        super().__init__(
            f"the draft (revision {revision}) has {len(errors)} error(s) and cannot be tested: "
            f"{first}"
        )
        self.errors = errors
        self.revision = revision

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors, "revision": self.revision}


class WritesUnconfirmed(ServiceError):
    """A test run whose draft would call ``write`` tools the author has not confirmed
    (``writes_unconfirmed``); ``tools`` are the unconfirmed ones, with the nodes calling them."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        names = ", ".join(f"`{entry['tool']}`" for entry in tools)
        super().__init__(
            f"this test run would call write tools for real: {names}; confirm them "
            "(`confirm_writes`) or pin the nodes that call them"
        )
        self.tools = tools

    def details(self) -> dict[str, Any]:
        return {"tools": self.tools}


class InvalidPin(ServiceError):
    """A pinned output that its node cannot take (``invalid_pin``): it breaks the node's
    output schema, or the node is not one a test run can stand a pin in for."""

    def __init__(self, node: str, message: str) -> None:
        super().__init__(f"the pin of `{node}`: {message}")
        self.node = node

    def details(self) -> dict[str, Any]:
        return {"node": self.node}


class NotPinned(ServiceError):
    """A node of the document with no pinned output (``not_pinned``)."""

    def __init__(self, node: str) -> None:
        super().__init__(f"`{node}` is not pinned")
        self.node = node

    def details(self) -> dict[str, Any]:
        return {"node": self.node}


class NotComparable(ServiceError):
    """Two runs that cannot be compared: they are not of the same document."""


def mapped[T](table: Mapping[type[ServiceError], T], error: BaseException) -> T | None:
    """What an edge's ``table`` says for ``error``: the entry of its most specific class that
    the table names, or ``None`` (``editor.api.errors`` for ``/v1``, ``editor.views.errors``
    for pages)."""
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]
    return None
