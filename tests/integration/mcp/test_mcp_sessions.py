"""The catalogue's servers as processes: one session reused, restarted after a crash, a clean
environment, a readable failure for a server that will not start, and no orphan when the process
that started them is killed."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext
from editor.tools.mcp import McpConnections, list_servers, read_catalogue
from tests.integration.mcp.servers import (
    PAYROLL,
    ROOT,
    environment_of,
    payroll_catalogue,
    processes_marked,
    sleeping,
    wait_until,
)
from tests.reference_examples import needs_examples

pytestmark = needs_examples(PAYROLL)


def connections_for(catalogue: Path, **options: float) -> McpConnections:
    return McpConnections(read_catalogue(catalogue, os.environ), **options)  # type: ignore[arg-type]


def test_calls_reuse_one_server_process(tmp_path: Path) -> None:
    catalogue, marker = payroll_catalogue(tmp_path)
    connections = connections_for(catalogue)
    try:
        first = connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
        second = connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)

        assert first.structured_content == second.structured_content
        assert len(processes_marked(marker)) == 1
    finally:
        connections.close()
    assert wait_until(lambda: not processes_marked(marker))


def test_a_server_gets_only_its_catalogue_environment_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEHOUSE_SECRET_FOR_TEST", "must-not-leak")
    catalogue, marker = payroll_catalogue(tmp_path)
    connections = connections_for(catalogue)
    try:
        connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
        (pid,) = processes_marked(marker)

        assert set(environment_of(pid)) == {
            "PATH",
            "GATEHOUSE_TEST_MARK",
            "SALVOR_PAYROLL_LEDGER",
            "SALVOR_PAYROLL_NOTICES",
            "SALVOR_PAYROLL_PAY_DELAY_MS",
            "SERVER",
            "GATE",
        }
    finally:
        connections.close()


def test_a_server_that_crashed_is_started_again_for_the_next_call(tmp_path: Path) -> None:
    catalogue, marker = payroll_catalogue(tmp_path)
    connections = connections_for(catalogue)
    try:
        connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
        (crashed,) = processes_marked(marker)
        os.kill(crashed, signal.SIGKILL)
        assert wait_until(lambda: connections.running() == {"payroll": False})

        answer = connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)

        assert answer.structured_content is not None
        assert answer.structured_content["pay_period"] == "2025-11-B"
        assert processes_marked(marker) != [crashed]
        assert len(processes_marked(marker)) == 1
    finally:
        connections.close()


def test_a_server_that_will_not_start_fails_the_call_naming_it(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    catalogue, _ = payroll_catalogue(tmp_path, gate=gate)
    connections = connections_for(catalogue, start_timeout=10)
    try:
        with pytest.raises(ToolError) as refused:
            connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
    finally:
        connections.close()

    assert str(refused.value) == (
        "the MCP server `payroll` could not be started: it exited before answering: "
        "the gate file is gone"
    )


def test_a_command_that_does_not_exist_is_named_in_the_failure(tmp_path: Path) -> None:
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text('[servers.ghost]\ncommand = "no-such-mcp-server-here"\n')
    connections = connections_for(catalogue)
    try:
        with pytest.raises(ToolError, match="MCP server `ghost` could not be started") as refused:
            connections.list_tools("ghost")
    finally:
        connections.close()
    assert "cannot start `no-such-mcp-server-here`: No such file or directory" in str(refused.value)


def test_a_server_that_never_answers_initialize_fails_within_the_start_timeout(
    tmp_path: Path,
) -> None:
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text('[servers.mute]\ncommand = "sleep"\nargs = ["60"]\n')
    connections = connections_for(catalogue, start_timeout=0.5)
    try:
        with pytest.raises(ToolError, match=r"`mute` could not be started: it did not answer"):
            connections.call("mute", "anything", {}, 5)
    finally:
        connections.close()


WORKER = textwrap.dedent(
    """
    import os, sys, threading
    from editor.tools.mcp import McpConnections, read_catalogue
    connections = McpConnections(read_catalogue(sys.argv[1], os.environ))
    connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
    pay = {"id": "E01", "amount_cents": 1, "pay_period": "2025-11-B"}
    threading.Thread(target=connections.call, args=("payroll", "pay_employee", pay, 120)).start()
    print("ready", flush=True)
    sys.stdin.read()  # until killed
    """
)


def test_killing_the_worker_with_sigkill_leaves_no_server_process(tmp_path: Path) -> None:
    # The server is mid-payment (a minute's sleep), so it would not notice its stdin closing:
    # only the parent-death signal ends it.
    catalogue, marker = payroll_catalogue(tmp_path, pay_delay_ms=60_000)
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(catalogue)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready"
        (server,) = processes_marked(marker)
        assert wait_until(lambda: sleeping(server))

        worker.kill()  # SIGKILL: no atexit, no clean shutdown
        worker.wait(10)

        assert wait_until(lambda: not processes_marked(marker))
    finally:
        if worker.poll() is None:
            worker.kill()
        for pid in processes_marked(marker):
            os.kill(pid, signal.SIGKILL)


def test_killing_the_worker_with_sigkill_also_kills_what_its_server_started(
    tmp_path: Path,
) -> None:
    # The server's own child (a `sleep`, in the server's process group) would outlive a
    # parent-death signal aimed at the server alone: the launcher's supervisor kills the group.
    catalogue, marker = payroll_catalogue(tmp_path, pay_delay_ms=60_000, companion="sleep 300")
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(catalogue)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready"
        assert wait_until(lambda: len(processes_marked(marker)) == 2)  # the server, its sleep

        worker.kill()
        worker.wait(10)

        assert wait_until(lambda: not processes_marked(marker))
    finally:
        if worker.poll() is None:
            worker.kill()
        for pid in processes_marked(marker):
            os.kill(pid, signal.SIGKILL)


def test_what_a_crashed_server_started_is_killed_with_it(tmp_path: Path) -> None:
    catalogue, marker = payroll_catalogue(tmp_path, companion="sleep 300")
    connections = connections_for(catalogue)
    try:
        connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
        assert wait_until(lambda: len(processes_marked(marker)) == 2)
        server = next(pid for pid in processes_marked(marker) if not sleeping(pid))

        os.kill(server, signal.SIGKILL)

        assert wait_until(lambda: not processes_marked(marker))
        assert wait_until(lambda: connections.running() == {"payroll": False})
    finally:
        connections.close()
        for pid in processes_marked(marker):
            os.kill(pid, signal.SIGKILL)


def test_a_server_that_dies_during_a_call_fails_that_call_naming_it(tmp_path: Path) -> None:
    catalogue, marker = payroll_catalogue(tmp_path, pay_delay_ms=60_000)
    connections = connections_for(catalogue)
    failure: list[BaseException] = []
    pay = {"id": "E01", "amount_cents": 1, "pay_period": "2025-11-B"}

    def pay_one() -> None:
        try:
            connections.call("payroll", "pay_employee", pay, 30)
        except ToolError as error:
            failure.append(error)

    try:
        connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
        (server,) = processes_marked(marker)
        caller = threading.Thread(target=pay_one)
        caller.start()
        assert wait_until(lambda: sleeping(server))  # mid-payment

        os.kill(server, signal.SIGKILL)
        caller.join(30)

        assert [str(error) for error in failure] == [
            "the MCP server `payroll` stopped during the call to `pay_employee`; it is started "
            "again for the next call"
        ]
        again = connections.call("payroll", "pull_roster", {"pay_period": "2025-11-B"}, 10)
        assert again.is_error is False
    finally:
        connections.close()


def test_a_result_over_the_size_cap_fails_the_call(tmp_path: Path) -> None:
    roster = tmp_path / "roster.json"
    rows = [{"id": f"E{n}", "name": "x" * 50, "amount_cents": 100} for n in range(2_000)]
    roster.write_text(json.dumps({"big": rows}))
    catalogue, _ = payroll_catalogue(tmp_path, roster=roster)
    connections = connections_for(catalogue, max_result_bytes=64 * 1024)
    try:
        (listing,) = list_servers(connections.catalogue, connections)
        pull = next(spec for spec in listing.tools if spec.name == "pull_roster")

        with pytest.raises(ToolError) as refused:
            pull.func({"pay_period": "big"}, ToolContext("run", "node", "key", 10))
    finally:
        connections.close()

    assert re.fullmatch(
        r"the MCP server `payroll` answered `pull_roster` with \d+ bytes, more than "
        r"GATEHOUSE_MCP_MAX_RESULT_BYTES \(65536\)",
        str(refused.value),
    )


@pytest.fixture
def http_server() -> Iterator[int]:
    """The test HTTP MCP server on a free port, token ``s3cret``; its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = Path(__file__).with_name("http_server.py")
    server = subprocess.Popen([sys.executable, str(script), str(port), "s3cret"], cwd=ROOT)
    try:

        def listening() -> bool:
            with socket.socket() as client:
                return client.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(listening, within=30)
        yield port
    finally:
        server.kill()
        server.wait(10)


