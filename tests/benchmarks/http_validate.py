"""HTTP benchmark: ``POST /v1/graphs/validate`` through gunicorn, against the same call in-process.

Starts gunicorn as the image does (2 uvicorn workers, ``DEBUG=false``) on a free loopback port
with a throwaway SQLite database in a temporary directory, creates a user and an API token, and
POSTs a valid 100-node document with the token, after a short warm-up, in two bounded passes
under a time cap each: one connection (latency without queueing) and 8 client threads with one
``http.client`` connection each (throughput). Prints requests/s, latency percentiles and the
error count of each, the median of ``validate_document`` on the same bytes in this process, and
the HTTP layer's overhead as the ratio p50 / in-process median. Loopback only; gunicorn is always
stopped. Run it with ``make bench``.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graph_core import build_document, measure  # this folder, put on sys.path by running it

from editor.graph import validate_document

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
PATH = "/v1/graphs/validate"
NODES = 100
WORKERS = 2
CONNECTIONS = 8  # client threads of the throughput pass, each with its own connection
REQUESTS = 2_000  # requests of the throughput pass
SEQUENTIAL_REQUESTS = 300  # requests of the one-connection latency pass
WARM_UP = 40
TIME_CAP = 60.0  # seconds for the measured requests; the run stops early when it is reached
REQUEST_TIMEOUT = 30.0
START_TIMEOUT = 30.0
USERNAME = "bench"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def server_environment(directory: Path) -> dict[str, str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_URL_FILE", "SECRET_KEY_FILE")
    }
    environment.update(
        DEBUG="false",
        SECRET_KEY="benchmark-only-secret-key-" + "x" * 30,
        ALLOWED_HOSTS=HOST,
        GATEHOUSE_SECURE_COOKIES="false",
        GATEHOUSE_VAR_DIR=str(directory),
        DATABASE_URL=f"sqlite:///{directory / 'bench.sqlite3'}",
        # WhiteNoise warns that collectstatic has not run; the API serves no static files.
        PYTHONWARNINGS="ignore:No directory at:UserWarning",
    )
    return environment


def manage(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def prepare(environment: dict[str, str]) -> str:
    """Migrate the throwaway database, create a user, and return a new API token for it."""
    for args in (
        ("migrate", "--no-input", "--verbosity", "0"),
        (
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; "
            f"get_user_model().objects.create_user({USERNAME!r})",
        ),
    ):
        result = manage(environment, *args)
        if result.returncode != 0:
            sys.exit(f"manage.py {args[0]} failed:\n{result.stderr}")
    result = manage(environment, "api_token", "create", USERNAME, "--name", "benchmark")
    if result.returncode != 0:
        # Before the api_token command existed: the token service directly.
        result = manage(
            environment,
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; "
            "from editor.services.tokens import create_token; "
            f"print(create_token(get_user_model().objects.get(username={USERNAME!r}), "
            "'benchmark')[1])",
        )
        if result.returncode != 0:
            sys.exit(f"could not create an API token:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server started for a benchmark: politely, then for good after 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def gunicorn(environment: dict[str, str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """gunicorn serving the app on ``HOST:port``, stopped (then killed if need be) on exit."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "editor.asgi:application",
            "--worker-class",
            "editor.server.UvicornWorker",
            "--workers",
            str(WORKERS),
            "--bind",
            f"{HOST}:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=environment,
    )
    try:
        wait_until_serving(process, port)
        yield process
    finally:
        stop(process)


def wait_until_serving(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"gunicorn exited with status {process.returncode} before serving")
        connection = http.client.HTTPConnection(HOST, port, timeout=2)
        try:
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            connection.close()
        time.sleep(0.1)
    sys.exit(f"gunicorn did not answer /healthz within {START_TIMEOUT:.0f} s")


