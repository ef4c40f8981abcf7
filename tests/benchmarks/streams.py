"""Benchmark of the live streams and the whole lists, through the production server.

Each part starts the image's web command (gunicorn with one uvicorn worker, ``DEBUG=false``)
on a free loopback port, on SQLite in a temporary directory and, when PostgreSQL's server
binaries are installed, on a private PostgreSQL cluster (``initdb`` in a temporary directory,
port ``GATEHOUSE_BENCH_PG_PORT``, default 55444; removed afterwards):

1. **Delivery latency**: a stream is opened on a run (``?from_seq=0``), then this process
   appends 1,000 events to the run's log through the store, one every 10 ms, as a worker does;
   the latency of an event is from its append's commit to its frame arriving at the client.
2. **Idle streams**: 500 streams held open at once on runs that wait for a worker; the web
   process's memory and threads before and with them open, and ``/healthz`` latency then.
3. **The whole runs list**: ``GET /v1/runs`` without paging over 50,000 runs; the web
   process's peak memory while it answers, against its memory idle.

Prints the figures; ``docs/benchmarks.md`` records them. Run it with ``make bench``.
"""

from __future__ import annotations

import asyncio
import contextlib
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
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.private_postgres import postgres_available, private_postgres  # noqa: E402

HOST = "127.0.0.1"
EVENTS = 1_000
APPEND_EVERY = 0.010
STREAMS = 500
LISTED_RUNS = 50_000
HEALTH_REQUESTS = 200


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# --- The app, on a database ---------------------------------------------------------------------


