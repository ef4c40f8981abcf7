"""The reference's own examples (``shared/reference/examples`` beside the checkout), run as their
READMEs say against a real deployment: gunicorn and a real ``db_worker`` on a database of this
module's own (SQLite, or PostgreSQL in CI's second pass), the examples' MCP servers in the
operator's catalogue, and a fake Anthropic Messages server playing each example's
``model-script.json`` (the conversation whose name is in the agent's system prompt).

* **payroll**, the whole graph with its agent: it parks at the gate with two flagged rows, pays
  the amended roster, loses its worker to ``kill -9`` in the middle of the map, and ends with
  twelve ledger lines at the amended amounts and one notice, no server left behind.
* **graph-service**: the escalated dispute parks, is approved, loses its worker while the notice
  agent waits on the model, and still refunds exactly once; the small one settles on its own.
* **graph-clients**: its ``python/service.py`` against the live server, given only the base URL
  and the API token from outside.

And the worker's servers: killed with a worker killed mid-call (the server's own child
included), and their stderr in the worker's log under their names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from salvor import Client

from tests.fake_anthropic import FakeAnthropic
from tests.faults.processes import wait_until
from tests.integration.deployments import Deployment, deployed
from tests.integration.mcp.examples import example_catalogue, hashes_named_by_graphs
from tests.integration.mcp.servers import PYTHON, processes_marked, sleeping
from tests.reference_examples import EXAMPLES, needs_examples

PAYROLL = EXAMPLES / "payroll"
SERVICE = EXAMPLES / "graph-service"
CLIENTS = EXAMPLES / "graph-clients"

pytestmark = needs_examples(
    PAYROLL / "payroll-run.json",
    SERVICE / "dispute-refund.json",
    CLIENTS / "python" / "service.py",
)

MCP = Path(__file__).with_name("mcp")
#: Each payment's delay (the reference's run.sh takes 300 ms): a window wide enough to kill the
#: worker in the middle of the map, short enough to keep the module quick.
PAY_DELAY_MS = 200
#: Seconds to wait for processes to go: they are SIGKILLed, so this is only a hang's bound.
GONE_WITHIN = 20


# --- The deployment ----------------------------------------------------------------------------


def script(folder: Path) -> Any:
    return json.loads((folder / "model-script.json").read_text(encoding="utf-8"))


def final_text(folder: Path, conversation: str) -> str:
    """The text of a conversation's last scripted turn: what its agent answers in the end."""
    (block,) = script(folder)[conversation][-1]["content"]
    return block["text"]


class Examples:
    """The deployment, the fake model, and the files the examples' servers write."""

    def __init__(self, deployment: Deployment, model: FakeAnthropic, marker: str) -> None:
        self.deployment = deployment
        self.model = model
        #: What every process the catalogue starts carries in its environment.
        self.marker = marker

    def client(self) -> Client:
        return self.deployment.client()

    def lines(self, name: str) -> list[str]:
        """The lines of one of the servers' files (``payroll-ledger.txt``, …); none if absent."""
        path = self.deployment.folder / name
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def forget(self, *names: str) -> None:
        for name in names:
            (self.deployment.folder / name).unlink(missing_ok=True)

    def kill_worker_and_its_servers(self) -> list[int]:
        """``kill -9`` the worker (a fresh one starts); wait until every catalogue process that
        ran before the kill is gone; those processes."""
        before = processes_marked(self.marker)
        self.deployment.kill_workers()
        wait_until(
            lambda: not set(before) & set(processes_marked(self.marker)),
            "the killed worker's MCP servers and their children were gone",
            GONE_WITHIN,
        )
        return before


