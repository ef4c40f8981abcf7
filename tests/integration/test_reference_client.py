"""The reference's own Python client (``salvor`` 0.10.0) against Gatehouse, and nothing else.

A real server (gunicorn with uvicorn workers, as the image runs it) and real ``db_worker``
processes, on a database of their own: a SQLite file, or on PostgreSQL (CI's second pass) a
database created for this module on the same server and dropped after it. Everything the tests
do goes through ``salvor.Client`` and ``salvor.AsyncClient``: graphs submitted, validated,
listed and read; an agent registered from the reference's TOML agent file; a run streamed to its
gate, resumed, streamed to the end; its graph projection and replay; more than fifty runs
listed; an agent run started (``start_run``) and streamed to its end; a run abandoned; a write
cut off by a killed worker resolved by hand; a failed run forked from its failed node, and a
fork over a recorded write previewed, refused and then acknowledged (``preview_fork``,
``fork_run``, ``list_forks``); and 0.10's additions: a document built with
``GraphBuilder.delay`` and ``fold(…, on_bound="fail")``, a stream that ends on the sleeping run,
its ``wake_at`` and ``overdue`` in ``get_run``, a resume answered ``still_sleeping``, and a run
overdue then failed at its fold's bound, each with the synchronous and the asynchronous client.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import salvor
from salvor import (
    ForkPreview,
    ForkResult,
    ForksIndex,
    GraphBuilder,
    SalvorAPIError,
)
from salvor.graph import fold_node, last

from tests.faults.processes import wait_until
from tests.integration.deployments import Deployment, deployed
from tests.integration.runs.fork_tools import FLAKY, WRITING, calls

SUBJECT = {"topic": "tea"}

#: The reference's agent file, as a user of the reference writes one (echo: offline).
DRAFTER_TOML = """\
# Drafts a note on the topic it is given.
model = "echo"
name = "drafter"
system_prompt = "Draft a short note on the topic you are given."

[budgets]
steps = 3

