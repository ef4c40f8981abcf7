"""A throwaway PostgreSQL server for the fault tests and the benchmarks: ``initdb`` in a
temporary folder, listening on loopback only, on a port of the caller's; stopped and removed at
the end. A system PostgreSQL is never touched. Needs PostgreSQL's server binaries only (no
Python package beyond psycopg, which the app itself needs).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

__all__ = ["PrivatePostgres", "postgres_available", "private_postgres"]

HOST = "127.0.0.1"
#: Seconds: far beyond what each step takes, so only a real hang fails.
BOUND = 120.0


def _postgres_bin() -> Path:
    configured = os.environ.get("GATEHOUSE_PG_BIN")
    candidates = [Path(configured)] if configured else []
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for candidate in candidates:
        if (candidate / "initdb").exists():
            return candidate
    raise RuntimeError(
        "the fault tests need PostgreSQL's server binaries (initdb, pg_ctl); none under "
        "/usr/lib/postgresql/*/bin. Install them (Debian: apt-get install postgresql) or set "
        "GATEHOUSE_PG_BIN to their folder."
    )


class PrivatePostgres:
    """A throwaway cluster in a temporary folder, trusting loopback connections."""

    def __init__(self, base: Path, port: int) -> None:
        self.bin = _postgres_bin()
        self.base = base
        self.data = base / "data"
        self.sockets = base / "sockets"
        self.log = base / "postgres.log"
        self.port = port
        self.url = f"postgres://postgres@{HOST}:{port}/gatehouse"

    def _run(self, *command: str) -> None:
        # initdb and postgres refuse to run as root: as root, run them as the postgres user.
        prefix = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        done = subprocess.run(
            [*prefix, *command], cwd=self.base, capture_output=True, text=True, timeout=BOUND
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{command[0]} failed: {done.stdout}{done.stderr}\n{log}")

    def initialise(self) -> None:
        self.sockets.mkdir()
        if os.getuid() == 0:
            shutil.chown(self.base, "postgres")
            shutil.chown(self.sockets, "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses={HOST} -k {self.sockets} -c fsync=off "
            "-c max_connections=60"
        )
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stops the server at once (``-m fast``): open sessions are cut off."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def connect(self, database: str = "gatehouse") -> psycopg.Connection[Any]:
        return psycopg.connect(
            host=HOST, port=self.port, user="postgres", dbname=database, autocommit=True
        )


def postgres_available() -> bool:
    """Whether PostgreSQL's server binaries are installed here."""
    try:
        _postgres_bin()
    except RuntimeError:
        return False
    return True


@contextlib.contextmanager
def private_postgres(port: int, *, prefix: str = "gatehouse-pg-") -> Iterator[PrivatePostgres]:
    """A running cluster with an empty database ``gatehouse``; gone afterwards."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    server = PrivatePostgres(base, port)
    try:
        server.initialise()
        server.start()
        with server.connect("postgres") as connection:
            connection.execute("CREATE DATABASE gatehouse")
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.stop()
        shutil.rmtree(base, ignore_errors=True)