@pytest.fixture(scope="module")
def examples() -> Iterator[Examples]:
    marker: list[str] = []

    def catalogue(folder: Path) -> Mapping[str, str]:
        path, mark = example_catalogue(folder, pay_delay_ms=PAY_DELAY_MS)
        with path.open("a", encoding="utf-8") as text:
            text.write(
                f'[servers.sleepy]\ncommand = "{PYTHON}"\nargs = ["{MCP / "sleepy_server.py"}"]\n'
                f'env = {{ GATEHOUSE_TEST_MARK = "{mark}" }}\n'
            )
        marker.append(mark)
        return {"GATEHOUSE_MCP_SERVERS": str(path)}

    with FakeAnthropic(script(PAYROLL)) as model:
        environment = {
            "GATEHOUSE_LLM_ENV_ALLOW": "SALVOR_DEMO_BASE_URL",
            "SALVOR_DEMO_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "",  # no key of the machine's is ever sent, even to the fake
        }
        with deployed("gatehouse-examples-", environment, catalogue) as deployment:
            yield Examples(deployment, model, marker[0])


def events_of(client: Client, run: str) -> list[Any]:
    return list(client.stream_events(run))


def payloads(events: list[Any], kind: str, **where: Any) -> list[dict[str, Any]]:
    return [
        event.payload
        for event in events
        if event.kind == kind and all(event.payload.get(k) == v for k, v in where.items())
    ]


# --- payroll ----------------------------------------------------------------------------------


def amended_answer() -> Any:
    """run.sh's ``AMENDED_ANSWER``: the approver's amended roster, twelve rows."""
    found = re.search(r"^AMENDED_ANSWER='(.*?)'$", (PAYROLL / "run.sh").read_text(), re.S | re.M)
    assert found is not None, "run.sh no longer holds AMENDED_ANSWER"
    return json.loads(found.group(1))


def test_payroll_pays_the_amended_roster_exactly_once_across_a_worker_killed_mid_map(
    examples: Examples,
) -> None:
    examples.model.play(script(PAYROLL))
    amended = amended_answer()
    with examples.client() as client:
        registered = {
            client.register_agent(path.read_text()) for path in PAYROLL.glob("agents/*.toml")
        }
        graph = client.submit_graph(json.loads((PAYROLL / "payroll-run.json").read_text())).graph
        run = client.start_graph_run(graph, {"pay_period": "2025-11-B"}, labels={"desk": "payroll"})
        to_gate = events_of(client, run)
        parked = client.get_run(run)

        resumed = client.resume(run, amended)
        wait_until(
            lambda: len(examples.lines("payroll-ledger.txt")) >= 4, "the map paid four employees"
        )
        killed = examples.kill_worker_and_its_servers()
        at_the_kill = len(examples.lines("payroll-ledger.txt"))

        rest = client.stream_events(run, from_seq=to_gate[-1].seq + 1)
        list(rest)
        final = client.get_run(run)
        walk = events_of(client, run)

    assert registered == hashes_named_by_graphs(PAYROLL)
    # Parked at the gate, with the two rows flag_exceptions flagged on the routed value.
    assert parked.status.state == "suspended" and resumed.outcome == "driving"
    (review,) = payloads(to_gate, "ToolCallCompleted", node="flag_exceptions")
    flagged = review["output"]["structuredContent"]["flagged"]
    assert [(row["id"], row["amount_cents"]) for row in flagged] == [
        ("E07", 4_500_000),
        ("E10", 4_200),
    ]
    assert [p["case"] for p in payloads(to_gate, "BranchTaken", node="route")] == ["review"]
    # The kill landed inside the map, and took the worker's payroll server with it.
    assert killed and 4 <= at_the_kill < 12
    # The run ended as the README says: twelve lines, one per employee, the amended amounts.
    assert rest.end is not None and final.status.is_completed
    assert final.status.output == final_text(PAYROLL, "notify-summary")
    ledger = [json.loads(line) for line in examples.lines("payroll-ledger.txt")]
    assert len(ledger) == 12
    paid = {row["id"]: row["amount_cents"] for row in ledger}
    roster = amended["structuredContent"]["roster"]
    assert paid == {row["id"]: row["amount_cents"] for row in roster}
    assert (paid["E07"], paid["E10"]) == (470_000, 420_000)
    notices = examples.lines("payroll-notices.json")
    assert [json.loads(line) for line in notices] == [
        {"message": script(PAYROLL)["notify-summary"][0]["content"][0]["input"]["message"]}
    ]
    assert len(payloads(walk, "MapIterationJoined", node="pay_each")) == 12
    assert walk[-1].kind == "RunCompleted"