[output_schema]
type = "object"
required = ["topic"]
"""

APPROVAL = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}},
    "required": ["approved"],
}


def drafted(agent: str) -> dict[str, Any]:
    """draft (the agent) → review (a gate) → publish (echo)."""
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "agent", "payload": {"id": "draft", "agent_hash": agent}},
            {
                "kind": "gate",
                "payload": {"id": "review", "prompt": "Publish?", "approval_schema": APPROVAL},
            },
            {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
        ],
        "edges": [{"from": "draft", "to": "review"}, {"from": "review", "to": "publish"}],
    }


ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "publish"}],
}

#: call (a write that waits for a file: ``tests.integration.runs.slow_tools``) → after (echo).
HELD_WRITE = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "call", "tool": "hold_write"}},
        {"kind": "tool", "payload": {"id": "after", "tool": "echo"}},
    ],
    "edges": [{"from": "call", "to": "after"}],
}


# --- The server and its workers ---------------------------------------------------------------


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    tools = "tests.integration.runs.slow_tools,tests.integration.runs.fork_tools"
    with deployed("gatehouse-client-", {"GATEHOUSE_TOOL_MODULES": tools}) as running:
        yield running


# --- The synchronous client -------------------------------------------------------------------


def test_graphs_are_submitted_validated_listed_and_read(deployment: Deployment) -> None:
    with deployment.client() as client:
        submitted = client.submit_graph(ECHO_CHAIN)
        again = client.submit_graph(ECHO_CHAIN)
        checked = client.validate_graph(ECHO_CHAIN)
        broken = client.validate_graph({"schema_version": 1, "nodes": [], "edges": [{}]})
        listed = client.list_graphs()
        stored = client.get_graph(submitted.graph)
        with pytest.raises(SalvorAPIError) as unknown:
            client.get_graph("sha256:" + "0" * 64)

    assert submitted.created and not again.created and again.graph == submitted.graph
    assert checked.valid and checked.graph == submitted.graph
    assert checked.shape.entry_nodes == ["write"] and checked.shape.terminal_nodes == ["publish"]
    assert not broken.valid and broken.errors
    assert submitted.graph in [summary.graph for summary in listed]
    assert stored.document["nodes"] == ECHO_CHAIN["nodes"]
    assert unknown.value.code == "unknown_graph"


def test_an_agent_registered_from_its_toml_file_runs_to_the_gate_and_on_to_the_end(
    deployment: Deployment,
) -> None:
    with deployment.client() as client:
        agent = client.register_agent(DRAFTER_TOML)
        read_back = client.get_agent(agent)
        graph = client.submit_graph(drafted(agent)).graph
        run = client.start_graph_run(graph, SUBJECT, labels={"suite": "client"})

        to_gate = client.stream_events(run)
        seen = list(to_gate)
        assert to_gate.end is not None and to_gate.end.status is not None
        parked = to_gate.end.status
        resumed = client.resume(run, {"approved": True})
        rest = client.stream_events(run, from_seq=seen[-1].seq + 1)
        later = list(rest)
        state = client.get_run(run)
        projection = client.get_run_graph(run)
        replayed = client.replay(run)

    assert read_back["format"] == "toml" and read_back["source"] == DRAFTER_TOML
    assert agent in client_agents(deployment)
    kinds = [event.kind for event in seen]
    assert kinds[0] == "GraphRunStarted" and kinds[-1] == "Suspended"
    assert [event.seq for event in seen + later] == list(range(len(seen) + len(later)))
    assert parked.state == "suspended" and parked.reason == "Publish?"
    assert parked.input_schema == APPROVAL
    assert resumed.outcome == "driving"
    assert later[0].kind == "Resumed" and later[-1].kind == "RunCompleted"
    assert rest.end is not None and rest.end.status is not None
    # The gate's answer is what it passes on: publish (echo) returns it.
    assert rest.end.status.is_completed and rest.end.status.output == {"approved": True}
    assert state.status.output == {"approved": True}
    assert state.event_count == len(seen) + len(later)
    assert state.usage is not None and state.driver is None and state.pending is None
    assert state.first_recorded_at == seen[0].recorded_at
    assert state.last_recorded_at == later[-1].recorded_at
    assert {node.node: node.state for node in projection.nodes} == {
        "draft": "exited",
        "review": "exited",
        "publish": "exited",
    }
    assert replayed.status.is_completed and replayed.next_seq == state.event_count


def test_an_agent_run_is_started_streamed_to_its_end_and_listed_under_its_agent(
    deployment: Deployment,
) -> None:
    with deployment.client() as client:
        agent = client.register_agent(DRAFTER_TOML)
        run = client.start_run(agent, SUBJECT, labels={"suite": "agent-run"})
        stream = client.stream_events(run)
        seen = list(stream)
        state = client.get_run(run)
        [summary] = [row for row in client.list_runs() if row.run == run]
        with pytest.raises(SalvorAPIError) as unknown:
            client.start_run("sha256:" + "0" * 64, SUBJECT)

    assert stream.end is not None and stream.end.status.is_completed
    assert seen[-1].kind == "RunCompleted"
    assert state.status.is_completed and state.raw["agent_def_hash"] == agent
    assert summary.agent_def_hash == agent and summary.labels == {"suite": "agent-run"}
    assert unknown.value.status == 404 and unknown.value.code == "unknown_agent"


def client_agents(deployment: Deployment) -> list[str]:
    with deployment.client() as client:
        return client.list_agents()


def test_an_agent_file_naming_a_server_outside_the_catalogue_is_refused_naming_the_entry(
    deployment: Deployment,
) -> None:
    with deployment.client() as client, pytest.raises(SalvorAPIError) as refused:
        client.register_agent('model = "echo"\n\n[[mcp_servers]]\ncommand = "payouts"\n')

    assert refused.value.status == 400 and refused.value.code == "invalid_agent"
    assert [(error["code"], error["field"]) for error in refused.value.details["errors"]] == [
        ("unknown_mcp_server", "mcp_servers[0]")
    ]


def test_every_run_is_listed_however_many_there_are(deployment: Deployment) -> None:
    with deployment.client() as client:
        graph = client.submit_graph(ECHO_CHAIN).graph
        started = {client.start_graph_run(graph, {"n": n}) for n in range(55)}
        listed = client.list_runs()

    assert len(listed) >= 55
    assert started <= {summary.run for summary in listed}
    assert all(summary.labels is None for summary in listed if summary.run in started)


def test_a_run_is_abandoned_once_and_then_refused_as_in_the_wrong_state(
    deployment: Deployment,
) -> None:
    with deployment.client() as client:
        graph = client.submit_graph(drafted(client.register_agent(DRAFTER_TOML))).graph
        run = client.start_graph_run(graph, SUBJECT)
        stream = client.stream_events(run)
        parked = list(stream)
        receipt = client.abandon(run, "no longer needed")
        with pytest.raises(SalvorAPIError) as again:
            client.abandon(run)

    assert stream.end is not None and stream.end.status.state == "suspended"
    assert receipt.status.state == "abandoned" and receipt.status.reason == "no longer needed"
    assert receipt.appended_seq == parked[-1].seq + 1
    assert again.value.status == 409 and again.value.code == "wrong_state"
    assert again.value.details["reason"] == "already_finished"


def test_a_write_cut_off_by_a_killed_worker_is_resolved_by_hand(deployment: Deployment) -> None:
    release = deployment.folder / f"release-{uuid.uuid4().hex}"
    calls = deployment.folder / f"calls-{uuid.uuid4().hex}"
    with deployment.client() as client:
        graph = client.submit_graph(HELD_WRITE).graph
        run = client.start_graph_run(graph, {"release": str(release), "calls": str(calls)})
        with pytest.raises(SalvorAPIError) as nothing_to_resolve:
            client.resolve(run, {"released": True})

        # The write is requested and under way: its worker dies in the middle of it.
        live = client.stream_events(run)
        for event in live:
            if event.kind == "ToolCallRequested":
                break
        wait_until(lambda: calls.exists() and calls.read_text(), "the write was called")
        for worker in deployment.workers:
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        deployment.workers = [deployment.processes.worker()]

        rest = client.stream_events(run, from_seq=event.seq + 1)
        waited = list(rest)
        resolved = client.resolve(run, {"released": True})
        finished = client.stream_events(run, from_seq=waited[-1].seq + 1)
        tail = list(finished)

    assert nothing_to_resolve.value.code == "wrong_state"
    assert waited[-1].kind == "ReconciliationNeeded"
    assert rest.end is not None and rest.end.status.state == "needs_reconciliation"
    assert resolved.run == run and resolved.status.state == "running"
    assert tail[0].kind == "Reconciled" and tail[-1].kind == "RunCompleted"
    assert finished.end is not None and finished.end.status.output == {"released": True}
    assert not release.exists()  # the write itself never ran to its end


# --- Forks -------------------------------------------------------------------------------------


def _notes(deployment: Deployment) -> dict[str, str]:
    tag = uuid.uuid4().hex
    folder = deployment.folder
    return {"calls": str(folder / f"calls-{tag}"), "marker": str(folder / f"marker-{tag}")}


def test_a_failed_run_is_forked_from_its_failed_node_and_completes(deployment: Deployment) -> None:
    notes = _notes(deployment)
    with deployment.client() as client:
        graph = client.submit_graph(FLAKY).graph
        run = client.start_graph_run(graph, notes, labels={"team": "tea"})
        origin_events = list(client.stream_events(run))
        preview = client.preview_fork(run, "b")
        made = client.fork_run(run, "b")
        child_events = list(client.stream_events(made.run))
        forks = client.list_forks(run)
        projection = client.get_run_graph(made.run)
        child = client.get_run(made.run)

    entry = next(
        e.seq for e in origin_events if e.kind == "NodeEntered" and e.payload["node"] == "b"
    )
    assert origin_events[-1].kind == "RunFailed"
    assert isinstance(preview, ForkPreview)
    assert (preview.origin, preview.from_node, preview.graph_hash) == (run, "b", graph)
    assert preview.through_seq == entry - 1 and preview.prefix_event_count == entry
    assert preview.writes == [] and preview.unacknowledged_writes == []
    assert preview.would_proceed
    assert isinstance(made, ForkResult) and made.run != run
    assert made.forked_from is not None
    assert (made.forked_from.run_id, made.forked_from.from_node) == (run, "b")
    assert made.forked_from.through_seq == entry - 1
    assert made.forked_from.graph_hash == graph and made.forked_from.acknowledged_writes == []
    assert child_events[0].kind == "GraphRunStarted" and child_events[-1].kind == "RunCompleted"
    assert calls(Path(notes["calls"])) == {"a": 1, "b": 2, "c": 1}
    assert isinstance(forks, ForksIndex) and forks.run == run and forks.derived
    assert [(f.run, f.from_node, f.through_seq) for f in forks.forks] == [
        (made.run, "b", entry - 1)
    ]
    assert projection.forked_from is not None and projection.forked_from.run_id == run
    assert child.raw["labels"] == {"team": "tea"}


def test_a_fork_over_a_recorded_write_needs_its_acknowledgement(deployment: Deployment) -> None:
    notes = _notes(deployment)
    with deployment.client() as client:
        graph = client.submit_graph(WRITING).graph
        run = client.start_graph_run(graph, notes)
        list(client.stream_events(run))
        preview = client.preview_fork(run, "a")
        with pytest.raises(SalvorAPIError) as hazard:
            client.fork_run(run, "a")
        with pytest.raises(SalvorAPIError) as never:
            client.preview_fork(run, "ghost")
        (write,) = preview.writes
        acknowledged = client.preview_fork(run, "a", acknowledge_writes=[write.seq])
        made = client.fork_run(run, "a", acknowledge_writes=[write.seq])
        finished = list(client.stream_events(made.run))

    assert (write.tool, write.input, write.idempotency_key) == ("sends", notes, None)
    assert preview.unacknowledged_writes == [write.seq] and not preview.would_proceed
    assert hazard.value.status == 409 and hazard.value.code == "write_replay_hazard"
    assert [w["seq"] for w in hazard.value.details["writes"]] == [write.seq]
    assert never.value.code == "invalid_fork_node"
    assert acknowledged.would_proceed and acknowledged.unacknowledged_writes == []
    assert made.forked_from is not None and made.forked_from.acknowledged_writes == [write.seq]
    assert finished[-1].kind == "RunCompleted"
    assert calls(Path(notes["calls"])) == {"a": 2, "send": 2, "after": 2}


# --- Sleeping runs (0.10): the builder's delay and on_bound, the status, the stream's end -----


def waiting(builder: GraphBuilder, seconds: int) -> GraphBuilder:
    """note (echo) → cooloff (a delay of ``seconds``) → refine (a fold over echo that
    fails at its bound) → publish (echo), built with the reference's own builder."""
    return (
        builder.tool("note", "echo")
        .delay("cooloff", seconds, name="Cool off")
        .tool("step", "echo")
        .fold("refine", fold_node("step"), 2, "done == true", last(), on_bound="fail")
        .edge("note", "cooloff")
        .edge("cooloff", "refine")
    )


