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

The node kinds live beside it: tool and agent nodes in :mod:`editor.engine.calls`, maps and
folds in :mod:`editor.engine.iteration`; gates and branches are short and stay here.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from editor.engine.calls import CallSteps
from editor.engine.errors import RunLost
from editor.engine.history import History, NodeHistory, Scope
from editor.engine.iteration import IterationSteps
from editor.engine.ports import (
    Clock,
    Envelope,
    Installation,
    Limits,
    RunRecord,
    RunStore,
    SystemClock,
)
from editor.engine.records import park_again, timestamp
from editor.engine.resolution import resolve_names
from editor.engine.schemas import first_violation
from editor.engine.states import PARKED, TERMINAL, RunState
from editor.engine.status import StatusFold, instant, run_status
from editor.engine.steps import (
    Buffer,
    Parked,
    StepFailed,
    compact_json,
    event_payload,
)
from editor.graph import (
    AgentNode,
    BranchNode,
    DelayNode,
    FoldNode,
    GateNode,
    Graph,
    MapNode,
    ToolNode,
    hash_bytes,
    parse_document,
    parse_expression,
    parse_reference,
)
from editor.graph.model import Edge, ModelDecision, Node, NodeBody

#: The last instant a wake can be recorded at (RFC 3339 holds four-digit years).
LAST_INSTANT = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)

__all__ = ["Engine", "compact_json"]

SKIP_REASON = "no live inbound edge: an upstream branch routed to another case"


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

    def drive(self, run_id: str, *, started: Callable[[float], None] | None = None) -> str:
        """Drive ``run_id`` until it parks, ends or is lost; return the state it is left in.

        ``started`` is called once the run is loaded, with the seconds left of its wall time
        (the worker's watchdog sets its deadline from it)."""
        record = self.store.load_run(run_id)
        drive = _Drive(self, record)
        if started is not None:
            started(drive.remaining_time())
        return drive.run()


