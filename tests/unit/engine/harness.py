"""A small world for driving the engine in unit tests: in-memory store, in-test tools, providers
and agents, and helpers to read a run's log."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from editor.engine import (
    Engine,
    InMemoryStore,
    Installation,
    Limits,
    ModelProvider,
    ModelReply,
    ModelRequest,
    ToolContext,
    ToolEffect,
    ToolSpec,
    prepare_abandon,
    prepare_resume,
    run_status,
)
from editor.graph import Edge, Graph, agent_def_hash, hash_value, parse_agent_definition
from editor.providers import build_registry as build_providers
from editor.tools import build_registry as build_tools

__all__ = [
    "Agents",
    "FakeClock",
    "Harness",
    "InFlight",
    "Providers",
    "Recorder",
    "graph",
    "tool_key",
]


def graph(*nodes: Any, edges: Iterable[tuple[str, ...]] = ()) -> Graph:
    """A document of ``nodes`` and ``(from, to[, label])`` edges."""
    return Graph(1, tuple(nodes), tuple(Edge(*edge) for edge in edges))


def tool_key(run_id: str, node: str, scope: list[list[Any]] | None = None, call: int = 0) -> str:
    """The idempotency key spec 04 gives a tool call."""
    return hash_value({"run": run_id, "node": node, "scope": scope or [], "call": call})


class Agents(dict):
    """An :class:`~editor.engine.AgentDirectory` over a dict."""

    def add(self, definition: dict[str, Any]) -> str:
        parsed = parse_agent_definition(definition)
        digest = agent_def_hash(parsed)
        self[digest] = parsed
        return digest


class Providers:
    """The built-in providers plus any a test adds under its own model name."""

    def __init__(self) -> None:
        self.builtin = build_providers(None, None)
        self.extra: dict[str, ModelProvider] = {}

    def provider_for(self, model: str) -> ModelProvider | None:
        return self.extra.get(model) or self.builtin.provider_for(model)


class Recorder:
    """A provider that records each request and answers with ``answer(request)``."""

    def __init__(self, answer: Callable[[ModelRequest], ModelReply]) -> None:
        self.answer = answer
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return self.answer(request)


class InFlight:
    """Counts calls in flight at once; ``parties`` calls must meet before any leaves."""

    def __init__(self, parties: int) -> None:
        self.lock = threading.Lock()
        self.current = 0
        self.most = 0
        self.barrier = threading.Barrier(parties, timeout=10)

    def __call__(self, value: Any, context: ToolContext) -> Any:
        with self.lock:
            self.current += 1
            self.most = max(self.most, self.current)
        try:
            self.barrier.wait()
        finally:
            with self.lock:
                self.current -= 1
        return value


class FakeClock:
    """A clock a test moves by hand: ``now()`` and ``monotonic()`` advance together."""

    def __init__(self, start: datetime | None = None) -> None:
        self.start = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.elapsed = 0.0

    def advance(self, seconds: float) -> None:
        self.elapsed += seconds

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed)

    def monotonic(self) -> float:
        return self.elapsed


class Harness:
    def __init__(self) -> None:
        # The store itself refuses any append the state table forbids (spec 04).
        self.store: InMemoryStore = InMemoryStore()
        self.tools = build_tools()
        self.providers = Providers()
        self.agents = Agents()
        self.limits = Limits()
        self.clock: FakeClock | None = None

    # --- the world -------------------------------------------------------------------

    def tool(
        self,
        name: str,
        func: Callable[[Any, ToolContext], Any],
        *,
        effect: ToolEffect = ToolEffect.READ,
        input_schema: Any = None,
        output_schema: Any = None,
    ) -> str:
        self.tools.register(
            ToolSpec(name, f"the {name} tool", func, effect, input_schema, output_schema)
        )
        return name

    def agent(
        self,
        model: str = "echo",
        prompt: str = "You help.",
        *,
        replies: list[Any] | None = None,
        tools: Iterable[str] = (),
        budget: dict[str, int] | None = None,
    ) -> str:
        definition: dict[str, Any] = {"model": model, "prompt": prompt, "tools": list(tools)}
        if replies is not None:
            definition["options"] = {"replies": replies}
        if budget:
            definition["budget"] = budget
        return self.agents.add(definition)

    def scripted(self, *replies: Any, **kwargs: Any) -> str:
        return self.agent("scripted", replies=list(replies), **kwargs)

    def engine(self) -> Engine:
        return Engine(
            self.store,
            Installation(self.tools, self.providers, self.agents),
            clock=self.clock,
            limits=self.limits,
        )

    # --- runs --------------------------------------------------------------------------

    def start(self, document: Graph, input: Any = None) -> str:
        return self.store.start(document, input, now=self.clock.now() if self.clock else None)

    def run(self, document: Graph, input: Any = None) -> str:
        """Start a run of ``document`` and drive it once."""
        run_id = self.start(document, input)
        self.drive(run_id)
        return run_id

    def drive(self, run_id: str) -> str:
        """Drive once; the stored status must be the fold of the stored log (spec 04)."""
        state = self.engine().drive(run_id)
        assert self.store.status(run_id) == run_status(self.store.events[run_id])
        return state

    def resume(self, run_id: str, input: Any, by: str = "bob", **body: Any) -> dict[str, Any]:
        record = self.store.load_run(run_id)
        at = self.clock.now() if self.clock else now()
        events, status = prepare_resume(record, {"input": input, **body}, by, at)
        self.store.record(run_id, events, status)
        return events[0].payload

    def fork(self, origin: str, from_node: str, acknowledged: Iterable[int] = ()) -> str:
        """Store a fork of ``origin`` from ``from_node`` (not driven yet)."""
        return self.store.fork(origin, from_node, list(acknowledged))

    def abandon(self, run_id: str, by: str = "carol", reason: str | None = None) -> None:
        record = self.store.load_run(run_id)
        events, status = prepare_abandon(record, reason, by, now())
        self.store.record(run_id, events, status)

    # --- reading -------------------------------------------------------------------------

    def state(self, run_id: str) -> str:
        return self.store.status(run_id)["state"]

    def kinds(self, run_id: str) -> list[str]:
        return self.store.kinds(run_id)

    def events(self, run_id: str, *, start: int = 1) -> list[tuple[str, dict[str, Any]]]:
        """``(kind, payload)`` of the log from ``start`` (default: after GraphRunStarted)."""
        return [(e.kind, e.payload) for e in self.store.events[run_id][start:]]

    def of(self, run_id: str, kind: str) -> list[dict[str, Any]]:
        return [e.payload for e in self.store.events[run_id] if e.kind == kind]

    def last(self, run_id: str) -> tuple[str, dict[str, Any]]:
        envelope = self.store.events[run_id][-1]
        return envelope.kind, envelope.payload

    def error(self, run_id: str) -> str:
        kind, payload = self.last(run_id)
        assert kind == "RunFailed", (kind, payload)
        return payload["error"]

    def output(self, run_id: str) -> Any:
        kind, payload = self.last(run_id)
        assert kind == "RunCompleted", (kind, payload)
        return payload["output"]


def now() -> datetime:
    return datetime.now(UTC)