def test_a_built_delay_sleeps_the_stream_ends_on_it_and_a_resume_is_still_sleeping(
    deployment: Deployment,
) -> None:
    document = waiting(GraphBuilder(), 3600).build()
    wire = document.to_dict()
    assert wire["nodes"][1] == {
        "kind": "delay",
        "payload": {"id": "cooloff", "name": "Cool off", "seconds": 3600},
    }
    assert wire["nodes"][3]["payload"]["on_bound"] == "fail"
    with deployment.client() as client:
        submitted = client.submit_graph(document)
        run = client.start_graph_run(submitted.graph, {"done": False})
        stream = client.stream_events(run)
        seen = list(stream)
        state = client.get_run(run)
        with pytest.raises(SalvorAPIError) as early:
            client.resume(run, {"x": 1})
        listed = client.list_runs()

    assert submitted.created
    assert [event.kind for event in seen][-2:] == ["NowObserved", "SleepStarted"]
    assert stream.end is not None and stream.end.status is not None
    assert stream.end.status.state == "sleeping"
    assert state.status.state == "sleeping"
    assert state.status.wake_at == stream.end.status.wake_at
    assert state.status.wake_at.endswith("Z")
    assert state.status.overdue is False and state.status.overdue_seconds is None
    assert early.value.status == 409 and early.value.code == "still_sleeping"
    assert early.value.details["wake_at"] == state.status.wake_at
    assert 3500 < early.value.details["remaining_seconds"] <= 3600
    assert run in {summary.run for summary in listed}


