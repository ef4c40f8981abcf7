"""The configured database engine behaves as the app relies on, on SQLite and on PostgreSQL.

The suite runs twice in CI (`.ci/run`): on SQLite, the default, and with ``DATABASE_URL`` naming
a PostgreSQL server. Each half of this module runs on its own engine and skips on the other with
a reason naming the engine in use, so the ``-ra`` summary of each pass shows which one it had.
``GATEHOUSE_TEST_EXPECT_DATABASE`` (``sqlite`` or ``postgresql``, set by `.ci/run`) turns a pass
that silently ran on the wrong engine into a failure.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.utils import ConnectionHandler

pytestmark = pytest.mark.django_db

SCRATCH = "database_check"


def engine_in_use() -> str:
    """The engine and its version, for skip reasons: "SQLite 3.40.1", "PostgreSQL 15.18 …"."""
    if connection.vendor == "sqlite":
        return f"SQLite {sqlite3.sqlite_version}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        (version,) = cursor.fetchone()
    return version.split(" (")[0].split(",")[0]


@pytest.fixture
def second_connection() -> Iterator[BaseDatabaseWrapper]:
    """Another connection with the configured settings, registered under its own alias."""
    handler = ConnectionHandler({"default": dict(connection.settings_dict)})
    other = handler["default"]
    other.alias = SCRATCH
    connections[SCRATCH] = other
    try:
        yield other
    finally:
        del connections[SCRATCH]
        other.close()


def test_the_suite_runs_on_the_expected_engine() -> None:
    expected = os.environ.get("GATEHOUSE_TEST_EXPECT_DATABASE")
    if not expected:
        pytest.skip(f"no engine expected; this run uses {engine_in_use()}")

    assert connection.vendor == expected, f"expected {expected}, ran on {engine_in_use()}"


def test_sqlite_runs_in_wal_mode_with_immediate_transactions(
    tmp_path: Path, second_connection: BaseDatabaseWrapper
) -> None:
    if connection.vendor != "sqlite":
        pytest.skip(f"SQLite only; this run uses {engine_in_use()}")
    # The test database lives in memory, where there is no WAL: the configured settings are
    # checked on a file instead.
    path = tmp_path / "db.sqlite3"
    second_connection.settings_dict["NAME"] = str(path)
    with second_connection.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x)")
        assert cursor.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert cursor.execute("PRAGMA busy_timeout").fetchone() == (20_000,)

    # A transaction holds the write lock from its start, even before it writes, so a concurrent
    # writer waits at BEGIN (the busy timeout) instead of failing part-way with "locked".
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        with transaction.atomic(using=SCRATCH):
            second_connection.cursor().execute("SELECT count(*) FROM t")
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_postgresql_answers_and_keeps_sessions_apart(
    second_connection: BaseDatabaseWrapper,
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip(f"PostgreSQL only; this run uses {engine_in_use()}")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version(), current_setting('server_encoding'), "
            "current_setting('transaction_isolation'), current_database()"
        )
        version, encoding, isolation, database = cursor.fetchone()
    assert version.startswith("PostgreSQL ")
    assert connection.pg_version >= 130_000  # Django 6 supports PostgreSQL 14 and later
    assert encoding == "UTF8"
    assert isolation == "read committed"
    assert database.startswith("test_")
    assert connection.features.has_select_for_update_skip_locked
    # Connections are kept between requests, and checked before they are reused.
    assert connection.settings_dict["CONN_MAX_AGE"] > 0
    assert connection.settings_dict["CONN_HEALTH_CHECKS"]

    # Two sessions on one server: a lock that one holds, the other cannot take.
    lock = "SELECT pg_try_advisory_lock(712001)"
    with connection.cursor() as mine, second_connection.cursor() as theirs:
        mine.execute(lock)
        assert mine.fetchone() == (True,)
        theirs.execute(lock)
        assert theirs.fetchone() == (False,)
        mine.execute("SELECT pg_advisory_unlock(712001)")
        assert mine.fetchone() == (True,)
