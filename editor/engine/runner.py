"""The engine: drives one run from its log to its next stop (spec 04).

A drive loads the run, checks the graph's fingerprint and resolves every name again, then
walks the graph from the start. Whatever the log already records is replayed from
:class:`~editor.engine.history.History`; everything new is appended through the store in
atomic steps. The drive ends when the run completes, fails, parks (a gate, a budget, a write
to reconcile), or is lost to someone else (an abandon, an expired lease).

Appends are batched: events wait in a per-thread buffer and are written together just before
a side effect (a tool or model call — its request must be on record first) and at the end.
Parking events are written at the end of the drive, once every item in flight has stopped, so
a parked run never has events appended after its parking.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import orjson

from editor.engine.errors import ProviderError, RunLost
from editor.engine.history import CallHistory, History, NodeHistory, Scope
from editor.engine.ports import (
    Clock,
    Envelope,
    Installation,
    Limits,
    ModelReply,
    ModelRequest,
    RunRecord,
    RunStore,
    SystemClock,
    ToolContext,
    ToolEffect,
    ToolSpec,
)
from editor.engine.records import timestamp
from editor.engine.resolution import resolve_names
from editor.engine.schemas import first_violation
from editor.engine.states import TERMINAL, RunState
from editor.engine.status import StatusFold, run_status
from editor.graph import (
    MISSING,
    AgentDefinition,
    AgentNode,
    BranchNode,
    FoldNode,
    GateNode,
    Graph,
    JsonError,
    MapNode,
    ToolNode,
    hash_value,
    parse_document,
    parse_expression,
    parse_reference,
    read_json,
)
from editor.graph.expressions import compare
from editor.graph.model import BestBy, JoinAll, ModelDecision, NodeBody, SubgraphBody

__all__ = ["Engine", "compact_json"]

SKIP_REASON = "no live inbound edge: an upstream branch routed to another case"


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _Failure(Exception):
    """The run fails with this message (recorded as ``RunFailed``)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class _Parked(Exception):
    """The walk stopped to wait for a person; ``events`` are the parking events to record."""

    def __init__(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(f"{len(events)} parking event(s)")
        self.events = events


def _scope_json(scope: Scope) -> list[list[Any]]:
    return [[owner, index] for owner, index in scope]


def _payload(node: str, scope: Scope, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"node": node, **fields}
    if scope:
        payload["scope"] = _scope_json(scope)
    return payload


class Engine:
    """Drives runs. One instance may drive many runs, one at a time per call."""

    def __init__(
        self,
        store: RunStore,
        installation: Installation,
        *,
        clock: Clock | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.installation = installation
        self.clock = clock or SystemClock()
        self.limits = limits or Limits()

    def drive(self, run_id: str) -> str:
        """Drive ``run_id`` until it parks, ends or is lost; return the state it is left in."""
        record = self.store.load_run(run_id)
        return _Drive(self, record).run()


class _Drive:
    def __init__(self, engine: Engine, record: RunRecord) -> None:
        self.engine = engine
        self.store = engine.store
        self.installation = engine.installation
        self.limits = engine.limits
        self.clock = engine.clock
        self.record = record
        self.run_id = record.run_id
        self.history = History(record.events)
        self.fold = StatusFold()
        for envelope in record.events:
            self.fold.feed(envelope)
        self.next_seq = len(record.events)
        self.lock = threading.Lock()
        self.lost = False
        self.visited = self.history.visited
        self.started_at = self.clock.monotonic()
        self.running_before = self.history.running_seconds_until(self.clock.now())

    # --- appending -------------------------------------------------------------------

    def flush(self, buffer: list[tuple[str, dict[str, Any]]], *, check_size: bool = True) -> None:
        """Append ``buffer``'s events as one atomic step and empty it."""
        if not buffer:
            return
        with self.lock:
            if self.fold.status()["state"] == RunState.QUEUED and len(buffer) > 1:
                # A queued run goes to `running` first (spec 04's table): its first step is
                # appended on its own, so no append jumps from `queued` to a parked state.
                self._append(buffer[:1], check_size)
                self._append(buffer[1:], check_size)
            else:
                self._append(buffer, check_size)
        buffer.clear()

    def _append(self, buffer: list[tuple[str, dict[str, Any]]], check_size: bool = True) -> None:
        """Append events as one atomic step (the caller holds the lock)."""
        if self.lost:
            raise RunLost("the run was lost to another writer")
        envelopes = []
        now = timestamp(self.clock.now())
        limit = self.limits.max_event_bytes
        for offset, (kind, payload) in enumerate(buffer):
            if check_size and limit and len(orjson.dumps(payload)) > limit:
                raise _Failure(
                    f"an event payload ({kind}) is larger than {limit} bytes "
                    f"(GATEHOUSE_EVENT_MAX_BYTES)",
                    "limit_exceeded",
                )
            envelopes.append(Envelope(self.run_id, self.next_seq + offset, now, kind, payload))
        fold = self.fold
        for envelope in envelopes:
            fold.feed(envelope)
        try:
            self.store.append(self.run_id, envelopes, fold.status())
        except RunLost:
            self.lost = True
            raise
        self.next_seq += len(envelopes)

    # --- the drive -------------------------------------------------------------------

    def run(self) -> str:
        state = RunState(self.fold.status()["state"])
        if state in TERMINAL or self.fold.pending:
            return state.value
        buffer: list[tuple[str, dict[str, Any]]] = []
        try:
            try:
                graph = self._load_graph()
                output = self.walk(graph, self.record.input, (), buffer)
                buffer.append(("RunCompleted", {"output": output}))
            except _Parked as parked:
                buffer.extend(parked.events)
            except _Failure as failure:
                payload: dict[str, Any] = {"error": failure.message}
                if failure.code:
                    payload["code"] = failure.code
                buffer.append(("RunFailed", payload))
            try:
                self.flush(buffer)
            except _Failure as failure:  # an event of the last step is over the size limit
                # The run must end on record even when its own message is over the limit.
                self.flush(
                    [("RunFailed", {"error": failure.message, "code": failure.code})],
                    check_size=False,
                )
        except RunLost:
            # Someone else moved the run on (an abandon, a resume): report where it is now.
            return str(run_status(self.store.load_run(self.run_id).events)["state"])
        return self.fold.status()["state"]

    def _load_graph(self) -> Graph:
        graph_hash = self.record.graph_hash
        data = self.store.load_graph(graph_hash)
        if data is None:
            raise _Failure(f"the graph `{graph_hash}` is not stored here", "unknown_graph")
        if hash_value_bytes(data) != graph_hash:
            raise _Failure(
                f"the stored graph does not match its hash `{graph_hash}`: it was changed "
                f"after it was frozen",
                "fingerprint_mismatch",
            )
        graph = parse_document(data)
        problems = resolve_names(graph, self.installation)
        if problems:
            raise _Failure(problems[0]["message"], problems[0]["code"])
        return graph

    def _check_limits(self) -> None:
        with self.lock:
            self.visited += 1
            visited = self.visited
        if visited > self.limits.max_nodes_visited:
            raise _Failure(
                f"the run visited more than {self.limits.max_nodes_visited} nodes "
                f"(GATEHOUSE_RUN_MAX_NODES)",
                "limit_exceeded",
            )
        elapsed = self.running_before + self.clock.monotonic() - self.started_at
        if elapsed > self.limits.wall_time:
            raise _Failure(
                f"the run has been running for more than {self.limits.wall_time:g} s "
                f"(GATEHOUSE_RUN_WALL_TIME)",
                "limit_exceeded",
            )

    # --- the walk (exact) ------------------------------------------------------------

    def walk(self, graph: Graph, value: Any, scope: Scope, buffer: list) -> Any:
        bodies = {
            node.body.node
            for node in graph.nodes
            if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
        }
        by_id = {node.id: node for node in graph.nodes}
        walked = [node.id for node in graph.nodes if node.id not in bodies]
        walked_set = set(walked)
        inbound: dict[str, list] = {node_id: [] for node_id in walked}
        outbound: dict[str, list] = {node_id: [] for node_id in walked}
        for edge in graph.edges:
            if edge.source in walked_set and edge.target in walked_set:
                inbound[edge.target].append(edge)
                outbound[edge.source].append(edge)
        indegree = {node_id: len(inbound[node_id]) for node_id in walked}
        ready = [node_id for node_id in walked if indegree[node_id] == 0]
        heapq.heapify(ready)
        outputs: dict[str, Any] = {}
        skipped: set[str] = set()
        cases: dict[str, str | None] = {}
        while ready:
            node_id = heapq.heappop(ready)
            node = by_id[node_id]
            edges = inbound[node_id]
            if not edges:
                routed, live = value, True
            else:
                live_edges = [
                    edge
                    for edge in edges
                    if edge.source not in skipped
                    and edge.source in outputs
                    and (
                        not isinstance(by_id[edge.source], BranchNode)
                        or edge.label == cases.get(edge.source)
                    )
                ]
                live = bool(live_edges)
                routed = outputs[min(edge.source for edge in live_edges)] if live else None
            if live:
                output, case = self.run_node(graph, node, routed, scope, buffer)
                outputs[node_id] = output
                if case is not None:
                    cases[node_id] = case
            else:
                skipped.add(node_id)
                if not self.history.get(scope, node_id).skipped:
                    buffer.append(("NodeSkipped", _payload(node_id, scope, reason=SKIP_REASON)))
            for edge in outbound[node_id]:
                indegree[edge.target] -= 1
                if indegree[edge.target] == 0:
                    heapq.heappush(ready, edge.target)
        terminals = [node_id for node_id in walked if not outbound[node_id]]
        if len(terminals) == 1:
            return outputs.get(terminals[0])
        return {node_id: outputs[node_id] for node_id in terminals if node_id in outputs}

    # --- nodes -----------------------------------------------------------------------

    def run_node(
        self, graph: Graph, node: Any, value: Any, scope: Scope, buffer: list
    ) -> tuple[Any, str | None]:
        """Run one node on its routed value; return its output and, for a branch, its case."""
        past = self.history.get(scope, node.id)
        if past.exited:
            return past.output, past.case
        case: str | None = None
        if isinstance(node, BranchNode) and node.agent_hash is None:
            case = self._pick_case(node, value)  # before NodeEntered: its failure is exact
        if isinstance(node, MapNode):
            items = self._map_items(node, value)  # likewise
        if not past.entered:
            self._check_limits()
            buffer.append(("NodeEntered", _payload(node.id, scope)))
        if isinstance(node, ToolNode):
            output = self._tool_node(node, value, scope, buffer, past)
        elif isinstance(node, AgentNode):
            output = self._agent_node(node, value, scope, buffer, past)
        elif isinstance(node, GateNode):
            output = self._gate(node, value, scope, past)
        elif isinstance(node, BranchNode):
            if case is None:
                case = self._decide(node, value, scope, buffer, past)
            if past.case is None:
                buffer.append(("BranchTaken", _payload(node.id, scope, case=case)))
            output = value
        elif isinstance(node, MapNode):
            output = self._map(graph, node, items, scope, buffer, past)
        else:
            output = self._fold(graph, node, value, scope, buffer, past)
        buffer.append(("NodeExited", _payload(node.id, scope, output=output)))
        return output, case

    # tool ---------------------------------------------------------------------------

    def _tool_node(
        self, node: ToolNode, value: Any, scope: Scope, buffer: list, past: NodeHistory
    ) -> Any:
        if node.input:
            data: dict[str, Any] = {}
            for name, reference in node.input.items():
                resolved = parse_reference(reference).resolve(value)
                if resolved is MISSING:
                    raise _Failure(
                        f"tool node `{node.id}`: the input reference `{reference}` for "
                        f"`{name}` is missing"
                    )
                data[name] = resolved
        else:
            data = value
        self._check_schema(
            node.input_schema, data, f"tool node `{node.id}`: its input", "input_schema"
        )
        spec = self.installation.tools.get(node.tool)
        assert spec is not None  # resolve_names checked it
        output = self._tool_call(
            spec, node.id, data, scope, 0, buffer, past, f"tool node `{node.id}` failed"
        )
        self._check_schema(
            node.output_schema, output, f"tool node `{node.id}`: its output", "output_schema"
        )
        return output

    def _tool_call(
        self,
        spec: ToolSpec,
        node_id: str,
        data: Any,
        scope: Scope,
        number: int,
        buffer: list,
        past: NodeHistory,
        failure: str,
    ) -> Any:
        """One tool call, recorded: replayed when complete, re-issued when interrupted (or
        parked for reconciliation when it writes)."""
        recorded = past.tool_calls.get(number) or CallHistory()
        if recorded.completed is not None:
            return recorded.completed.get("output")
        if recorded.reconciled is not None and not recorded.reconciled.get("retry"):
            return recorded.reconciled.get("output")
        key = hash_value(
            {"run": self.run_id, "node": node_id, "scope": _scope_json(scope), "call": number}
        )
        retry = recorded.reconciled is not None  # a person asked to run the write again
        if recorded.requested is None or retry:
            problem = first_violation(spec.input_schema, data)
            if problem is not None:
                raise _Failure(
                    f"{failure}: the input does not match the tool's input schema: {problem}"
                )
            # A retry is recorded as a fresh request, so that a crash during it leaves a
            # request without completion again, which parks again instead of re-running.
            buffer.append(
                (
                    "ToolCallRequested",
                    _payload(
                        node_id,
                        scope,
                        tool=spec.name,
                        input=data,
                        effect=spec.effect.value,
                        idempotency_key=key,
                        call=number,
                    ),
                )
            )
        elif spec.effect is ToolEffect.WRITE:
            # A write whose outcome is unknown: a person decides (spec 04, Durability).
            raise _Parked(
                [
                    (
                        "ReconciliationNeeded",
                        _payload(
                            node_id,
                            scope,
                            tool=spec.name,
                            call=number,
                            input=recorded.requested.get("input"),
                            idempotency_key=key,
                        ),
                    )
                ]
            )
        self.flush(buffer)
        context = ToolContext(self.run_id, node_id, key, self.limits.tool_timeout)
        attempts = 1 + (self.limits.tool_retries if spec.effect is not ToolEffect.WRITE else 0)
        for attempt in range(attempts):
            try:
                output = self._call_with_timeout(
                    lambda: spec.func(data, context),
                    self.limits.tool_timeout,
                    f"{failure}: the call took longer than {self.limits.tool_timeout:g} s "
                    f"(GATEHOUSE_TOOL_TIMEOUT)",
                )
                break
            except _Failure:
                if attempt + 1 == attempts:
                    raise
            except Exception as error:  # a tool's own failure, whatever its type
                if attempt + 1 == attempts:
                    raise _Failure(f"{failure}: {_message(error)}") from error
        problem = first_violation(spec.output_schema, output)
        if problem is not None:
            raise _Failure(
                f"{failure}: its answer does not match the tool's output schema: {problem}"
            )
        buffer.append(
            (
                "ToolCallCompleted",
                _payload(node_id, scope, tool=spec.name, output=output, call=number),
            )
        )
        if spec.effect is ToolEffect.WRITE:
            self.flush(buffer)  # the outcome of a write is recorded at once
        return output

    def _call_with_timeout(self, call: Callable[[], Any], timeout: float, message: str) -> Any:
        """Run ``call`` on a thread of its own and wait at most ``timeout`` seconds for it.

        One thread per call, not a fixed pool: a wide map has as many calls in flight as its
        concurrency, and a call queued behind a full pool would spend its timeout waiting.
        A call that times out is left to finish on its own (daemon thread); its result is
        discarded."""
        future: Future[Any] = Future()

        def target() -> None:
            future.set_running_or_notify_cancel()
            try:
                future.set_result(call())
            except BaseException as error:  # re-raised in the waiting thread
                future.set_exception(error)

        threading.Thread(target=target, name="gatehouse-call", daemon=True).start()
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            raise _Failure(message, "limit_exceeded") from None

    # agent --------------------------------------------------------------------------

    def _agent_node(
        self, node: AgentNode, value: Any, scope: Scope, buffer: list, past: NodeHistory
    ) -> Any:
        self._check_schema(
            node.input_schema, value, f"agent node `{node.id}`: its input", "input_schema"
        )
        output = self._agent_loop(node.id, node.agent_hash, value, scope, buffer, past)
        self._check_schema(
            node.output_schema, output, f"agent node `{node.id}`: its output", "output_schema"
        )
        return output

    def _agent_loop(
        self,
        node_id: str,
        agent_hash: str,
        value: Any,
        scope: Scope,
        buffer: list,
        past: NodeHistory,
    ) -> Any:
        definition = self.installation.agents.get(agent_hash)
        assert definition is not None  # resolve_names checked it
        provider = self.installation.providers.provider_for(definition.model)
        assert provider is not None
        tools = tuple(self.installation.tools.get(name) for name in definition.tools)
        offered = {spec.name: spec for spec in tools if spec is not None}
        max_steps = past.raised_limits.get("steps", definition.budget.get("max_steps"))
        max_tokens = past.raised_limits.get("tokens", definition.budget.get("max_tokens"))
        messages: list[dict[str, Any]] = [{"role": "user", "content": compact_json(value)}]
        tokens = 0
        tool_number = 0
        step = 0
        while True:
            if max_steps is not None and step >= max_steps:
                raise _Parked(
                    [
                        (
                            "BudgetExceeded",
                            _payload(
                                node_id,
                                scope,
                                budget={"kind": "steps", "limit": max_steps},
                                observed=step,
                            ),
                        )
                    ]
                )
            reply, usage_tokens = self._model_call(
                definition,
                provider,
                node_id,
                scope,
                step,
                messages,
                tuple(offered.values()),
                buffer,
                past,
            )
            step += 1
            tokens += usage_tokens
            # Checked as soon as the usage is known: no tool call runs past a crossed budget.
            if max_tokens is not None and tokens > max_tokens:
                raise _Parked(
                    [
                        (
                            "BudgetExceeded",
                            _payload(
                                node_id,
                                scope,
                                budget={"kind": "tokens", "limit": max_tokens},
                                observed=tokens,
                            ),
                        )
                    ]
                )
            if reply.tool_calls:
                messages.append(
                    {
                        "role": "assistant",
                        "content": reply.content,
                        "tool_calls": reply.as_json()["tool_calls"],
                    }
                )
                for call in reply.tool_calls:
                    spec = offered.get(call.name)
                    if spec is None:
                        raise _Failure(
                            f"agent node `{node_id}`: the model asked for the tool `{call.name}`, "
                            f"which its agent does not list"
                        )
                    result = self._tool_call(
                        spec,
                        node_id,
                        call.arguments,
                        scope,
                        tool_number,
                        buffer,
                        past,
                        f"agent node `{node_id}`: the tool `{call.name}` failed",
                    )
                    tool_number += 1
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": compact_json(result)}
                    )
            if not reply.tool_calls:
                return _reply_value(reply.content)

    def _model_call(
        self,
        definition: AgentDefinition,
        provider: Any,
        node_id: str,
        scope: Scope,
        number: int,
        messages: list[dict[str, Any]],
        tools: tuple[ToolSpec, ...],
        buffer: list,
        past: NodeHistory,
    ) -> tuple[ModelReply, int]:
        recorded = past.model_calls.get(number) or CallHistory()
        if recorded.completed is not None:
            reply = ModelReply.from_json(
                recorded.completed.get("reply") or {}, recorded.completed.get("usage")
            )
            return reply, reply.usage.input_tokens + reply.usage.output_tokens
        key = hash_value(
            {"run": self.run_id, "node": node_id, "scope": _scope_json(scope), "model_call": number}
        )
        if recorded.requested is None:
            buffer.append(
                (
                    "ModelCallRequested",
                    _payload(
                        node_id, scope, model=definition.model, call=number, idempotency_key=key
                    ),
                )
            )
        self.flush(buffer)
        request = ModelRequest(
            model=definition.model,
            system=definition.prompt,
            messages=tuple(messages),
            tools=tools,
            options=dict(definition.options),
            cursor=number,
            idempotency_key=key,
            timeout=self.limits.model_timeout,
        )
        try:
            reply = self._call_with_timeout(
                lambda: provider.complete(request),
                self.limits.model_timeout,
                f"agent node `{node_id}`: the model call took longer than "
                f"{self.limits.model_timeout:g} s (GATEHOUSE_MODEL_TIMEOUT)",
            )
        except ProviderError as error:
            raise _Failure(f"agent node `{node_id}`: {error}") from error
        except _Failure:
            raise
        except Exception as error:
            raise _Failure(f"agent node `{node_id}`: {_message(error)}") from error
        usage = {
            "input_tokens": reply.usage.input_tokens,
            "output_tokens": reply.usage.output_tokens,
        }
        buffer.append(
            (
                "ModelCallCompleted",
                _payload(node_id, scope, call=number, reply=reply.as_json(), usage=usage),
            )
        )
        return reply, reply.usage.input_tokens + reply.usage.output_tokens

    # gate ---------------------------------------------------------------------------

    def _gate(self, node: GateNode, value: Any, scope: Scope, past: NodeHistory) -> Any:
        if past.resumed is not None:
            return past.resumed.get("input")
        reason = node.prompt or f"approval required at gate `{node.id}`"
        raise _Parked(
            [
                (
                    "Suspended",
                    _payload(
                        node.id,
                        scope,
                        reason=reason,
                        input_schema=node.approval_schema,
                        value=value,
                    ),
                )
            ]
        )

    # branch -------------------------------------------------------------------------

    def _pick_case(self, node: BranchNode, value: Any) -> str:
        target = value if node.on is None else parse_reference(node.on).resolve(value)
        for case in node.cases:
            if isinstance(case.when, ModelDecision):
                continue
            if parse_expression(case.when.expression).evaluate(target):
                return case.name
        raise _Failure(f"branch node `{node.id}`: no case condition matched the routed value")

    def _decide(
        self, node: BranchNode, value: Any, scope: Scope, buffer: list, past: NodeHistory
    ) -> str:
        assert node.agent_hash is not None
        output = self._agent_loop(node.id, node.agent_hash, value, scope, buffer, past)
        reply = output.strip() if isinstance(output, str) else compact_json(output)
        names = [case.name for case in node.cases]
        if reply not in names:
            raise _Failure(
                f"branch node `{node.id}`: the decision agent replied `{reply}`, which is not "
                f"one of the cases [{', '.join(names)}]"
            )
        return reply

    # map ----------------------------------------------------------------------------

    def _map_items(self, node: MapNode, value: Any) -> list[Any]:
        items = parse_reference(node.over).resolve(value)
        if not isinstance(items, list):
            raise _Failure(
                f"map node `{node.id}`: the `over` reference `{node.over}` did not resolve "
                f"to a list"
            )
        if len(items) > self.limits.max_map_items:
            raise _Failure(
                f"map node `{node.id}`: {len(items)} items is more than "
                f"{self.limits.max_map_items} (GATEHOUSE_RUN_MAX_MAP_ITEMS)",
                "limit_exceeded",
            )
        return items

    def _body(self, graph: Graph, owner: MapNode | FoldNode) -> Callable[[Any, Scope, list], Any]:
        body = owner.body
        if isinstance(body, SubgraphBody):
            return lambda value, scope, buffer: self.walk(body.graph, value, scope, buffer)
        target = next(node for node in graph.nodes if node.id == body.node)
        return lambda value, scope, buffer: self.run_node(graph, target, value, scope, buffer)[0]

    def _map(
        self,
        graph: Graph,
        node: MapNode,
        items: list[Any],
        scope: Scope,
        buffer: list,
        past: NodeHistory,
    ) -> Any:
        if not past.fanned_out:
            buffer.append(("MapFannedOut", _payload(node.id, scope, items=len(items))))
        self.flush(buffer)  # the fan-out is on record before any item's events
        run_body = self._body(graph, node)
        outputs: list[Any] = [None] * len(items)
        failures: dict[int, BaseException] = {}
        parkings: dict[int, list] = {}
        stop = threading.Event()

        def run_item(index: int) -> None:
            item_scope = (*scope, (node.id, index))
            item_buffer: list[tuple[str, dict[str, Any]]] = []
            try:
                if index not in past.iterations_started:
                    child = hash_value({"parent_run": self.run_id, "node": node.id, "index": index})
                    item_buffer.append(
                        (
                            "MapIterationStarted",
                            _payload(node.id, scope, index=index, child_run=child),
                        )
                    )
                outputs[index] = run_body(items[index], item_scope, item_buffer)
                if index not in past.iterations_joined:
                    item_buffer.append(
                        ("MapIterationJoined", _payload(node.id, scope, index=index))
                    )
                self.flush(item_buffer)
            except _Parked as parked:
                self.flush(item_buffer)
                parkings[index] = parked.events
            except BaseException as error:
                failures[index] = error
                stop.set()
                if not isinstance(error, RunLost):
                    # The first failure is the one reported; a second one while recording
                    # this item's last events changes nothing.
                    with contextlib.suppress(BaseException):
                        self.flush(item_buffer)

        concurrency = max(1, min(node.concurrency, len(items)))
        if concurrency == 1:
            for index in range(len(items)):
                if stop.is_set():
                    break
                run_item(index)
        else:
            self._fan_out(run_item, len(items), concurrency, stop)
        if failures:
            error = failures[min(failures)]
            raise error
        if parkings:
            raise _Parked([event for index in sorted(parkings) for event in parkings[index]])
        self._check_schema(
            node.output_schema, outputs, f"map node `{node.id}`: its output", "output_schema"
        )
        return outputs

    def _fan_out(
        self, run_item: Callable[[int], None], count: int, concurrency: int, stop: threading.Event
    ) -> None:
        """Run items ``0..count-1`` on ``concurrency`` threads, starting them in index order."""
        indexes: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(count):
            indexes.put(index)

        def worker() -> None:
            try:
                while not stop.is_set():
                    try:
                        index = indexes.get_nowait()
                    except queue.Empty:
                        return
                    run_item(index)
            finally:
                self.store.release_thread()

        threads = [
            threading.Thread(target=worker, name=f"gatehouse-map-{n}", daemon=True)
            for n in range(concurrency)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    # fold ---------------------------------------------------------------------------

    def _fold(
        self,
        graph: Graph,
        node: FoldNode,
        value: Any,
        scope: Scope,
        buffer: list,
        past: NodeHistory,
    ) -> Any:
        run_body = self._body(graph, node)
        stop_when = parse_expression(node.stop_when)
        outputs: list[Any] = []
        held = False
        current = value
        for index in range(node.max_iterations):
            pass_scope = (*scope, (node.id, index))
            if index not in past.iterations_started:
                buffer.append(("FoldIterationStarted", _payload(node.id, scope, index=index)))
            current = run_body(current, pass_scope, buffer)
            if node.accumulator_schema is not None:
                problem = first_violation(node.accumulator_schema, current)
                if problem is not None:
                    raise _Failure(
                        f"fold node `{node.id}`: pass {index}'s output does not match its "
                        f"accumulator_schema: {problem}"
                    )
            if index not in past.iterations_joined:
                buffer.append(("FoldIterationJoined", _payload(node.id, scope, index=index)))
            outputs.append(current)
            if stop_when.evaluate(current):
                held = True
                break
        if not outputs:  # max_iterations 0: nothing ran (validation normally refuses it)
            winner, output = -1, None
        elif isinstance(node.join, BestBy):
            winner = _best_by(node, outputs)
            output = outputs[winner]
        elif isinstance(node.join, JoinAll):
            winner, output = len(outputs) - 1, outputs
        else:
            winner, output = len(outputs) - 1, outputs[-1]
        if not past.converged:
            buffer.append(
                (
                    "FoldConverged",
                    _payload(
                        node.id, scope, winner_index=winner, reason="stop_when" if held else "bound"
                    ),
                )
            )
        return output

    # schemas ------------------------------------------------------------------------

    def _check_schema(self, schema: Any, value: Any, what: str, field: str) -> None:
        if schema is None:
            return
        problem = first_violation(schema, value)
        if problem is not None:
            raise _Failure(f"{what} does not match its {field}: {problem}")


def _best_by(node: FoldNode, outputs: list[Any]) -> int:
    assert isinstance(node.join, BestBy)
    reference = parse_reference(node.join.reference)
    values = [reference.resolve(output) for output in outputs]
    numbers = any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    wanted = (int, float) if numbers else (str,)
    best: int | None = None
    for index, candidate in enumerate(values):
        if isinstance(candidate, bool) or not isinstance(candidate, wanted):
            continue
        if best is None or (compare(candidate, values[best]) or 0) > 0:
            best = index
    if best is None:
        raise _Failure(
            f"fold node `{node.id}`: the `best_by` join reference `{node.join.reference}` named "
            f"no comparable value in any pass"
        )
    return best


def _reply_value(content: str | None) -> Any:
    """An agent's output: its final reply parsed as JSON when it is JSON, else the text."""
    if content is None:
        return None
    try:
        return read_json(content)
    except JsonError:
        return content


def _message(error: BaseException) -> str:
    text = str(error).strip()
    return text or type(error).__name__


def hash_value_bytes(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()