def test_a_sleeping_run_past_its_wake_is_overdue_and_then_fails_at_its_folds_bound(
    deployment: Deployment,
) -> None:
    with deployment.client() as client:
        graph = client.submit_graph(waiting(GraphBuilder(), 1).build()).graph
        run = client.start_graph_run(graph, {"done": False})
        asleep = client.stream_events(run)
        list(asleep)
        assert asleep.end is not None and asleep.end.status.state == "sleeping"
        # The workers held still (SIGSTOP) so that nothing wakes the run past its wake_at.
        for worker in deployment.workers:
            os.kill(worker.pid, signal.SIGSTOP)
        try:
            late = wait_until(
                lambda: (status := client.get_run(run).status).overdue_seconds and status,
                "the run was overdue by a second",
            )
        finally:
            for worker in deployment.workers:
                os.kill(worker.pid, signal.SIGCONT)
        wait_until(lambda: client.get_run(run).status.state == "failed", "the run woke on")
        woken = client.stream_events(run)
        kinds = [event.kind for event in woken]
        final = client.get_run(run)

    assert late.state == "sleeping" and late.overdue is True
    assert isinstance(late.overdue_seconds, int) and late.overdue_seconds >= 1
    assert woken.end is not None and woken.end.status.state == "failed"
    assert kinds.count("SleepCompleted") == 1
    assert final.status.state == "failed"
    assert final.status.raw["code"] == "fold_bound_exceeded"


