"""The request and response schemas of ``/v1`` (``ThingIn`` / ``ThingOut``).

Graph documents and agent definitions are not described here: those bodies are read
as raw bytes by our strict parsers, not by pydantic. Free JSON (a graph's wire form,
validation error objects, diff field changes) is typed as plain objects so that
nothing in it is dropped or rewritten.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, get_type_hints

from ninja import Field, Schema
from pydantic import (
    SerializerFunctionWrapHandler,
    create_model,
    field_validator,
    model_serializer,
)

from editor.services.documents import history

__all__ = [
    "AbandonIn",
    "AbandonOut",
    "AgentCreatedOut",
    "AgentListOut",
    "AgentOut",
    "ApprovalPolicyIn",
    "ApprovalPolicyOut",
    "DiffOut",
    "DocumentDetailOut",
    "DocumentIn",
    "DocumentListOut",
    "DocumentOut",
    "DraftIn",
    "DraftOut",
    "ErrorOut",
    "EventListOut",
    "FreezeIn",
    "FreezeOut",
    "GraphCreatedOut",
    "GraphListOut",
    "GraphOut",
    "GraphSummaryOut",
    "InboxItemOut",
    "InboxListOut",
    "InboxResolvedOut",
    "ReplayOut",
    "ResolveIn",
    "ResolveOut",
    "ResolvedItemOut",
    "ResumeIn",
    "ResumeOut",
    "RunCreatedOut",
    "RunGraphOut",
    "RunIn",
    "RunListOut",
    "RunOut",
    "ToolListOut",
    "ValidationOut",
    "VersionListOut",
    "VersionOut",
]

SLUG_PATTERN = r"^[a-z0-9-]{1,64}$"


class _OmitNone(Schema):
    """A schema whose optional keys (``_omitted_when_none``) are left out rather than null."""

    _omitted_when_none: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    # No return annotation: with one, pydantic would describe the output as a bare object.
    def _omit(self, handler: SerializerFunctionWrapHandler):
        data = handler(self)
        for key in self._omitted_when_none:
            if data.get(key) is None:
                data.pop(key, None)
        return data


# --- Errors -----------------------------------------------------------------------------------


class ErrorBody(_OmitNone):
    _omitted_when_none = frozenset({"details"})

    code: str
    message: str
    details: dict[str, Any] | None = None


class ErrorOut(Schema):
    """The one error envelope of ``/v1``."""

    error: ErrorBody


# --- Graphs -----------------------------------------------------------------------------------


class GraphCreatedOut(Schema):
    graph: str
    created: bool


class SummaryOut(Schema):
    node_count: int
    edge_count: int
    entry_nodes: list[str]
    terminal_nodes: list[str]


class GraphSummaryOut(Schema):
    graph: str
    node_count: int
    edge_count: int
    entry_nodes: list[str]
    terminal_nodes: list[str]


class GraphListOut(Schema):
    graphs: list[GraphSummaryOut]
    #: Present only when the request asked for a page (``cursor`` or ``limit``).
    next: str | None = None


class GraphOut(Schema):
    graph: str
    document: dict[str, Any]


class ValidationOut(_OmitNone):
    """``{"valid": true, "graph", "summary"}`` or ``{"valid": false, "errors"}``; with
    ``?runnable=true``, a valid graph's answer adds ``not_runnable`` (spec 02's run-time
    resolution errors; empty when it can run here)."""

    _omitted_when_none = frozenset({"graph", "summary", "errors", "not_runnable"})

    valid: bool
    graph: str | None = None
    summary: SummaryOut | None = None
    errors: list[dict[str, Any]] | None = None
    not_runnable: list[dict[str, Any]] | None = None


# --- Documents --------------------------------------------------------------------------------


class DocumentIn(Schema):
    slug: str | None = Field(None, pattern=SLUG_PATTERN)
    title: str = Field(min_length=1, max_length=200)
    text: str = ""


class DraftStateOut(Schema):
    revision: int
    valid: bool
    error_count: int


class LatestOut(Schema):
    version: int
    graph: str


class VersionOut(Schema):
    version: int
    graph: str
    frozen_by: str | None
    frozen_at: datetime
    note: str


class DocumentOut(_OmitNone):
    _omitted_when_none = frozenset({"latest", "archived"})

    slug: str
    title: str
    draft: DraftStateOut
    latest: LatestOut | None = None
    updated_at: datetime
    #: ``true`` for an archived document (hidden from the list unless asked); left out otherwise.
    archived: bool | None = None

    @field_validator("archived", mode="before")
    @classmethod
    def _left_out_when_false(cls, value: Any) -> Any:
        return True if value else None


class DocumentPatchIn(Schema):
    """What ``PATCH /v1/documents/{slug}`` changes; every key is optional."""

    title: str | None = Field(None, min_length=1, max_length=200)
    slug: str | None = Field(None, pattern=SLUG_PATTERN)
    archived: bool | None = None


class DuplicateIn(Schema):
    title: str | None = Field(None, min_length=1, max_length=200)


class DeletedOut(Schema):
    slug: str
    deleted: bool
    #: Saved revisions of the draft that went with it.
    revisions: int
    #: Frozen versions that stay (their graphs and runs too).
    versions_kept: int


class DocumentDetailOut(DocumentOut):
    versions: list[VersionOut]


class DocumentListOut(Schema):
    documents: list[DocumentOut]
    next: str | None


class VersionListOut(Schema):
    versions: list[VersionOut]
    next: str | None


class DraftIn(Schema):
    text: str


class HeldFieldOut(Schema):
    """A field the editor could not take: it counts as an error and blocks freezing."""

    level: list[str]
    node: str
    field: str
    text: str
    message: str


class DraftOut(_OmitNone):
    _omitted_when_none = frozenset({"held"})

    text: str
    revision: int
    validation: ValidationOut
    #: Fields the editor held back (left out when there are none): they block freezing.
    held: list[HeldFieldOut] | None = None

    @field_validator("held", mode="before")
    @classmethod
    def _none_when_empty(cls, value: Any) -> Any:
        return list(value) or None if value is not None else None


def _schema_of(record: type, name: str) -> type[Schema]:
    """A response schema with exactly the fields of a service's record: one shape."""
    hints = get_type_hints(record)
    fields: dict[str, Any] = {
        item.name: (hints[item.name], ...) for item in dataclasses.fields(record)
    }
    return create_model(name, __base__=Schema, __module__=__name__, **fields)


