"""The processes the fault tests break: a private PostgreSQL cluster, gunicorn, ``db_worker``.

Everything listens on loopback only and is stopped at the end. Waits are bounded polls: a fault
test fails on a hang, never on being slow.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import requests

from tests.private_postgres import PrivatePostgres, private_postgres

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
#: Seconds: far beyond what each wait takes, so only a real hang fails a test.
BOUND = 120.0
HOST = "127.0.0.1"


def wait_until(condition: Callable[[], Any], what: str, bound: float = BOUND) -> Any:
    """Polls ``condition`` until it is truthy (its value), failing after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting until {what}"
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


# --- PostgreSQL: tests/private_postgres.py (the benchmarks start one too) ----------------------


@contextlib.contextmanager
def start_postgres() -> Iterator[PrivatePostgres]:
    port = int(os.environ.get("GATEHOUSE_FAULTS_PG_PORT", "55443"))
    with private_postgres(port, prefix="gatehouse-faults-pg-") as server:
        yield server


# --- The app's processes -----------------------------------------------------------------------


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def migrated_environment(postgres: PrivatePostgres) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.faults.settings",
        "DATABASE_URL": postgres.url,
        "GATEHOUSE_TOOL_MODULES": "tests.integration.runs.slow_tools",
        "GATEHOUSE_RUN_LEASE_SECONDS": "2",
        "GATEHOUSE_SWEEP_SECONDS": "1",
        "DEBUG": "false",
        "GATEHOUSE_SECURE_COOKIES": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONPATH": str(ROOT),
    }
    env.setdefault("SECRET_KEY", "fault-tests-only-secret-key-not-for-production")
    migrated = manage("migrate", "--no-input", env=env)
    assert migrated.returncode == 0, migrated.stderr
    return env


USERNAME = "faults"
PASSWORD = "fault-tests-password-9431"


def api_token(environment: dict[str, str]) -> str:
    """Creates the user ``faults`` (every role, a known password); an API token of theirs."""
    code = (
        "from django.contrib.auth import get_user_model\n"
        "from django.contrib.auth.models import Group\n"
        "from editor.services.tokens import create_token\n"
        f"user = get_user_model().objects.create_user({USERNAME!r}, password={PASSWORD!r})\n"
        "user.groups.set(Group.objects.all())\n"
        "print('TOKEN', create_token(user, 'faults')[1])\n"
    )
    created = manage("shell", "--no-imports", "-c", code, env=environment)
    assert created.returncode == 0, created.stderr
    return created.stdout.split("TOKEN ")[-1].strip()


def signed_in(url: str) -> requests.Session:
    """A browser session of the user ``faults``, signed in through the sign-in page."""
    browser = requests.Session()
    login = url + "/accounts/login/"
    browser.get(login, timeout=30).raise_for_status()
    signed = browser.post(
        login,
        data={
            "username": USERNAME,
            "password": PASSWORD,
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
        headers={"Referer": login},
        allow_redirects=False,
        timeout=30,
    )
    assert signed.status_code == 302, signed.text[:500]
    return browser


class Server:
    """gunicorn serving the app on a free loopback port."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.url = f"http://{HOST}:{port}"
        self.log = log

    def healthy(self) -> bool:
        try:
            return requests.get(self.url + "/healthz", timeout=10).status_code == 200
        except (requests.ConnectionError, requests.Timeout):
            # Not listening yet, or no worker booted yet to answer (a loaded machine).
            assert self.process.poll() is None, self.log.read_text(errors="replace")[-3000:]
            return False


class Processes:
    """Starts ``db_worker`` and gunicorn processes; stops whichever are left at the end."""

    def __init__(self, environment: dict[str, str], folder: Path) -> None:
        self.environment = environment
        self.folder = folder
        self.started: list[subprocess.Popen[bytes]] = []
        #: Each process's output (standard output and error), by process id.
        self.logs: dict[int, Path] = {}

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for process in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _start(
        self, name: str, command: list[str], env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.folder / f"{name}-{len(self.started)}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env={**self.environment, **(env or {})},
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        self.started.append(process)
        self.logs[process.pid] = log
        return process, log

    def worker(self, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """A ``db_worker``; ``env`` adds to the environment."""
        process, _ = self._start(
            "worker",
            [PYTHON, "manage.py", "db_worker", "--no-reload", "--no-startup-delay",
             "--interval", "0.1"],
            env,
        )  # fmt: skip
        return process

    def server(self, workers: int = 2, env: dict[str, str] | None = None) -> Server:
        """gunicorn with ``workers`` uvicorn workers, as the image serves the app; ``env`` adds
        to the environment."""
        port = free_port()
        process, log = self._start(
            "gunicorn",
            [PYTHON, "-m", "gunicorn", "editor.asgi:application",
             "--worker-class", "editor.server.UvicornWorker", "--bind", f"{HOST}:{port}",
             "--workers", str(workers), "--timeout", "60", "--graceful-timeout", "5",
             "--no-control-socket"],
            env,
        )  # fmt: skip
        server = Server(process, port, log)
        wait_until(server.healthy, "gunicorn answered /healthz")
        return server


# --- Reading a run's log -----------------------------------------------------------------------


def run_events(postgres: PrivatePostgres, run_id: str) -> list[tuple[int, str, dict[str, Any]]]:
    """The run's log as (seq, kind, payload), read straight from the database."""
    with postgres.connect() as connection:
        return connection.execute(
            "SELECT seq, kind, payload FROM editor_runevent WHERE run_id = %s ORDER BY seq",
            (run_id,),
        ).fetchall()


def run_state(postgres: PrivatePostgres, run_id: str) -> str:
    with postgres.connect() as connection:
        row = connection.execute("SELECT state FROM editor_run WHERE id = %s", (run_id,)).fetchone()
    assert row is not None, f"no run {run_id}"
    return row[0]


def assert_log_is_whole(log: list[tuple[int, str, dict[str, Any]]]) -> None:
    """No event lost or repeated: positions 0, 1, 2, … without a gap; each node entered once,
    each tool call requested once."""
    assert [seq for seq, _, _ in log] == list(range(len(log))), "the log has a gap or a repeat"
    entered = Counter(
        json.dumps(payload, sort_keys=True) for _, kind, payload in log if kind == "NodeEntered"
    )
    assert all(count == 1 for count in entered.values()), entered
    requested = Counter(
        payload["idempotency_key"] for _, kind, payload in log if kind == "ToolCallRequested"
    )
    assert all(count == 1 for count in requested.values()), requested


# --- The API -----------------------------------------------------------------------------------


class Api:
    """``/v1`` of a server, with a bearer token."""

    def __init__(self, server: Server, token: str) -> None:
        self.url = server.url + "/v1"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        return self.session.request(method, self.url + path, **kwargs)

    def store_graph(self, document: dict[str, Any]) -> str:
        stored = self.request("POST", "/graphs", data=json.dumps(document))
        assert stored.status_code == 201, stored.text
        return stored.json()["graph"]

    def start_run(self, graph: str, value: Any = None) -> str:
        started = self.request("POST", "/graph-runs", json={"graph_hash": graph, "input": value})
        assert started.status_code == 201, started.text
        return started.json()["run"]


def one_tool(tool: str) -> dict[str, Any]:
    """``call`` (``tool``) → ``after`` (echo)."""
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "call", "tool": tool}},
            {"kind": "tool", "payload": {"id": "after", "tool": "echo"}},
        ],
        "edges": [{"from": "call", "to": "after"}],
    }
