"""What the load test samples while it runs: ``/healthz`` every second, and the resident
memory of every server process every 5 s (Linux ``/proc``)."""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections import defaultdict
from pathlib import Path

from load_wire import HOST

HEALTH_TIMEOUT = 10.0
#: At most this many health checks in flight: a stalled server is sampled, not flooded.
HEALTH_IN_FLIGHT = 12


class HealthSampler:
    """``GET /healthz`` once a second on a fresh connection, each in its own thread so that a
    slow answer does not delay the next sample; latencies (ms) and failures."""

    def __init__(self, port: int, stop: threading.Event) -> None:
        self.port = port
        self.stop = stop
        self.samples: list[tuple[float, float]] = []  # (seconds since start, ms)
        self.failures: list[tuple[float, str]] = []  # (seconds since start, what)
        self.lock = threading.Lock()
        self.started = 0.0
        self.thread = threading.Thread(target=self._tick, daemon=True)
        self.in_flight = threading.Semaphore(HEALTH_IN_FLIGHT)

    def start(self) -> None:
        self.started = time.monotonic()
        self.thread.start()

    def _tick(self) -> None:
        tick = 0
        while not self.stop.is_set():
            if self.in_flight.acquire(blocking=False):
                threading.Thread(target=self._sample, daemon=True).start()
            else:
                with self.lock:
                    self.failures.append((time.monotonic() - self.started, "too many in flight"))
            tick += 1
            self.stop.wait(max(0.0, self.started + tick - time.monotonic()))

    def _sample(self) -> None:
        began = time.monotonic()
        at = began - self.started
        try:
            connection = http.client.HTTPConnection(HOST, self.port, timeout=HEALTH_TIMEOUT)
            try:
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                response.read()
                status = response.status
            finally:
                connection.close()
        except (OSError, http.client.HTTPException) as error:
            with self.lock:
                self.failures.append((at, type(error).__name__))
            return
        finally:
            self.in_flight.release()
        elapsed = (time.monotonic() - began) * 1000
        with self.lock:
            if status == 200:
                self.samples.append((at, elapsed))
            else:
                self.failures.append((at, str(status)))

    def join(self) -> None:
        self.thread.join(timeout=5)
        # The last samples in flight end within their timeout.
        for _ in range(HEALTH_IN_FLIGHT):
            self.in_flight.acquire(timeout=HEALTH_TIMEOUT + 1)


def rss_bytes(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def pss_bytes(pid: int) -> int | None:
    """The proportional set size: shared pages split between the processes sharing them, so
    that PostgreSQL's processes summed count its shared buffers once (RSS when unreadable)."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return rss_bytes(pid)
    for line in rollup.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return rss_bytes(pid)


def children(pid: int) -> list[int]:
    """``pid``'s child processes now (``/proc/<pid>/task/*/children``)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(child) for child in (task / "children").read_text().split()]
    return found


class MemorySampler:
    """Every ``interval`` seconds the RSS of: the gunicorn master, each of its workers (by pid,
    in the order first seen), each run worker, and PostgreSQL's processes summed (their PSS)."""

    def __init__(
        self,
        stop: threading.Event,
        gunicorn: int | None,
        db_workers: list[int],
        postgres: int | None,
        interval: float = 5.0,
    ) -> None:
        self.stop = stop
        self.gunicorn = gunicorn
        self.db_workers = db_workers
        self.postgres = postgres
        self.interval = interval
        self.series: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.web_workers: dict[int, str] = {}
        self.gone: dict[str, float] = {}  # a web worker that exited: when
        self.started = 0.0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.started = time.monotonic()
        self.thread.start()

    def _run(self) -> None:
        tick = 0
        while not self.stop.is_set():
            self.sample()
            tick += 1
            self.stop.wait(max(0.0, self.started + tick * self.interval - time.monotonic()))
        self.sample()

    def sample(self) -> None:
        at = time.monotonic() - self.started
        named: dict[str, float | None] = {}
        if self.gunicorn is not None:
            named["web master"] = rss_bytes(self.gunicorn)
            alive = set(children(self.gunicorn))
            for pid in sorted(alive):
                if pid not in self.web_workers:
                    self.web_workers[pid] = f"web worker {len(self.web_workers) + 1}"
                named[self.web_workers[pid]] = rss_bytes(pid)
            for pid, name in self.web_workers.items():
                if pid not in alive and name not in self.gone:
                    self.gone[name] = at
        for index, pid in enumerate(self.db_workers):
            named[f"run worker {index + 1}"] = rss_bytes(pid)
        if self.postgres is not None:
            pids = [self.postgres, *children(self.postgres)]
            sizes = [pss for pid in pids if (pss := pss_bytes(pid)) is not None]
            named["PostgreSQL (all processes, PSS)"] = float(sum(sizes)) if sizes else None
        for name, size in named.items():
            if size is not None:
                self.series[name].append((at, float(size)))

    def join(self) -> None:
        self.thread.join(timeout=self.interval + 5)