# --- graph-service ----------------------------------------------------------------------------

APPROVAL = {
    "dispute_id": "DSP-4471",
    "amount_usd": 512.0,
    "approver": "j.okafor",
    "note": "Duplicate charge confirmed against INV-90210.",
}


def test_graph_service_refunds_once_across_a_worker_killed_while_the_notice_awaits_the_model(
    examples: Examples,
) -> None:
    examples.model.play(script(SERVICE))
    examples.forget("disputes-ledger.txt", "disputes-notices.json")
    with examples.client() as client:
        registered = {
            client.register_agent(path.read_text()) for path in SERVICE.glob("agents/*.toml")
        }
        graph = client.submit_graph(json.loads((SERVICE / "dispute-refund.json").read_text())).graph
        escalated = json.loads((SERVICE / "input.json").read_text())
        run = client.start_graph_run(graph, escalated, labels={"desk": "disputes"})
        to_gate = events_of(client, run)
        parked = client.get_run(run)

        # The notice agent's first model call gets no answer until the worker is gone.
        examples.model.stall()
        asked = len(examples.model.requests)
        client.resume(run, APPROVAL)
        wait_until(lambda: len(examples.model.requests) > asked, "the notice agent asked")
        at_the_kill = examples.lines("disputes-ledger.txt")
        examples.kill_worker_and_its_servers()
        examples.model.release()
        list(client.stream_events(run, from_seq=to_gate[-1].seq + 1))
        final = client.get_run(run)
        walk = events_of(client, run)

        small = client.start_graph_run(
            graph, json.loads((SERVICE / "input-small.json").read_text()), labels={"desk": "d"}
        )
        settled = events_of(client, small)
        small_final = client.get_run(small)

    assert registered == hashes_named_by_graphs(SERVICE)
    assert parked.status.state == "suspended"
    assert parked.status.input_schema is not None
    assert [p["case"] for p in payloads(to_gate, "BranchTaken")] == ["escalate"]
    assert "customer-notice" in json.dumps(examples.model.requests[asked].body["system"])
    # The refund was recorded before the kill, and was not issued again after it.
    assert len(at_the_kill) == 1
    assert final.status.is_completed
    # Two terminal nodes (notify, small_claims): the run's output is the last one that ran, the
    # bare text, as the README shows.
    assert final.status.output == final_text(SERVICE, "customer-notice")
    assert len(payloads(walk, "ToolCallRequested", tool="issue_refund")) == 1
    # The call the killed worker was waiting on is asked again, not recorded again.
    assert [p["call"] for p in payloads(walk, "ModelCallRequested", node="notify")] == [0, 1]
    first_turns = [
        request
        for request in examples.model.requests[asked:]
        if "customer-notice" in json.dumps(request.body["system"])
        and len(request.body["messages"]) == 1
    ]
    assert len(first_turns) == 2
    # The small dispute never parked: the branch routed past the gate.
    assert small_final.status.is_completed
    assert small_final.status.output == final_text(SERVICE, "small-claims")
    assert [p["case"] for p in payloads(settled, "BranchTaken")] == ["auto_settle"]
    assert {p["node"] for p in payloads(settled, "NodeSkipped")} == {
        "approve_refund",
        "settle",
        "notify",
    }
    assert "Suspended" not in {event.kind for event in settled}
    ledger = [json.loads(line) for line in examples.lines("disputes-ledger.txt")]
    assert [(row["dispute_id"], row["amount_usd"], row["approver"]) for row in ledger] == [
        ("DSP-4471", 512.0, "j.okafor"),
        ("DSP-3312", 47.25, "auto-settle-policy"),
    ]
    notices = json.loads((examples.deployment.folder / "disputes-notices.json").read_text())
    assert set(notices) == {"DSP-4471", "DSP-3312"}


