"""The processes the hostile corpus attacks, and what it measures of them.

* :class:`Database`: a SQLite file in a fresh ``var/`` folder, or, when ``DATABASE_URL``
  names a PostgreSQL server (CI's second pass), a database of its own created on that server
  and dropped at the end;
* :class:`Server`: the Dockerfile's ``CMD`` (gunicorn with uvicorn workers), one worker
  process, on a free loopback port;
* :class:`Worker`: ``manage.py db_worker --no-reload``, as the docs start one;
* :class:`Watch`: samples ``/proc/<pid>/status`` of those processes every 20 ms and keeps
  each one's peak resident memory and thread count, and the most ``dot`` processes the web
  process had at once.

Everything listens on loopback only and is stopped at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
HOST = "127.0.0.1"
#: Seconds a process may take to start or stop: far beyond what it takes, so only a hang fails.
START_BOUND = 90.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def wait_until(condition: Callable[[], Any], what: str, bound: float) -> Any:
    """Polls ``condition`` until it is truthy (its value), failing after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up after {bound:.0f} s waiting until {what}"
        time.sleep(0.05)


def manage(
    *args: str, env: dict[str, str], timeout: float = START_BOUND
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --- The database ------------------------------------------------------------------------------


class Database:
    """Where the corpus's processes keep their state; ``url`` is their ``DATABASE_URL``
    (``None``: the default SQLite file under ``var``)."""

    def __init__(self, folder: Path) -> None:
        self.var = folder / "var"  # created by the first command, as on a fresh checkout
        self.server_url = os.environ.get("DATABASE_URL", "")
        self.engine = "postgresql" if self.server_url.startswith("postgres") else "sqlite"
        self.url: str | None = None
        self.name = ""

    @property
    def sqlite_file(self) -> Path:
        return self.var / "gatehouse.sqlite3"

    def create(self) -> None:
        if self.engine == "sqlite":
            return
        import psycopg

        self.name = f"gatehouse_hostile_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.server_url, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{self.name}"')
        parts = urlsplit(self.server_url)
        self.url = urlunsplit(parts._replace(path=f"/{self.name}"))

    def drop(self) -> None:
        if self.engine == "sqlite" or not self.name:
            return
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


# --- Measuring processes -----------------------------------------------------------------------


@dataclass
class Peaks:
    """The most a process held at once while it was watched."""

    rss_kib: int = 0
    threads: int = 0
    dot: int = 0  # `dot` processes it had running at once
    #: Its resident memory when the watch was last reset.
    start_rss_kib: int = 0

    @property
    def rss_mib(self) -> float:
        return self.rss_kib / 1024

    @property
    def growth_mib(self) -> float:
        """How much more memory it held at its peak than when the watch was reset."""
        return (self.rss_kib - self.start_rss_kib) / 1024


def status_of(pid: int) -> tuple[int, int] | None:
    """``(VmRSS in KiB, Threads)`` of a live process, ``None`` once it has gone."""
    rss = threads = 0
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return rss, threads


def children_of(pid: int) -> list[int]:
    """The child processes of ``pid`` (of every one of its threads)."""
    found: list[int] = []
    with contextlib.suppress(FileNotFoundError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError):
                found += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return ""


class Watch(threading.Thread):
    """Samples the watched processes every ``every`` seconds; :meth:`peaks` since :meth:`reset`."""

    def __init__(self, every: float = 0.02) -> None:
        super().__init__(name="hostile-watch", daemon=True)
        self.every = every
        self.pids: dict[str, Callable[[], int | None]] = {}
        self._peaks: dict[str, Peaks] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def watch(self, name: str, pid: Callable[[], int | None]) -> None:
        """Watch the process ``pid()`` names (looked up at each sample: it may be replaced)."""
        with self._lock:
            self.pids[name] = pid
            self._peaks[name] = Peaks()

    def reset(self) -> None:
        with self._lock:
            self._peaks = {name: Peaks() for name in self.pids}
        self.sample()
        with self._lock:
            for peaks in self._peaks.values():
                peaks.start_rss_kib = peaks.rss_kib

    def peaks(self) -> dict[str, Peaks]:
        self.sample()
        with self._lock:
            return {name: Peaks(**vars(peaks)) for name, peaks in self._peaks.items()}

    def sample(self) -> None:
        with self._lock:
            for name, pid_of in self.pids.items():
                pid = pid_of()
                if pid is None:
                    continue
                found = status_of(pid)
                if found is None:
                    continue
                peaks = self._peaks[name]
                peaks.rss_kib = max(peaks.rss_kib, found[0])
                peaks.threads = max(peaks.threads, found[1])
                dots = sum(command_name(child) == "dot" for child in children_of(pid))
                peaks.dot = max(peaks.dot, dots)

    def run(self) -> None:
        while not self._stopped.wait(self.every):
            self.sample()

    def stop(self) -> None:
        self._stopped.set()
        self.join()


# --- The web server and the worker -------------------------------------------------------------


def image_command() -> list[str]:
    """The Dockerfile's ``CMD`` (its exec form), run from this virtual environment."""
    found = re.search(r"^CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert found, "the Dockerfile has no CMD in exec form"
    command = json.loads(found.group(1))
    assert command[0] == "gunicorn", command
    return [PYTHON, "-m", "gunicorn", *command[1:]]


@dataclass
class Started:
    """A process the corpus started, with its output in ``log``."""

    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_process(command: list[str], env: dict[str, str], log: Path) -> Started:
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    return Started(process, log)


@dataclass
class Server:
    """The image's command serving on ``url``; ``serving_pid()`` is its one uvicorn worker."""

    started: Started
    url: str

    def serving_pid(self) -> int | None:
        children = children_of(self.started.pid)
        return children[0] if children else None

    def healthy(self) -> bool:
        import requests

        assert self.started.process.poll() is None, self.started.output()[-3000:]
        try:
            return requests.get(self.url + "/healthz", timeout=10).status_code == 200
        except (requests.ConnectionError, requests.Timeout):
            return False


def start_server(env: dict[str, str], folder: Path, log: str = "server.log") -> Server:
    port = free_port()
    env = {
        **env,
        "GUNICORN_CMD_ARGS": f"--bind {HOST}:{port} --workers 1 --timeout 60 --no-control-socket",
    }
    server = Server(start_process(image_command(), env, folder / log), f"http://{HOST}:{port}")
    wait_until(server.healthy, "the server answered /healthz", START_BOUND)
    return server


@dataclass
class Workers:
    """One ``db_worker`` at a time, with the corpus's environment plus a case's own settings:
    a case that needs other settings gets a worker started with them, the next case the
    shared one again."""

    env: dict[str, str]
    folder: Path
    current: Started | None = None
    settings: dict[str, str] = field(default_factory=dict)
    count: int = 0

    def pid(self) -> int | None:
        return self.current.pid if self.current else None

    def ensure(self, settings: dict[str, str]) -> Started:
        if self.current is not None and self.current.process.poll() is None:
            if settings == self.settings:
                return self.current
            self.current.stop()
        self.count += 1
        log = self.folder / f"worker-{self.count}.log"
        self.current = start_process(
            [
                PYTHON,
                "manage.py",
                "db_worker",
                "--no-reload",
                "--no-startup-delay",
                "--interval",
                "0.1",
            ],
            {**self.env, **settings},
            log,
        )
        self.settings = dict(settings)
        return self.current

    def logs(self) -> str:
        return "\n".join(
            path.read_text(errors="replace") for path in sorted(self.folder.glob("worker-*.log"))
        )

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()


def counting_dot(folder: Path) -> tuple[str, Path]:
    """A folder holding a ``dot`` that notes each time it is started (in the file returned),
    then is Graphviz's own ``dot``: put the folder first on the web server's ``PATH``."""
    real = shutil.which("dot")
    assert real, "Graphviz's dot is not installed (make test installs it)"
    binaries, calls = folder / "bin", folder / "dot-calls"
    binaries.mkdir()
    calls.touch()
    wrapper = binaries / "dot"
    wrapper.write_text(
        f'#!/bin/sh\necho "$$" >> {shlex.quote(str(calls))}\nexec {shlex.quote(real)} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(binaries), calls


@contextlib.contextmanager
def running(
    env: dict[str, str], server_env: dict[str, str], folder: Path
) -> Iterator[tuple[Server, Workers]]:
    """The server (``server_env``) and the worker (``env``), stopped at the end whatever
    happens."""
    workers = Workers(env, folder)
    server: Server | None = None
    try:
        server = start_server(server_env, folder)
        workers.ensure({})
        yield server, workers
    finally:
        workers.stop()
        if server is not None:
            server.started.stop()
