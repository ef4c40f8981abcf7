"""Fault tests (``make faults``): real processes against a private PostgreSQL server.

They start their own PostgreSQL cluster (``initdb`` under a temporary folder, listening on
loopback only, on ``GATEHOUSE_FAULTS_PG_PORT``, default 55443), and gunicorn and ``db_worker``
processes against it, then break things: a worker killed with ``kill -9``, the database
restarted while runs and draft edits are in flight, request bodies at and over the cap. The
cluster is stopped and removed at the end; a system PostgreSQL is never touched.

They are slow and need PostgreSQL's server binaries, so ``make test`` leaves them out: this
folder's tests are collected only when ``GATEHOUSE_FAULTS=1`` (``make faults`` sets it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.processes import (
    PrivatePostgres,
    Processes,
    api_token,
    migrated_environment,
    start_postgres,
)

if os.environ.get("GATEHOUSE_FAULTS") != "1":
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PrivatePostgres]:
    with start_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def environment(postgres: PrivatePostgres) -> dict[str, str]:
    """The environment of every process: the private database, migrated; the slow test tools;
    a two-second run lease and a sweep every second, so a stranded run is reclaimed quickly."""
    return migrated_environment(postgres)


@pytest.fixture(scope="session")
def token(environment: dict[str, str]) -> str:
    """An API token of a user who holds every role."""
    return api_token(environment)


@pytest.fixture
def processes(environment: dict[str, str], tmp_path: Path) -> Iterator[Processes]:
    """Starts workers and servers; stops whichever are left at the end."""
    with Processes(environment, tmp_path) as started:
        yield started
