"""The engine's ports: what it needs from the world, as Protocols and plain data.

The engine is deterministic orchestration (spec 04); everything with a side effect — the
event store, tools, model providers, the agent directory, the clock — comes in through these
ports. ``editor.store`` implements :class:`RunStore` on the ORM, ``editor.engine.memory`` in
memory for tests; ``editor.tools`` and ``editor.providers`` hold the built-in registries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from editor.graph import AgentDefinition

__all__ = [
    "ANSWER_TOOL",
    "ANSWER_TOOL_DESCRIPTION",
    "ANSWER_TOOL_TAKEN",
    "AgentDirectory",
    "CallClaim",
    "CallCommitments",
    "Clock",
    "Envelope",
    "Installation",
    "Limits",
    "ModelProvider",
    "ModelReply",
    "ModelRequest",
    "ProviderRegistry",
    "RunRecord",
    "RunStore",
    "SystemClock",
    "ToolCall",
    "ToolContext",
    "ToolEffect",
    "ToolRegistry",
    "ToolSpec",
    "Usage",
]

SCHEMA_VERSION = 1


# --- the event log ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Envelope:
    """One recorded event (spec 04, *Events*). ``payload`` keeps unknown fields as they are."""

    run_id: str
    seq: int
    recorded_at: str
    kind: str
    payload: dict[str, Any]
    schema_version: int = SCHEMA_VERSION

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "seq": self.seq,
            "schema_version": self.schema_version,
            "recorded_at": self.recorded_at,
            "event": {"kind": self.kind, "payload": self.payload},
        }


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What a worker needs to drive a run: its identity, the graph it runs, and its log."""

    run_id: str
    graph_hash: str
    input: Any
    events: tuple[Envelope, ...]
    labels: dict[str, str] = field(default_factory=dict)
    #: A test run's pinned outputs (node id → output): the drive records each as the node's
    #: output (``NodeExited`` with ``pinned: true``) instead of running the node.
    pins: dict[str, Any] = field(default_factory=dict)


class RunStore(Protocol):
    def load_run(self, run_id: str) -> RunRecord:
        """The run and its whole log, in ``seq`` order."""
        ...

    def load_graph(self, graph_hash: str) -> bytes | None:
        """The stored canonical bytes of a graph (the engine re-hashes them: the fingerprint
        check), or ``None`` when no such graph is stored."""
        ...

    def append(self, run_id: str, events: Sequence[Envelope], status: dict[str, Any]) -> None:
        """Append ``events`` (contiguous ``seq``, starting at the run's next one) atomically and
        set the run's status object (``{"state": …, …state fields}``, spec 05) in the same
        transaction; renew the driver's lease.

        Raise :class:`~editor.engine.errors.RunLost` when the events cannot be appended because
        the run moved on without this driver: another append took the ``seq`` (an abandon, a
        resume), the run is finished, or this driver's lease is gone. Nothing is written then.
        """
        ...

    def release_thread(self) -> None:
        """Called by each engine worker thread (map concurrency) before it ends, so a store
        holding per-thread resources (database connections) can free them."""
        ...


@dataclass(frozen=True, slots=True)
class CallClaim:
    """Who holds a declared call identity ``(tool, key)``: ``run_id`` (the caller itself when
    it just claimed it), with the input it was claimed for, and, once that run recorded the
    call's completion, its ``output`` (``settled``)."""

    run_id: str
    input: Any
    settled: bool = False
    output: Any = None


@runtime_checkable
class CallCommitments(Protocol):
    """What a store offers for cross-run deduplication on a tool's declared idempotency key
    (the reference's ``claim_call``): one run per identity executes the call."""

    def claim_call(self, tool: str, key: str, run_id: str, input: Any) -> CallClaim:
        """Claim ``(tool, key)`` for ``run_id``, atomically; or the claim another run holds."""
        ...

    def settle_call(self, tool: str, key: str, run_id: str, output: Any) -> None:
        """Record the output of the call ``run_id`` claimed (the others copy it)."""
        ...


# --- tools ------------------------------------------------------------------------


class ToolEffect(StrEnum):
    READ = "read"
    IDEMPOTENT = "idempotent"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class ToolContext:
    run_id: str
    node: str
    idempotency_key: str
    timeout: float  # seconds; the tool should give up by then (the engine stops waiting)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A registered tool. ``func(input, context)`` returns a JSON value or raises
    :class:`~editor.engine.errors.ToolError` (any other exception fails the call too)."""

    name: str
    description: str
    func: Callable[[Any, ToolContext], Any]
    effect: ToolEffect = ToolEffect.READ
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    enabled: bool = True  # False: registered but switched off here (``tool_disabled``)
    #: The MCP catalogue server offering the tool (``None``: a built-in or module tool).
    server: str | None = None
    #: The tool's own name for a call (its declared idempotency key, derived from the input):
    #: recorded and passed as the call's key instead of the run-position key. Raising
    #: :class:`~editor.engine.errors.ToolError` refuses the call before it is requested.
    declared_key: Callable[[Any], str] | None = None

    def describe(self) -> dict[str, Any]:
        """``GET /v1/tools``'s entry (spec 05); ``server`` is ``None`` but for an MCP tool."""
        return {
            "name": self.name,
            "description": self.description,
            "effect": self.effect.value,
            "enabled": self.enabled,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "server": self.server,
        }