# --- The asynchronous client ------------------------------------------------------------------


async def _async_round(deployment: Deployment) -> dict[str, Any]:
    async with deployment.async_client() as client:
        agent = await client.register_agent(DRAFTER_TOML)
        graph = (await client.submit_graph(drafted(agent))).graph
        run = await client.start_graph_run(graph, SUBJECT)
        first = client.stream_events(run)
        seen = [event async for event in first]
        await client.resume(run, {"approved": False})
        second = client.stream_events(run, from_seq=seen[-1].seq + 1)
        later = [event async for event in second]
        listed = await client.list_runs()
        replayed = await client.replay(run)
        refused = None
        try:
            await client.abandon(run)
        except SalvorAPIError as error:
            refused = error.code
        return {
            "run": run,
            "first": first,
            "seen": seen,
            "second": second,
            "later": later,
            "listed": listed,
            "replayed": replayed,
            "refused": refused,
        }


def test_the_async_client_streams_a_run_through_its_gate_to_the_end(
    deployment: Deployment,
) -> None:
    # In a thread of its own: an event loop may run in this one (the browser tests leave one).
    outcome: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: outcome.update(done=asyncio.run(_async_round(deployment)))
    )
    worker.start()
    worker.join(timeout=300)
    done = outcome["done"]

    assert done["seen"][-1].kind == "Suspended"
    assert done["first"].end.status.state == "suspended"
    assert done["later"][0].kind == "Resumed" and done["later"][-1].kind == "RunCompleted"
    assert done["second"].end.status.output == {"approved": False}
    assert done["run"] in {summary.run for summary in done["listed"]}
    assert done["replayed"].status.is_completed
    assert done["replayed"].next_seq == len(done["seen"]) + len(done["later"])
    assert done["refused"] == "wrong_state"