def environment(directory: Path, database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL_FILE",)}
    env.update(
        DJANGO_SETTINGS_MODULE="editor.settings",
        DEBUG="false",
        SECRET_KEY="benchmark-only-secret-key-" + "x" * 30,
        ALLOWED_HOSTS=HOST,
        GATEHOUSE_SECURE_COOKIES="false",
        GATEHOUSE_VAR_DIR=str(directory),
        GATEHOUSE_LOG_LEVEL="WARNING",
        DATABASE_URL=database_url,
        PYTHONWARNINGS="ignore:No directory at:UserWarning",
    )
    return env


def django_here(env: dict[str, str]) -> None:
    """This process on the same database as the server, to write what a worker writes."""
    os.environ.update(env)
    import warnings

    import django

    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


@contextlib.contextmanager
def web_server(env: dict[str, str]) -> Iterator[tuple[int, int]]:
    """The image's command with one worker: ``(port, pid of the uvicorn worker)``."""
    port = free_port()
    master = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "editor.asgi:application",
         "--worker-class", "editor.server.UvicornWorker", "--workers", "1",
         "--bind", f"{HOST}:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert master.poll() is None, "gunicorn exited"
            assert time.monotonic() < deadline, "gunicorn did not start"
            try:
                if get(port, "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        children = subprocess.run(
            ["pgrep", "-P", str(master.pid)], capture_output=True, text=True, check=True
        ).stdout.split()
        yield port, int(children[0])
    finally:
        master.terminate()
        try:
            master.wait(timeout=20)
        except subprocess.TimeoutExpired:
            master.kill()
            master.wait()


def get(port: int, path: str, token: str | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, port, timeout=120)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def memory_kib(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def threads(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))


def token_and_graph() -> tuple[str, str]:
    from django.contrib.auth.models import Group, User

    from editor.graph import validate_document
    from editor.services.documents.graphs import check_graph, save_graph
    from editor.services.tokens import create_token

    user = User.objects.create_user(f"bench-{uuid.uuid4().hex[:6]}")
    user.groups.set(Group.objects.all())
    document = {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": "write", "tool": "echo"}}],
        "edges": [],
    }
    assert validate_document(json.dumps(document).encode())["valid"]
    graph = save_graph(check_graph(json.dumps(document))).graph
    return create_token(user, "bench")[1], graph


def queued_run(graph: str) -> str:
    from django.db import transaction
    from django.utils import timezone

    from editor.engine import run_status, start_event
    from editor.models import Run
    from editor.store import OrmRunStore

    with transaction.atomic():
        run = Run.objects.create(graph_id=graph, input=None)
        first = start_event(str(run.id), graph, None, None, timezone.now())
        OrmRunStore().record(str(run.id), [first], run_status([first]))
    return str(run.id)


# --- 1. Delivery latency -------------------------------------------------------------------------


class StreamReader(threading.Thread):
    """Reads a run's stream on a raw socket; notes when each event's frame arrived."""

    def __init__(self, port: int, token: str, run_id: str) -> None:
        super().__init__(daemon=True)
        self.arrived: dict[int, float] = {}
        self.sock = socket.create_connection((HOST, port))
        self.sock.sendall(
            f"GET /v1/runs/{run_id}/events?from_seq=0 HTTP/1.1\r\nHost: {HOST}\r\n"
            f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        self.opened = threading.Event()

    def run(self) -> None:
        buffer = b""
        while True:
            chunk = self.sock.recv(65536)
            now = time.perf_counter()
            if not chunk:
                return
            buffer += chunk
            for line in buffer.split(b"\n")[:-1]:
                if line.startswith(b"id: "):
                    self.arrived.setdefault(int(line[4:]), now)
                    self.opened.set()
            buffer = buffer[buffer.rfind(b"\n") + 1 :]


def delivery_latency(port: int, token: str, graph: str) -> list[float]:
    from django.utils import timezone

    from editor.engine import StatusFold
    from editor.engine.ports import Envelope
    from editor.engine.records import timestamp
    from editor.store import OrmRunStore

    run_id = queued_run(graph)
    store = OrmRunStore()
    fold = StatusFold()
    for envelope in store.load_run(run_id).events:
        fold.feed(envelope)
    reader = StreamReader(port, token, run_id)
    reader.start()
    assert reader.opened.wait(30), "the stream did not open"
    committed: dict[int, float] = {}
    for seq in range(1, EVENTS + 1):
        kind = "NodeEntered" if seq % 2 else "NodeExited"
        envelope = Envelope(run_id, seq, timestamp(timezone.now()), kind, {"node": f"n{seq // 2}"})
        fold.feed(envelope)
        store.record(run_id, [envelope], fold.status())
        committed[seq] = time.perf_counter()
        time.sleep(APPEND_EVERY)
    deadline = time.monotonic() + 30
    while len(reader.arrived) <= EVENTS and time.monotonic() < deadline:
        time.sleep(0.05)
    reader.sock.shutdown(socket.SHUT_RDWR)
    reader.sock.close()
    missing = [seq for seq in committed if seq not in reader.arrived]
    assert not missing, f"{len(missing)} events never arrived"
    return [reader.arrived[seq] - committed[seq] for seq in committed]


# --- 2. Idle streams ------------------------------------------------------------------------------


async def open_streams(port: int, token: str, runs: list[str]) -> list[Any]:
    async def one(run_id: str) -> Any:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(
            f"GET /v1/runs/{run_id}/events?from_seq=0 HTTP/1.1\r\nHost: {HOST}\r\n"
            f"Authorization: Bearer {token}\r\n\r\n".encode()
        )
        await writer.drain()
        received = b""
        while b"id: 0" not in received:
            received += await asyncio.wait_for(reader.read(65536), 60)
        return writer

    writers = []
    for start in range(0, len(runs), 50):  # a burst of 50 connections at a time
        writers += await asyncio.gather(*(one(run_id) for run_id in runs[start : start + 50]))
    return writers


def health_latencies(port: int) -> list[float]:
    latencies = []
    for _ in range(HEALTH_REQUESTS):
        start = time.perf_counter()
        status, _ = get(port, "/healthz")
        assert status == 200
        latencies.append(time.perf_counter() - start)
    return latencies


def idle_streams(port: int, pid: int, token: str, graph: str) -> dict[str, Any]:
    runs = [queued_run(graph) for _ in range(STREAMS)]
    get(port, f"/v1/runs/{runs[0]}/events?limit=1", token)  # warm: the API's first request
    before_health = health_latencies(port)
    before = {"rss": memory_kib(pid), "threads": threads(pid)}
    loop = asyncio.new_event_loop()
    writers = loop.run_until_complete(open_streams(port, token, runs))
    time.sleep(1.0)  # let every stream settle into its wait
    during = {"rss": memory_kib(pid), "threads": threads(pid)}
    during_health = health_latencies(port)
    for writer in writers:
        writer.close()
    loop.run_until_complete(asyncio.sleep(0.1))
    loop.close()
    return {
        "before": before,
        "during": during,
        "per_stream_kib": (during["rss"] - before["rss"]) / STREAMS,
        "health_before": before_health,
        "health_during": during_health,
    }


# --- 3. The whole runs list -----------------------------------------------------------------------


def many_runs(graph: str, count: int) -> None:
    from django.utils import timezone

    from editor.models import Run

    now = timezone.now()
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    batch = []
    for number in range(count):
        batch.append(
            Run(
                graph_id=graph,
                input={"n": number},
                labels={"batch": "bench"} if number % 2 else {},
                state="completed",
                status={"state": "completed", "output": {"n": number, "text": "x" * 40}},
                event_count=4,
                first_recorded_at=stamp,
                last_recorded_at=stamp,
            )
        )
        if len(batch) == 2_000:
            Run.objects.bulk_create(batch)
            batch = []
    Run.objects.bulk_create(batch)


def whole_list(port: int, pid: int, token: str) -> dict[str, Any]:
    get(port, "/v1/runs?limit=50", token)  # warm: the list's code and a page of rows
    idle = memory_kib(pid)
    peak = [idle]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak.append(memory_kib(pid))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    status, body = get(port, "/v1/runs", token)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    assert status == 200
    listed = json.loads(body)["runs"]
    return {"idle": idle, "peak": max(peak), "rows": len(listed), "seconds": elapsed}


# --- Running it -----------------------------------------------------------------------------------


def report(name: str, env: dict[str, str]) -> None:
    from django.db import connections

    django_here(env)
    token, graph = token_and_graph()
    print(f"-- {name}")
    with web_server(env) as (port, pid):
        latencies = delivery_latency(port, token, graph)
        print(
            f"commit → frame, {EVENTS} events (one every {APPEND_EVERY * 1000:.0f} ms): "
            f"p50 {ms(percentile(latencies, 0.5))}, p95 {ms(percentile(latencies, 0.95))}, "
            f"max {ms(max(latencies))}"
        )
        idle = idle_streams(port, pid, token, graph)
        print(
            f"{STREAMS} idle streams on one process: RSS {idle['before']['rss'] / 1024:.1f} → "
            f"{idle['during']['rss'] / 1024:.1f} MiB ({idle['per_stream_kib']:.1f} KiB a stream), "
            f"threads {idle['before']['threads']} → {idle['during']['threads']}; /healthz p50 "
            f"{ms(statistics.median(idle['health_before']))} → "
            f"{ms(statistics.median(idle['health_during']))}, p95 "
            f"{ms(percentile(idle['health_before'], 0.95))} → "
            f"{ms(percentile(idle['health_during'], 0.95))}"
        )
    many_runs(graph, LISTED_RUNS)
    with web_server(env) as (port, pid):
        listed = whole_list(port, pid, token)
        print(
            f"GET /v1/runs unpaged, {listed['rows']} rows in {listed['seconds']:.1f} s: RSS idle "
            f"{listed['idle'] / 1024:.1f} MiB, peak {listed['peak'] / 1024:.1f} MiB "
            f"({listed['peak'] / listed['idle']:.2f}× idle)"
        )
    connections.close_all()


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    if which == "both":
        # Each database in a process of its own: Django is set up once per process.
        for name in ("sqlite", "postgresql"):
            subprocess.run([sys.executable, __file__, name], check=True)
        return
    with tempfile.TemporaryDirectory(prefix="gatehouse-bench-streams-") as folder:
        directory = Path(folder)
        if which == "sqlite":
            report("SQLite", environment(directory, f"sqlite:///{directory / 'bench.sqlite3'}"))
            return
        if not postgres_available():
            print("-- PostgreSQL: skipped (no PostgreSQL server binaries here)")
            return
        port = int(os.environ.get("GATEHOUSE_BENCH_PG_PORT", "55444"))
        with private_postgres(port, prefix="gatehouse-bench-pg-") as server:
            report("PostgreSQL", environment(directory, server.url))


if __name__ == "__main__":
    main()