class ToolRegistry(Protocol):
    def get(self, name: str) -> ToolSpec | None: ...

    def names(self) -> Sequence[str]:
        """Every registered name, sorted (suggestions are drawn from it)."""
        ...


# --- model providers ----------------------------------------------------------------

#: The synthetic tool of the structured loop (spec 08, section 4): offered with the answer's
#: schema as its input schema, never executed, and reserved (no real tool may take the name).
ANSWER_TOOL = "salvor_answer"
#: Why a definition listing it or a tool registered under it is refused (answer_tool_name_taken).
ANSWER_TOOL_TAKEN = f"the tool name `{ANSWER_TOOL}` is reserved for the structured answer"
ANSWER_TOOL_DESCRIPTION = (
    "Give the final answer: call this tool once, alone, with an input that matches its schema."
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # a JSON value (the OpenAI protocol's JSON-text arguments, parsed)


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One model answer: text, or tool calls to make before asking again."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()

    def as_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "tool_calls": [
                {"id": call.id, "name": call.name, "arguments": call.arguments}
                for call in self.tool_calls
            ],
        }

    @classmethod
    def from_json(cls, value: dict[str, Any], usage: dict[str, Any] | None = None) -> ModelReply:
        calls = tuple(
            ToolCall(str(call["id"]), str(call["name"]), call.get("arguments"))
            for call in value.get("tool_calls") or ()
        )
        usage = usage or {}
        return cls(
            value.get("content"),
            calls,
            Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
        )


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One chat-completions call.

    ``messages`` are OpenAI-shaped, without the system message (that is ``system``):
    ``{"role": "user", "content": str}``, ``{"role": "assistant", "content": str | None,
    "tool_calls": [{"id", "name", "arguments"}]}``, ``{"role": "tool", "tool_call_id": str,
    "content": str}``. The first is always the user message: the compact JSON of the routed
    value. ``cursor`` counts the model calls this (run, node, scope) made before this one
    (the ``scripted`` provider's reply index)."""

    model: str  # the definition's `model`: `echo`, `scripted`, `openai:<name>`, `claude-…`
    system: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[ToolSpec, ...]
    options: dict[str, Any]
    cursor: int
    idempotency_key: str
    timeout: float
    #: The definition's ``llm`` (how a ``claude-…`` model is reached: variable names).
    llm: dict[str, Any] = field(default_factory=dict)
    #: The definition's ``max_response_tokens`` (``None``: the provider's default).
    max_response_tokens: int | None = None
    answer_schema: dict[str, Any] | bool | None = None

    @property
    def forces_tool_call(self) -> bool:
        """Whether the model must answer with a tool call (the structured loop)."""
        return self.answer_schema is not None


class ModelProvider(Protocol):
    def complete(self, request: ModelRequest) -> ModelReply:
        """Answer, or raise :class:`~editor.engine.errors.ProviderError`."""
        ...


class ProviderRegistry(Protocol):
    def provider_for(self, model: str) -> ModelProvider | None:
        """The provider for a definition's ``model``, or ``None`` when it is not configured
        on this installation (``provider_unavailable``)."""
        ...


class AgentDirectory(Protocol):
    def get(self, agent_hash: str) -> AgentDefinition | None: ...


# --- the rest ----------------------------------------------------------------------


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        import time

        return time.monotonic()


@dataclass(frozen=True, slots=True)
class Limits:
    """Spec 04's limits; each is a ``GATEHOUSE_…`` setting on the Django side."""

    max_nodes_visited: int = 10_000  # GATEHOUSE_RUN_MAX_NODES
    max_map_items: int = 10_000  # GATEHOUSE_RUN_MAX_MAP_ITEMS
    wall_time: float = 3600.0  # GATEHOUSE_RUN_WALL_TIME (seconds in `running`)
    tool_timeout: float = 30.0  # GATEHOUSE_TOOL_TIMEOUT
    model_timeout: float = 120.0  # GATEHOUSE_MODEL_TIMEOUT
    max_event_bytes: int = 1 << 20  # GATEHOUSE_EVENT_MAX_BYTES (one payload)
    max_run_bytes: int = 256 << 20  # GATEHOUSE_RUN_MAX_BYTES (every payload of a run; 0: none)
    tool_retries: int = 0  # GATEHOUSE_TOOL_RETRIES
    # Map items in flight at once in one drive, nested maps included (a map's own
    # `concurrency` asks for at most that many): GATEHOUSE_RUN_MAP_CONCURRENCY.
    map_concurrency: int = 16
    # An agent loop's model calls when its definition sets no `max_steps`: crossing it parks
    # the run in `budget_exceeded` as a declared budget does. GATEHOUSE_AGENT_MAX_STEPS.
    agent_max_steps: int = 50


@dataclass(frozen=True, slots=True)
class Installation:
    """Everything a run resolves names against (spec 02, run-time resolution)."""

    tools: ToolRegistry
    providers: ProviderRegistry
    agents: AgentDirectory
