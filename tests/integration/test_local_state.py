"""Local state is private: ``var/`` is 0700, the SQLite database and its ``-wal``/``-shm`` files
0600, whatever the ``umask``; looser ones are tightened; and ``migrate`` or ``check`` on a fresh
checkout creates ``var/``, or says in one line what to do."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db.utils import ConnectionHandler
from pytest_django import Settings

from editor.settings import database_from_url

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def lax_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def connect_and_write(path: Path, django_db_blocker: Any) -> None:
    connections = ConnectionHandler(
        {"default": database_from_url(f"sqlite:///{path}", base_dir=path.parent)}
    )
    with django_db_blocker.unblock():
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("CREATE TABLE IF NOT EXISTS t (x)")
                cursor.execute("INSERT INTO t VALUES (1)")
        finally:
            connections.close_all()


def test_a_new_database_and_its_folder_are_private(
    tmp_path: Path, settings: Settings, django_db_blocker: Any, lax_umask: None
) -> None:
    var = tmp_path / "var"
    settings.GATEHOUSE_VAR_DIR = var
    database = var / "gatehouse.sqlite3"

    connect_and_write(database, django_db_blocker)

    assert mode(var) == 0o700
    assert mode(database) == 0o600
    companions = [database.with_name(database.name + suffix) for suffix in ("-wal", "-shm")]
    for companion in companions:
        if companion.exists():  # SQLite may have removed them on close
            assert mode(companion) == 0o600


def test_the_write_ahead_log_of_an_open_database_is_private(
    tmp_path: Path, settings: Settings, django_db_blocker: Any, lax_umask: None
) -> None:
    var = tmp_path / "var"
    settings.GATEHOUSE_VAR_DIR = var
    database = var / "gatehouse.sqlite3"
    connections = ConnectionHandler(
        {"default": database_from_url(f"sqlite:///{database}", base_dir=tmp_path)}
    )
    with django_db_blocker.unblock():
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("CREATE TABLE t (x)")
            wal = database.with_name(database.name + "-wal")
            shm = database.with_name(database.name + "-shm")
            assert wal.exists() and shm.exists()  # while the connection is open
            assert mode(wal) == 0o600
            assert mode(shm) == 0o600
        finally:
            connections.close_all()


def test_a_looser_folder_and_database_are_tightened(
    tmp_path: Path, settings: Settings, django_db_blocker: Any
) -> None:
    var = tmp_path / "var"
    var.mkdir(mode=0o755)
    var.chmod(0o755)
    database = var / "gatehouse.sqlite3"
    connect_and_write(database, django_db_blocker)
    database.chmod(0o644)
    wal = database.with_name(database.name + "-wal")
    wal.write_bytes(b"")
    wal.chmod(0o666)
    settings.GATEHOUSE_VAR_DIR = var

    connect_and_write(tmp_path / "var" / "gatehouse.sqlite3", django_db_blocker)

    assert mode(var) == 0o700
    assert mode(database) == 0o600
    if wal.exists():
        assert mode(wal) == 0o600


def manage(var: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_URL_FILE")},
        "DEBUG": "false",
        "SECRET_KEY": "x" * 60,
        "ALLOWED_HOSTS": "localhost",
        "GATEHOUSE_VAR_DIR": str(var),
    }
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("command", [["check"], ["migrate", "--no-input", "--verbosity", "0"]])
def test_a_command_on_a_fresh_checkout_creates_a_private_var(
    tmp_path: Path, command: list[str]
) -> None:
    var = tmp_path / "fresh" / "var"

    done = manage(var, *command)

    assert done.returncode == 0, done.stderr[-2000:]
    assert mode(var) == 0o700
    assert mode(var / "gatehouse.sqlite3") == 0o600


def test_a_var_that_cannot_be_created_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    var = blocker / "var"

    done = manage(var, "migrate", "--no-input")

    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"Configuration error: cannot create {var} ")
    assert f"mkdir -m 700 {var}" in lines[0]
    assert "Traceback" not in done.stderr