if TYPE_CHECKING:  # a model made at run time: the type checker sees the base
    RevisionOut = Schema
else:
    #: One revision of a draft's history (``history.RevisionInfo``).
    RevisionOut = _schema_of(history.RevisionInfo, "RevisionOut")


class RevisionListOut(Schema):
    revisions: list[RevisionOut]
    next: str | None


class FreezeIn(Schema):
    note: str = Field("", max_length=2000)


class FreezeOut(Schema):
    graph: str
    version: int
    created: bool


class NodeChangeOut(Schema):
    node: str
    #: ``{"path", "from"?, "to"?}``: a side is absent where the field is absent.
    fields: list[dict[str, Any]]


class NodeChangesOut(Schema):
    added: list[str]
    removed: list[str]
    changed: list[NodeChangeOut]


class EdgeChangesOut(Schema):
    #: Edges as in the document: ``{"from", "to", "label"?}``.
    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]


class DiffOut(Schema):
    identical: bool
    from_: str = Field(alias="from")
    to: str
    nodes: NodeChangesOut
    edges: EdgeChangesOut


# --- Agents -----------------------------------------------------------------------------------


class AgentCreatedOut(Schema):
    agent: str
    created: bool


class AgentOut(_OmitNone):
    _omitted_when_none = frozenset({"source"})

    agent: str
    name: str | None
    #: ``json`` or ``toml``: how the definition was first posted.
    format: str
    #: The hashed form of the definition: no name, defaults written out.
    definition: dict[str, Any]
    #: The reference's agent file as it was posted (TOML only).
    source: str | None = None


class AgentListOut(Schema):
    agents: list[AgentOut]
    #: Only when paged (``cursor`` or ``limit`` given).
    next: str | None = None


# --- Runs and tools ---------------------------------------------------------------------------


class RunIn(Schema):
    graph_hash: str
    #: Any JSON value; the entry nodes receive it.
    input: Any = None
    #: Strings only, never hashed: at most 16, keys up to 64 bytes, values up to 256 bytes.
    labels: dict[str, str] | None = None