# --- graph-clients ----------------------------------------------------------------------------


def test_graph_clients_python_service_drives_the_refund_desk_given_only_url_and_token(
    examples: Examples, tmp_path: Path
) -> None:
    examples.model.play(script(CLIENTS))
    examples.forget("disputes-ledger.txt", "disputes-notices.json")

    ran = subprocess.run(
        [
            PYTHON,
            str(MCP / "with_token.py"),
            str(CLIENTS / "python" / "service.py"),
            examples.deployment.server.url,
        ],
        env={
            "PATH": os.environ.get("PATH", os.defpath),
            "GATEHOUSE_API_TOKEN": examples.deployment.token,
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    said = ran.stdout
    assert ran.returncode == 0, said + ran.stderr
    assert "[python]   the two hashes match: sha256:" in said
    assert "[python]   both agent hashes match the document" in said
    assert "seq  2  BranchTaken  (case=escalate)" in said
    assert "[python]   -- stream closed; run is suspended" in said
    assert "[python]   resume outcome: driving" in said
    outputs = re.findall(r"^\[python\]   final output: (.*)$", said, re.M)
    assert len(outputs) == 2, said
    # the bare text of the terminal that ran, as the README shows
    assert outputs == [
        final_text(CLIENTS, "settle-and-notify"),
        final_text(CLIENTS, "small-claims"),
    ]
    assert "seq  2  BranchTaken  (case=auto_settle)" in said
    skipped = re.findall(r"^\[python\]     (\w+): ", said, re.M)
    assert sorted(skipped) == ["approve_refund", "settle_and_notify"]
    assert said.rstrip().endswith("completed")
    ledger = [json.loads(line) for line in examples.lines("disputes-ledger.txt")]
    assert [(row["dispute_id"], row["amount_usd"], row["approver"]) for row in ledger] == [
        ("DSP-4471", 512.0, "j.okafor"),
        ("DSP-3312", 47.25, "auto-settle-policy"),
    ]
    notices = json.loads((examples.deployment.folder / "disputes-notices.json").read_text())
    assert set(notices) == {"DSP-4471", "DSP-3312"}


# --- The worker's own servers ------------------------------------------------------------------

NAP = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": "nap", "tool": "nap"}}],
    "edges": [],
}


def the_naps_sleep(marker: str) -> list[int]:
    """The ``sleep`` processes the sleepy server started (its child, in its process group)."""
    found = []
    for pid in processes_marked(marker):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if command.endswith(b"sleep") and sleeping(pid):
            found.append(pid)
    return found


def test_a_worker_killed_mid_call_leaves_no_mcp_server_nor_a_process_its_server_started(
    examples: Examples,
) -> None:
    with examples.client() as client:
        graph = client.submit_graph(NAP).graph
        run = client.start_graph_run(graph, {"seconds": 300})
        (nap,) = wait_until(lambda: the_naps_sleep(examples.marker), "the nap's sleep started")

        killed = examples.kill_worker_and_its_servers()

        # The call was a write cut off in flight: the fresh worker parks the run for a person.
        wait_until(
            lambda: client.get_run(run).status.state == "needs_reconciliation",
            "the cut-off write was handed to a person",
        )
        client.abandon(run, "the test is over")

    assert nap in killed and len(killed) >= 2  # the server and its child, at least
    assert not set(killed) & set(processes_marked(examples.marker))


def test_what_a_server_writes_to_stderr_is_in_the_workers_log_under_its_name(
    examples: Examples,
) -> None:
    with examples.client() as client:
        graph = client.submit_graph(NAP).graph
        run = client.start_graph_run(graph, {"seconds": 0.01})
        rested = client.stream_events(run)
        list(rested)

    assert rested.end is not None and rested.end.status.is_completed
    line = "MCP server `sleepy`: sleepy: napping for 0.01 s"
    wait_until(
        lambda: line in examples.deployment.worker_log(), "the worker logged the line", GONE_WITHIN
    )