class _Drive(CallSteps, IterationSteps):
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
        # The payloads recorded so far, against GATEHOUSE_RUN_MAX_BYTES (checked like the
        # event cap: an append that would pass it fails the run instead).
        self.recorded_bytes = sum(len(orjson.dumps(event.payload)) for event in record.events)
        self.lock = threading.Lock()
        self.lost = False
        self.visited = self.history.visited
        # Map items the run fanned out: one visit each is bounded by the item cap, not by the
        # node limit, so that a map of exactly GATEHOUSE_RUN_MAX_MAP_ITEMS items can finish.
        self.map_items = self.history.map_items
        # Helper threads maps may still start in this drive (the drive's own thread is one).
        self.map_threads = max(0, self.limits.map_concurrency - 1)
        self.started_at = self.clock.monotonic()
        self.running_before = self.history.running_seconds_until(self.clock.now())

    # --- appending -------------------------------------------------------------------

    def flush(self, buffer: Buffer, *, check_size: bool = True) -> None:
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

    def _append(self, buffer: Buffer, check_size: bool = True) -> None:
        """Append events as one atomic step (the caller holds the lock)."""
        if self.lost:
            raise RunLost("the run was lost to another writer")
        envelopes = []
        now = timestamp(self.clock.now())
        limit = self.limits.max_event_bytes
        run_limit = self.limits.max_run_bytes
        total = self.recorded_bytes
        for offset, (kind, payload) in enumerate(buffer):
            size = len(orjson.dumps(payload))
            if check_size and limit and size > limit:
                raise StepFailed(
                    f"an event payload ({kind}) is larger than {limit} bytes "
                    f"(GATEHOUSE_EVENT_MAX_BYTES)",
                    "limit_exceeded",
                )
            total += size
            if check_size and run_limit and total > run_limit:
                raise StepFailed(
                    f"the run's events would come to more than {run_limit} bytes in all "
                    f"(GATEHOUSE_RUN_MAX_BYTES) with this {kind}",
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
        self.recorded_bytes = total

    # --- the drive -------------------------------------------------------------------

    def run(self) -> str:
        state = RunState(self.fold.status()["state"])
        if state in TERMINAL or state in PARKED:
            return state.value
        if state is RunState.SLEEPING and not self._due():
            return state.value  # early (an early task, a skewed clock): nothing is recorded
        if self.fold.pending:
            # Running with items still open (a resolution the services recorded without the
            # parking that must follow it): park again at the oldest; nothing else to do.
            return self._park_again()
        buffer: Buffer = []
        try:
            try:
                self.check_wall_time()  # a re-drive of a run that overran fails at once
                graph = self._load_graph()
                output = self.walk(graph, self.record.input, (), buffer)
                buffer.append(("RunCompleted", {"output": output}))
            except Parked as parked:
                buffer.extend(parked.events)
            except StepFailed as failure:
                buffer.append(("RunFailed", failure.payload()))
            try:
                self.flush(buffer)
            except StepFailed as failure:  # an event of the last step is over the size limit
                # The run must end on record even when its own message is over the limit.
                self.flush([("RunFailed", failure.payload())], check_size=False)
        except RunLost:
            # Someone else moved the run on (an abandon, a resume): report where it is now.
            return str(run_status(self.store.load_run(self.run_id).events)["state"])
        return self._state()

    def _due(self) -> bool:
        """Whether the sleeping run's recorded ``wake_at`` has come, by this drive's clock."""
        wake_at = instant((self.fold.sleep or {}).get("wake_at"))
        return wake_at is not None and self.clock.now() >= wake_at

    def _state(self) -> str:
        state: str = self.fold.status()["state"]
        return state

    def _park_again(self) -> str:
        events = self.store.load_run(self.run_id).events
        again = park_again(events, run_status(events), self.clock.now())
        if again is not None:
            try:
                self.flush([(again.kind, again.payload)], check_size=False)
            except RunLost:
                return str(run_status(self.store.load_run(self.run_id).events)["state"])
        return self._state()

    def _load_graph(self) -> Graph:
        graph_hash = self.record.graph_hash
        data = self.store.load_graph(graph_hash)
        if data is None:
            raise StepFailed(f"the graph `{graph_hash}` is not stored here", "unknown_graph")
        if hash_bytes(data) != graph_hash:
            raise StepFailed(
                f"the stored graph does not match its hash `{graph_hash}`: it was changed "
                f"after it was frozen",
                "fingerprint_mismatch",
            )
        graph = parse_document(data)
        problems = resolve_names(graph, self.installation)
        if problems:
            raise StepFailed(problems[0]["message"], problems[0]["code"])
        return graph

    def _check_limits(self) -> None:
        limit = self.limits.max_nodes_visited
        with self.lock:
            self.visited += 1
            visited = self.visited
            allowance = min(self.map_items, self.limits.max_map_items)
        if visited > limit + allowance:
            besides = (
                f", besides one for each of its first {allowance} map items" if allowance else ""
            )
            raise StepFailed(
                f"the run visited more than {limit} nodes (GATEHOUSE_RUN_MAX_NODES){besides}",
                "limit_exceeded",
            )
        self.check_wall_time()

    def count_map_items(self, count: int) -> None:
        with self.lock:
            self.map_items += count

    def take_map_threads(self, wanted: int) -> int:
        """Take up to ``wanted`` helper threads from the drive's pool; how many were taken."""
        with self.lock:
            taken = max(0, min(wanted, self.map_threads))
            self.map_threads -= taken
        return taken

    def give_map_threads(self, count: int) -> None:
        with self.lock:
            self.map_threads += count

    def remaining_time(self) -> float:
        """Seconds left of the run's wall time (``GATEHOUSE_RUN_WALL_TIME``; time in
        `running` only); negative once it is spent."""
        elapsed = self.running_before + self.clock.monotonic() - self.started_at
        return self.limits.wall_time - elapsed

    def check_wall_time(self) -> None:
        """Fail the run once its wall time is spent: checked at the start of a drive, before
        each node, model call, tool call, map item and fold pass, and after each schema check,
        so expression evaluation, schema checks and calls all count against it."""
        if self.remaining_time() < 0:
            raise self.wall_time_spent()

    def wall_time_spent(self) -> StepFailed:
        return StepFailed(
            f"the run has been running for more than {self.limits.wall_time:g} s "
            f"(GATEHOUSE_RUN_WALL_TIME)",
            "limit_exceeded",
        )

    # --- the walk (exact) ------------------------------------------------------------

    def walk(self, graph: Graph, value: Any, scope: Scope, buffer: Buffer) -> Any:
        bodies = {
            node.body.node
            for node in graph.nodes
            if isinstance(node, (MapNode, FoldNode)) and isinstance(node.body, NodeBody)
        }
        by_id = {node.id: node for node in graph.nodes}
        walked = [node.id for node in graph.nodes if node.id not in bodies]
        walked_set = set(walked)
        inbound: dict[str, list[Edge]] = {node_id: [] for node_id in walked}
        outbound: dict[str, list[Edge]] = {node_id: [] for node_id in walked}
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
        # The run's output is the last output a node produced in the walk's order, or the
        # input when no node ran (the reference's `last_output`): a skipped node changes nothing.
        last_output = value
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
                last_output = output
                if case is not None:
                    cases[node_id] = case
            else:
                skipped.add(node_id)
                if not self.history.get(scope, node_id).skipped:
                    buffer.append(
                        ("NodeSkipped", event_payload(node_id, scope, reason=SKIP_REASON))
                    )
            for edge in outbound[node_id]:
                indegree[edge.target] -= 1
                if indegree[edge.target] == 0:
                    heapq.heappush(ready, edge.target)
        return last_output

    # --- nodes -----------------------------------------------------------------------

    def run_node(
        self, graph: Graph, node: Node, value: Any, scope: Scope, buffer: Buffer
    ) -> tuple[Any, str | None]:
        """Run one node on its routed value; return its output and, for a branch, its case.
        A failure names the node it happened at (``RunFailed.node``, and ``scope``)."""
        try:
            return self._run_node(graph, node, value, scope, buffer)
        except StepFailed as failure:
            failure.at_node(node.id, scope)
            raise

    def _run_node(
        self, graph: Graph, node: Node, value: Any, scope: Scope, buffer: Buffer
    ) -> tuple[Any, str | None]:
        past = self.history.get(scope, node.id)
        if past.exited:
            return past.output, past.case
        if not scope and node.id in self.record.pins:
            return self._pinned(node, past, buffer), None
        case: str | None = None
        if isinstance(node, BranchNode) and node.agent_hash is None:
            case = self._pick_case(node, value)  # before NodeEntered: its failure is exact
        if isinstance(node, MapNode):
            items = self._map_items(node, value)  # likewise
        if not past.entered:
            self._check_limits()
            buffer.append(("NodeEntered", event_payload(node.id, scope)))
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
                buffer.append(("BranchTaken", event_payload(node.id, scope, case=case)))
            output = value
        elif isinstance(node, MapNode):
            output = self._map(graph, node, items, scope, buffer, past)
        elif isinstance(node, DelayNode):
            output = self._delay(node, value, scope, buffer, past)
        else:
            output = self._fold(graph, node, value, scope, buffer, past)
        buffer.append(("NodeExited", event_payload(node.id, scope, output=output)))
        return output, case

    def _pinned(self, node: Node, past: NodeHistory, buffer: Buffer) -> Any:
        """A test run's pinned node: its pinned output stands for running it, recorded as
        such (``NodeExited.pinned``). Only top-level nodes are pinned (a map's body runs once
        per item); a branch is never pinned (its case is its decision, not an output)."""
        output = self.record.pins[node.id]
        if not past.entered:
            self._check_limits()
            buffer.append(("NodeEntered", event_payload(node.id, ())))
        buffer.append(("NodeExited", event_payload(node.id, (), output=output, pinned=True)))
        return output

    # delay --------------------------------------------------------------------------

    def _delay(
        self, node: DelayNode, value: Any, scope: Scope, buffer: Buffer, past: NodeHistory
    ) -> Any:
        """NowObserved, SleepStarted and park; at the first drive at or after ``wake_at``,
        SleepCompleted, and the input passes through (spec 08, section 1). The clock is read
        once per delay, ever: a re-drive derives ``wake_at`` from the recorded ``now``."""
        if past.sleep_completed:
            return value
        if past.sleep_started is not None:
            wake_at = instant(past.sleep_started.get("wake_at"))
            if wake_at is None or self.clock.now() < wake_at:
                raise Parked([])
            buffer.append(("SleepCompleted", event_payload(node.id, scope)))
            return value
        now_text = past.now_observed
        if now_text is None:
            now_text = timestamp(self.clock.now())
            buffer.append(("NowObserved", {"now": now_text}))
        observed = instant(now_text)
        assert observed is not None  # written by timestamp()
        if node.seconds > (LAST_INSTANT - observed).total_seconds():
            raise StepFailed(
                f"delay node `{node.id}`: a wait of {node.seconds} seconds ends after "
                "9999-12-31T23:59:59Z, the last instant this server can record",
                "limit_exceeded",
            )
        wake_at_text = timestamp(observed + timedelta(seconds=node.seconds))
        raise Parked([("SleepStarted", event_payload(node.id, scope, wake_at=wake_at_text))])

    # gate ---------------------------------------------------------------------------

    def _gate(self, node: GateNode, value: Any, scope: Scope, past: NodeHistory) -> Any:
        if past.resumed is not None:
            return past.resumed.get("input")
        reason = node.prompt or f"approval required at gate `{node.id}`"
        raise Parked(
            [
                (
                    "Suspended",
                    event_payload(
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
        raise StepFailed(f"branch node `{node.id}`: no case condition matched the routed value")

    def _decide(
        self, node: BranchNode, value: Any, scope: Scope, buffer: Buffer, past: NodeHistory
    ) -> str:
        assert node.agent_hash is not None
        output = self._agent_loop(node.id, node.agent_hash, value, scope, buffer, past)
        reply = output.strip() if isinstance(output, str) else compact_json(output)
        names = [case.name for case in node.cases]
        if reply not in names:
            raise StepFailed(
                f"branch node `{node.id}`: the decision agent replied `{reply}`, which is not "
                f"one of the cases [{', '.join(names)}]"
            )
        return reply

    # schemas ------------------------------------------------------------------------

    def check_schema(self, schema: Any, value: Any, what: str, field: str) -> None:
        if schema is None:
            return
        problem = first_violation(schema, value)
        if problem is not None:
            raise StepFailed(f"{what} does not match its {field}: {problem}")
        self.check_wall_time()  # the check's own time counts against the run's