class AgentRunIn(Schema):
    #: The hash of a stored agent (``POST /v1/agents``).
    agent: str
    #: Any JSON value; the agent receives it.
    input: Any = None
    #: As a graph run's.
    labels: dict[str, str] | None = None
    #: The reference's client-chosen run id: refused here (the server names every run).
    run_id: Any = None


class RunCreatedOut(Schema):
    run: str
    status: str


class UsageOut(Schema):
    input_tokens: int
    output_tokens: int


class RunOut(_OmitNone):
    """A run (spec 05): ``labels`` only when it has some; ``pending`` (the call it has in
    flight, or the write cut off) only from ``GET /v1/runs/{id}``, when there is one."""

    _omitted_when_none = frozenset({"labels", "pending", "forked_from", "test", "agent_def_hash"})

    run: str
    graph_hash: str
    labels: dict[str, str] | None = None
    #: ``{"state", …state fields}``: ``suspended`` → ``node``, ``reason``, ``input_schema``;
    #: ``budget_exceeded`` → ``node``, ``budget``, ``observed``; ``needs_reconciliation`` →
    #: ``node``, ``tool``; ``completed`` → ``output``; ``failed`` → ``error``; ``abandoned`` →
    #: ``reason``?
    status: dict[str, Any]
    event_count: int
    #: When the first and the last event were recorded (RFC 3339, as the events say).
    first_recorded_at: str | None
    last_recorded_at: str | None
    #: The tokens every model call so far reported.
    usage: UsageOut
    #: Model calls asked for so far.
    step_count: int
    #: ``{"kind": "model" | "tool", "seq", "node", …}``.
    pending: dict[str, Any] | None = None
    #: ``attached`` while a worker holds the run, ``none`` while none does, ``null`` once the
    #: run has ended.
    driver: str | None
    created_at: datetime
    updated_at: datetime
    #: A fork's origin (``run_id``, ``through_seq``, ``from_node``, ``graph_hash``,
    #: ``acknowledged_writes``); absent for a run started anew.
    forked_from: dict[str, Any] | None = None
    #: A test run of a document's draft: ``{"document", "revision"}``, and ``"node"`` when it
    #: ran that one node alone (**Execute this node**); absent on other runs.
    test: dict[str, Any] | None = None
    #: An agent run (``POST /v1/runs``): the agent it runs, as the reference's runs name it;
    #: absent on a graph run.
    agent_def_hash: str | None = None

    @staticmethod
    def resolve_labels(run: Any) -> dict[str, str] | None:
        return dict(run.labels) or None

    @staticmethod
    def resolve_pending(run: Any) -> dict[str, Any] | None:
        return run.pending_call


class RunListOut(Schema):
    runs: list[RunOut]
    #: Only when paged (``cursor`` or ``limit`` given).
    next: str | None = None


class ReplayOut(_OmitNone):
    _omitted_when_none = frozenset({"pending"})

    status: dict[str, Any]
    next_seq: int
    usage: UsageOut
    pending: dict[str, Any] | None = None


class EventBodyOut(Schema):
    kind: str
    #: Kept as recorded, including fields this version does not model.
    payload: dict[str, Any]


class EventOut(Schema):
    run_id: str
    seq: int
    schema_version: int
    recorded_at: str
    event: EventBodyOut


class EventListOut(Schema):
    events: list[EventOut]
    #: The ``after`` of the next page, or ``null`` when this page reaches the end of the log.
    next: int | None


class RunGraphOut(_OmitNone):
    _omitted_when_none = frozenset({"current_node", "forked_from"})

    graph_hash: str
    #: A fork's origin, as ``GET /v1/runs/{id}`` gives it.
    forked_from: dict[str, Any] | None = None
    current_node: str | None = None
    #: ``{"node", "state": "entered" | "exited" | "skipped", "reason"?, "branch_case"?,
    #: "map"?, "fold"?}``; a node the run has not reached is absent.
    nodes: list[dict[str, Any]]


class WakeIn(Schema):
    #: Why the wait was ended early; recorded with who did it.
    comment: str | None = Field(None, max_length=2000)