async def _async_sleep(deployment: Deployment) -> dict[str, Any]:
    async with deployment.async_client() as client:
        graph = (await client.submit_graph(waiting(GraphBuilder(), 3600).build())).graph
        run = await client.start_graph_run(graph, {"done": False})
        stream = client.stream_events(run)
        seen = [event async for event in stream]
        state = await client.get_run(run)
        try:
            await client.resume(run, {"x": 1})
        except SalvorAPIError as error:
            refused: SalvorAPIError | None = error
        else:
            refused = None
        return {"stream": stream, "seen": seen, "state": state, "refused": refused}


def test_the_async_client_sees_a_built_delay_sleep_and_a_resume_answered_still_sleeping(
    deployment: Deployment,
) -> None:
    outcome: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: outcome.update(done=asyncio.run(_async_sleep(deployment)))
    )
    worker.start()
    worker.join(timeout=300)
    done = outcome["done"]

    assert done["seen"][-1].kind == "SleepStarted"
    assert done["stream"].end.status.state == "sleeping"
    status = done["state"].status
    assert status.state == "sleeping" and status.wake_at == done["stream"].end.status.wake_at
    assert status.overdue is False
    assert done["refused"] is not None and done["refused"].code == "still_sleeping"
    assert done["refused"].details["wake_at"] == status.wake_at


async def _until(condition: Any, what: str, bound: float = 120.0) -> Any:
    """Awaits ``condition()`` until it is truthy (its value), failing after ``bound`` seconds."""
    deadline = asyncio.get_running_loop().time() + bound
    while not (value := await condition()):
        assert asyncio.get_running_loop().time() < deadline, f"gave up waiting until {what}"
        await asyncio.sleep(0.05)
    return value


async def _async_overdue(deployment: Deployment) -> dict[str, Any]:
    async with deployment.async_client() as client:
        graph = (await client.submit_graph(waiting(GraphBuilder(), 1).build())).graph
        run = await client.start_graph_run(graph, {"done": False})
        asleep = client.stream_events(run)
        [event async for event in asleep]

        async def overdue() -> Any:
            status = (await client.get_run(run)).status
            return status.overdue_seconds and status

        async def failed() -> bool:
            return (await client.get_run(run)).status.state == "failed"

        # The workers held still (SIGSTOP) so that nothing wakes the run past its wake_at.
        for worker in deployment.workers:
            os.kill(worker.pid, signal.SIGSTOP)
        try:
            late = await _until(overdue, "the run was overdue by a second")
        finally:
            for worker in deployment.workers:
                os.kill(worker.pid, signal.SIGCONT)
        await _until(failed, "the run woke on")
        woken = client.stream_events(run)
        kinds = [event.kind async for event in woken]
        final = await client.get_run(run)
        return {"asleep": asleep, "late": late, "woken": woken, "kinds": kinds, "final": final}


def test_the_async_client_sees_a_run_overdue_and_then_failed_at_its_folds_bound(
    deployment: Deployment,
) -> None:
    outcome: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: outcome.update(done=asyncio.run(_async_overdue(deployment)))
    )
    worker.start()
    worker.join(timeout=300)
    done = outcome["done"]

    assert done["asleep"].end.status.state == "sleeping"
    late = done["late"]
    assert late.state == "sleeping" and late.overdue is True
    assert isinstance(late.overdue_seconds, int) and late.overdue_seconds >= 1
    assert done["woken"].end.status.state == "failed"
    assert done["kinds"].count("SleepCompleted") == 1
    assert done["final"].status.state == "failed"
    assert done["final"].status.raw["code"] == "fold_bound_exceeded"
    assert "declares `on_bound: fail`" in done["final"].status.error


def test_the_client_is_the_reference_release_these_tests_were_written_for() -> None:
    assert salvor.__version__ == "0.10.0"
