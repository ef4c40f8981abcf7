"""Maps and folds (spec 04, *map* and *fold*): items on threads, passes in sequence.

A mixin of the drive (:mod:`editor.engine.runner`).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from editor.engine.errors import RunLost
from editor.engine.history import NodeHistory, Scope
from editor.engine.schemas import first_violation
from editor.engine.steps import Buffer, DriveState, Parked, StepFailed, event_payload
from editor.graph import (
    FoldNode,
    Graph,
    MapNode,
    hash_value,
    parse_expression,
    parse_reference,
)
from editor.graph.expressions import compare
from editor.graph.model import BestBy, JoinAll, SubgraphBody

__all__ = ["IterationSteps"]


if TYPE_CHECKING:
    _DriveBase = DriveState
else:
    _DriveBase = object


class IterationSteps(_DriveBase):
    """The drive's map and fold nodes; only ever mixed into :class:`editor.engine.runner._Drive`."""

    # map ----------------------------------------------------------------------------

    def _map_items(self, node: MapNode, value: Any) -> list[Any]:
        items = parse_reference(node.over).resolve(value)
        if not isinstance(items, list):
            raise StepFailed(
                f"map node `{node.id}`: the `over` reference `{node.over}` did not resolve "
                f"to a list"
            )
        if len(items) > self.limits.max_map_items:
            raise StepFailed(
                f"map node `{node.id}`: {len(items)} items is more than "
                f"{self.limits.max_map_items} (GATEHOUSE_RUN_MAX_MAP_ITEMS)",
                "limit_exceeded",
            )
        return items

    def _body(self, graph: Graph, owner: MapNode | FoldNode) -> Callable[[Any, Scope, Buffer], Any]:
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
        buffer: Buffer,
        past: NodeHistory,
    ) -> Any:
        if not past.fanned_out:
            buffer.append(("MapFannedOut", event_payload(node.id, scope, items=len(items))))
        self.flush(buffer)  # the fan-out is on record before any item's events
        run_body = self._body(graph, node)
        outputs: list[Any] = [None] * len(items)
        failures: dict[int, BaseException] = {}
        parkings: dict[int, Buffer] = {}
        stop = threading.Event()

        def run_item(index: int) -> None:
            item_scope = (*scope, (node.id, index))
            item_buffer: Buffer = []
            try:
                self.check_wall_time()
                if index not in past.iterations_started:
                    child = hash_value({"parent_run": self.run_id, "node": node.id, "index": index})
                    item_buffer.append(
                        (
                            "MapIterationStarted",
                            event_payload(node.id, scope, index=index, child_run=child),
                        )
                    )
                outputs[index] = run_body(items[index], item_scope, item_buffer)
                if index not in past.iterations_joined:
                    item_buffer.append(
                        ("MapIterationJoined", event_payload(node.id, scope, index=index))
                    )
                self.flush(item_buffer)
            except Parked as parked:
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

        if not past.fanned_out:
            self.count_map_items(len(items))
        concurrency = max(1, min(node.concurrency, self.limits.map_concurrency, len(items)))
        self._fan_out(run_item, len(items), concurrency, stop)
        if failures:
            error = failures[min(failures)]
            raise error
        if parkings:
            raise Parked([event for index in sorted(parkings) for event in parkings[index]])
        self.check_schema(
            node.output_schema, outputs, f"map node `{node.id}`: its output", "output_schema"
        )
        return outputs

    def _fan_out(
        self, run_item: Callable[[int], None], count: int, concurrency: int, stop: threading.Event
    ) -> None:
        """Run items ``0..count-1``, in index order, on at most ``concurrency`` threads: this
        one, and helpers taken from the drive's pool of map threads
        (``GATEHOUSE_RUN_MAP_CONCURRENCY`` in all, nested maps included). When the pool is
        used up (an inner map of a wide outer one) the map runs on fewer threads, down to this
        one alone: it never waits for a thread, so nesting cannot deadlock.

        Each helper takes item after item and keeps its database connection between them; it
        gives the connection back (``store.release_thread``) when the map has no item left."""
        indexes: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(count):
            indexes.put(index)

        def take_items() -> None:
            while not stop.is_set():
                try:
                    index = indexes.get_nowait()
                except queue.Empty:
                    return
                run_item(index)

        def helper() -> None:
            try:
                take_items()
            finally:
                self.store.release_thread()

        taken = self.take_map_threads(concurrency - 1)
        threads = [
            threading.Thread(target=helper, name=f"gatehouse-map-{n}", daemon=True)
            for n in range(taken)
        ]
        try:
            for thread in threads:
                thread.start()
            take_items()
        finally:
            for thread in threads:
                thread.join()
            self.give_map_threads(taken)

    # fold ---------------------------------------------------------------------------

    def _fold(
        self,
        graph: Graph,
        node: FoldNode,
        value: Any,
        scope: Scope,
        buffer: Buffer,
        past: NodeHistory,
    ) -> Any:
        run_body = self._body(graph, node)
        stop_when = parse_expression(node.stop_when)
        outputs: list[Any] = []
        held = False
        current = value
        for index in range(node.max_iterations):
            self.check_wall_time()
            pass_scope = (*scope, (node.id, index))
            if index not in past.iterations_started:
                buffer.append(("FoldIterationStarted", event_payload(node.id, scope, index=index)))
            current = pass_value(run_body(current, pass_scope, buffer))
            if node.accumulator_schema is not None:
                problem = first_violation(node.accumulator_schema, current)
                if problem is not None:
                    raise StepFailed(
                        f"fold node `{node.id}`: pass {index}'s output does not match its "
                        f"accumulator_schema: {problem}"
                    )
            if index not in past.iterations_joined:
                buffer.append(("FoldIterationJoined", event_payload(node.id, scope, index=index)))
            outputs.append(current)
            if stop_when.evaluate(current):
                held = True
                break
        if not held and outputs and node.on_bound == "fail":
            # Every pass stays on record; no FoldConverged, no NodeExited (spec 08, section 2).
            raise StepFailed(
                f"fold node `{node.id}`: reached the max_iterations bound of "
                f"{node.max_iterations} without `stop_when` holding, and this fold declares "
                "`on_bound: fail`",
                "fold_bound_exceeded",
            )
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
                    event_payload(
                        node.id, scope, winner_index=winner, reason="stop_when" if held else "bound"
                    ),
                )
            )
        return output


def pass_value(output: Any) -> Any:
    """What a fold reads of a pass: an MCP result envelope (an object with a ``content`` array
    and a ``structuredContent`` key) counts as its ``structuredContent``; anything else
    counts whole (the reference's ``unwrap_pass_output``)."""
    if (
        type(output) is dict
        and type(output.get("content")) is list
        and "structuredContent" in output
    ):
        return output["structuredContent"]
    return output


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
        raise StepFailed(
            f"fold node `{node.id}`: the `best_by` join reference `{node.join.reference}` named "
            f"no comparable value in any pass"
        )
    return best