class ResumeIn(Schema):
    #: A gate's approval (checked against its schema); ``{"extend": {"steps" | "tokens": n}}``
    #: or ``{"limit": n}`` for a budget; ``{"output": …}`` or ``{"retry": true}`` for a
    #: reconciliation. Without it, a queued or running run is handed to a worker again.
    input: Any = None
    #: The reference's budget body, beside ``input`` instead of in it.
    extend: dict[str, Any] | None = None
    comment: str | None = Field(None, max_length=2000)
    #: Which pending item, when the run waits for several (items of a map, say): its node and
    #: ``scope``. Without them, the oldest is resolved.
    node: str | None = None
    scope: list[tuple[str, int]] | None = None


class ResumeOut(Schema):
    run: str
    status: str
    outcome: str


class AbandonIn(Schema):
    reason: str | None = Field(None, max_length=2000)


class AbandonOut(Schema):
    run: str
    abandoned: bool
    #: Where the ``RunAbandoned`` event was recorded.
    appended_seq: int
    status: dict[str, Any]


class ResolveIn(Schema):
    #: What the write that was cut off returned (any JSON value, ``null`` included).
    output: Any


class ResolveOut(Schema):
    run: str
    resolved: bool
    status: dict[str, Any]


class ToolOut(Schema):
    name: str
    description: str
    effect: str
    enabled: bool
    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    server: str | None  # the GATEHOUSE_MCP_SERVERS server offering it; null for the others


class ToolListOut(Schema):
    tools: list[ToolOut]


# --- Inbox ------------------------------------------------------------------------------------


_KIND_FIELDS = {
    "gate": ("reason", "input_schema", "value"),
    "budget": ("budget", "observed"),
    "reconciliation": ("tool", "call", "input"),
}


#: An item's fields of the inbox for a person, omitted when they say nothing.
_WHEN_SET = (
    "due_at",
    "remind_at",
    "overdue",
    "due_soon",
    "approvals",
    "quorum",
    "escalated",
    "claim",
)


class InboxItemOut(Schema):
    """A pending gate (``reason``, ``input_schema``, ``value``), budget (``budget``,
    ``observed``) or reconciliation (``tool``, ``call``, ``input``): each item carries the
    fields of its kind only."""

    kind: str
    run: str
    graph_hash: str
    document: str | None = None
    node: str
    node_name: str | None = None
    scope: list[tuple[str, int]] | None = None
    #: The position of the parking event in the run's log.
    seq: int
    suspended_at: str
    reason: str | None = None
    input_schema: Any = None
    value: Any = None
    budget: dict[str, Any] | None = None
    observed: Any = None
    tool: str | None = None
    call: Any = None
    input: Any = None
    #: A gate's due time under its run's policy, its reminder, and whether it is past due or
    #: due soon (each omitted without a due time).
    due_at: datetime | None = None
    remind_at: datetime | None = None
    overdue: bool | None = None
    due_soon: bool | None = None
    #: A gate's approvals counted so far and how many its policy needs (under a quorum of
    #: more than one).
    approvals: int | None = None
    quorum: int | None = None
    #: A gate escalated past its due time: when, and the groups and users it added.
    escalated: dict[str, Any] | None = None
    #: "I'm on it": who holds the card's claim, since and until when (omitted when nobody).
    claim: dict[str, Any] | None = None

    @staticmethod
    def resolve_overdue(item: Any) -> bool | None:
        return item.overdue if getattr(item, "due_at", None) else None

    @staticmethod
    def resolve_due_soon(item: Any) -> bool | None:
        return item.due_soon if getattr(item, "due_at", None) else None

    @staticmethod
    def resolve_approvals(item: Any) -> int | None:
        policy = getattr(item, "policy", None)
        return len(item.votes) if policy is not None and policy.quorum > 1 else None

    @staticmethod
    def resolve_quorum(item: Any) -> int | None:
        policy = getattr(item, "policy", None)
        return policy.quorum if policy is not None and policy.quorum > 1 else None

    @staticmethod
    def resolve_escalated(item: Any) -> dict[str, Any] | None:
        if not getattr(item, "escalated_at", None):
            return None
        groups, users = list(item.escalated_groups), list(item.escalated_users)
        return {"at": item.escalated_at, "groups": groups, "users": users}

    @staticmethod
    def resolve_claim(item: Any) -> dict[str, Any] | None:
        if not getattr(item, "claimed_by", None):
            return None
        return {"by": item.claimed_by, "at": item.claimed_at, "until": item.claim_until}

    @model_serializer(mode="wrap")
    # No return annotation: with one, pydantic would describe the output as a bare object.
    def _by_kind(self, handler: SerializerFunctionWrapHandler):
        data = handler(self)
        for key in ("document", "node_name", "scope", *_WHEN_SET):
            if data.get(key) is None:
                data.pop(key, None)
        own = _KIND_FIELDS.get(data.get("kind"), ())
        for fields in _KIND_FIELDS.values():
            for key in fields:
                if key not in own:
                    data.pop(key, None)
        return data