def test_an_http_server_is_reached_with_its_bearer_token_from_the_environment(
    tmp_path: Path, http_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPUTES_TOKEN", "s3cret")
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text(
        f'[servers.disputes]\nurl = "http://127.0.0.1:{http_server}/mcp"\n'
        'bearer_token_env = "DISPUTES_TOKEN"\n'
    )
    connections = McpConnections(
        read_catalogue(catalogue, os.environ), http_allow=[f"127.0.0.1:{http_server}"]
    )
    try:
        (listing,) = list_servers(connections.catalogue, connections)
        (lookup,) = listing.tools
        answer = lookup.func({"dispute_id": "D-7"}, ToolContext("run", "node", "key", 10))
    finally:
        connections.close()

    assert (lookup.name, lookup.effect.value, lookup.server) == (
        "lookup_dispute",
        "read",
        "disputes",
    )
    assert answer["structuredContent"] == {"dispute_id": "D-7", "status": "open"}
    assert answer["isError"] is False


def test_an_http_server_whose_host_is_not_allowed_is_refused_naming_the_setting(
    tmp_path: Path, http_server: int
) -> None:
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text(f'[servers.disputes]\nurl = "http://127.0.0.1:{http_server}/mcp"\n')
    connections = McpConnections(read_catalogue(catalogue, os.environ), http_allow=[])
    try:
        with pytest.raises(ToolError) as refused:
            connections.list_tools("disputes")
    finally:
        connections.close()

    assert str(refused.value) == (
        f"the MCP server `disputes` could not be started: `127.0.0.1:{http_server}` is not in "
        f"GATEHOUSE_HTTP_ALLOW, so `http://127.0.0.1:{http_server}/mcp` may not be requested"
    )