class Load:
    """``count`` POSTs shared among ``connections`` client threads, stopping at a deadline."""

    def __init__(
        self, port: int, headers: dict[str, str], body: bytes, count: int, connections: int
    ) -> None:
        self.port, self.headers, self.body = port, headers, body
        self.connections = connections
        self.remaining = count
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.deadline = 0.0

    def take(self) -> bool:
        with self.lock:
            if self.remaining <= 0 or time.monotonic() >= self.deadline:
                return False
            self.remaining -= 1
            return True

    def client(self) -> None:
        # The connection is kept alive between requests (uvicorn); http.client opens a new
        # one by itself should the server close it.
        connection = http.client.HTTPConnection(HOST, self.port, timeout=REQUEST_TIMEOUT)
        try:
            while self.take():
                start = time.perf_counter()
                try:
                    connection.request("POST", PATH, body=self.body, headers=self.headers)
                    response = connection.getresponse()
                    payload = response.read()
                    elapsed = time.perf_counter() - start
                    if response.status != 200:
                        outcome = f"HTTP {response.status}"
                    elif json.loads(payload).get("valid") is not True:
                        outcome = "not valid"
                    else:
                        outcome = None
                except (OSError, http.client.HTTPException, ValueError) as error:
                    elapsed = time.perf_counter() - start
                    outcome = type(error).__name__
                    connection.close()
                with self.lock:
                    if outcome is None:
                        self.latencies.append(elapsed)
                    else:
                        self.errors[outcome] = self.errors.get(outcome, 0) + 1
        finally:
            connection.close()

    def run(self, time_cap: float) -> float:
        self.deadline = time.monotonic() + time_cap
        threads = [threading.Thread(target=self.client) for _ in range(self.connections)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - start


def report(name: str, load: Load, elapsed: float, planned: int, in_process: float) -> int:
    """Print one pass's figures; return its error count."""
    latencies = sorted(load.latencies)
    errors = sum(load.errors.values())
    done = len(latencies) + errors
    print(
        f"{name}: {done} requests in {elapsed:.2f} s, {done / elapsed:.0f} requests/s, "
        f"errors {errors}{' ' + str(load.errors) if errors else ''}"
        f"{'  (stopped at the time cap)' if done < planned else ''}"
    )
    if len(latencies) < 2:
        print("  too few successful requests for percentiles")
        return errors or 1
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    p50, p95, p99 = statistics.median(latencies), cuts[94], cuts[98]
    print(
        f"  latency p50 {p50 * 1000:.1f} ms  p95 {p95 * 1000:.1f} ms  p99 {p99 * 1000:.1f} ms  "
        f"max {latencies[-1] * 1000:.1f} ms;  p50 / in-process median {p50 / in_process:.1f}x"
    )
    return errors


def main() -> None:
    body = json.dumps(build_document(NODES)).encode()
    verdict = validate_document(body)
    assert verdict["valid"], verdict.get("errors", [])[:3]

    passes = []
    with tempfile.TemporaryDirectory(prefix="gatehouse-bench-") as directory:
        environment = server_environment(Path(directory))
        token = prepare(environment)
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Content-Length": str(len(body)),
        }
        port = free_port()
        with gunicorn(environment, port):
            warm_up = Load(port, headers, body, WARM_UP, CONNECTIONS)
            warm_up.run(TIME_CAP)
            if warm_up.errors:
                sys.exit(f"the warm-up requests failed: {warm_up.errors}")
            for connections, count in ((1, SEQUENTIAL_REQUESTS), (CONNECTIONS, REQUESTS)):
                load = Load(port, headers, body, count, connections)
                passes.append((connections, load, load.run(TIME_CAP), count))

    in_process = measure(lambda: validate_document(body), 201)
    print(
        f"POST {PATH} through gunicorn ({WORKERS} uvicorn workers, DEBUG off, SQLite) on loopback, "
        f"bearer token; {NODES}-node valid document, {len(body)} bytes"
    )
    print(f"validate_document in-process on the same bytes, median: {in_process * 1000:.2f} ms")
    errors = 0
    for connections, load, elapsed, count in passes:
        name = "1 connection (no queueing: the HTTP layer's overhead)"
        if connections > 1:
            name = f"{connections} connections (throughput; latency includes queueing)"
        errors += report(name, load, elapsed, count, in_process)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