class InboxListOut(Schema):
    items: list[InboxItemOut]
    next: str | None


class VoteOut(Schema):
    """An approval a gate's quorum counted before the one that resolved it."""

    by: str | None = None
    at: str | None = None
    seq: int | None = None


class ResolvedItemOut(_OmitNone):
    _omitted_when_none = frozenset(
        {"comment", "scope", "document", "vote", "votes", "quorum", "policy", "detail"}
    )

    #: The kind of entry: ``decision``, ``vote``, ``deadline`` (resolved by its due time),
    #: ``escalation``, ``reminder``, ``overdue``, ``claim`` or ``release``.
    entry: str = "decision"
    #: ``gate`` (``Resumed``), ``budget`` (``BudgetRaised``) or ``reconciliation``
    #: (``Reconciled``).
    kind: str
    run: str
    graph_hash: str
    node: str
    scope: list[tuple[str, int]] | None = None
    by: str | None
    at: str
    input: Any = None
    comment: str | None = None
    #: The ``hash_value`` of the gate schema the input was checked against (gates only).
    schema_hash: str | None = None
    #: The slug of the document the item's card showed (as ``GET /v1/inbox`` gives it).
    document: str | None = None
    #: ``true`` for an approval a quorum counted while the gate still waited
    #: (``ApprovalVoted``); omitted for a resolution.
    vote: bool | None = None
    #: For a gate resolved by several people: the approvals counted before this one.
    votes: list[VoteOut] | None = None
    #: How many distinct approvals the gate needed, when more than one.
    quorum: int | None = None
    #: The gate's approval policy as its run recorded it (omitted when it recorded none).
    policy: dict[str, Any] | None = None
    #: What the entry says beyond that: an escalation's ``to`` and ``due_at``, a resolution by
    #: the deadline's ``due_at``, a claim's ``until``, a release's ``reason``, why a due time
    #: found nothing to do.
    detail: dict[str, Any] | None = None

    @field_validator("vote", mode="before")
    @classmethod
    def _only_true(cls, value: Any) -> Any:
        return True if value else None

    @field_validator("votes", mode="before")
    @classmethod
    def _only_some(cls, value: Any) -> Any:
        return list(value) if value else None


class InboxResolvedOut(Schema):
    items: list[ResolvedItemOut]
    next: str | None


class DecidersOut(Schema):
    groups: list[str]
    users: list[str]


class GatePolicyOut(Schema):
    """One gate's approval policy (``docs/inbox.md``, *Approval policies*)."""

    deciders: DecidersOut
    four_eyes: bool
    quorum: int
    #: ``24h``, ``1h30m``; ``null`` for no due time.
    due: str | None
    #: ``75%`` of the due time; ``null`` for no reminder.
    remind_at: str | None
    #: ``null``, ``{"escalate_to": {"groups", "users"}}`` or ``{"resolve_with": <value>}``.
    on_expiry: dict[str, Any] | None


class PolicyWarningOut(_OmitNone):
    _omitted_when_none = frozenset({"gate"})

    gate: str | None = None
    #: ``gate_not_in_draft``, ``unknown_group``, ``unknown_user``, ``draft_unreadable``.
    code: str
    message: str


class ApprovalPolicyOut(_OmitNone):
    _omitted_when_none = frozenset({"warnings"})

    gates: dict[str, GatePolicyOut]
    warnings: list[PolicyWarningOut] | None = None


class ApprovalPolicyIn(Schema):
    """The whole policy: each gate's (a field left out keeps the default; a gate left out
    keeps the defaults). ``warnings``, as a ``GET`` answers it, is ignored."""

    gates: dict[str, Any]
    warnings: Any = None
