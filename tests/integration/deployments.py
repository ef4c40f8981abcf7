"""A real deployment for one test module: gunicorn (uvicorn workers, as the image runs it) and
``db_worker`` processes on a database of the module's own, and an API token of a user with
every role.

The database is a SQLite file in the module's folder, or, when the suite runs on PostgreSQL (CI's
second pass), a database created for the module on the same server and dropped after it::

    @pytest.fixture(scope="module")
    def deployment() -> Iterator[Deployment]:
        with deployed("gatehouse-client-", {"GATEHOUSE_TOOL_MODULES": "…"}) as running:
            yield running
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import psycopg
from django.conf import settings
from salvor import AsyncClient, Client

from tests.faults.processes import Processes, Server, manage

__all__ = ["Deployment", "deployed", "module_database"]


def module_database(folder: Path) -> Iterator[str]:
    """A ``DATABASE_URL`` of a database for one module alone; dropped afterwards."""
    default = settings.DATABASES["default"]
    if "postgresql" not in default["ENGINE"]:
        yield f"sqlite:///{folder / 'gatehouse.sqlite3'}"
        return
    name = f"gatehouse_module_{uuid.uuid4().hex[:12]}"
    login = {
        "host": default["HOST"] or None,
        "port": default["PORT"] or None,
        "user": default["USER"] or None,
        "password": default["PASSWORD"] or None,
        "dbname": default["NAME"],
        "autocommit": True,
    }
    with psycopg.connect(**login) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    credentials = f"{default['USER']}:{default['PASSWORD']}@" if default["USER"] else ""
    try:
        yield f"postgres://{credentials}{default['HOST']}:{default['PORT'] or 5432}/{name}"
    finally:
        with psycopg.connect(**login) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Deployment:
    """The server, its workers and an API token of a user with every role."""

    def __init__(
        self,
        processes: Processes,
        server: Server,
        token: str,
        folder: Path,
        workers: list[subprocess.Popen[bytes]],
    ) -> None:
        self.processes = processes
        self.server = server
        self.token = token
        self.folder = folder
        self.environment = processes.environment
        self.workers = workers

    def client(self) -> Client:
        return Client(self.server.url, self.token, max_stream_retries=20)

    def async_client(self) -> AsyncClient:
        return AsyncClient(self.server.url, self.token, max_stream_retries=20)

    def kill_workers(self) -> None:
        """``kill -9`` every worker, then start a fresh one."""
        for worker in self.workers:
            worker.send_signal(signal.SIGKILL)
        for worker in self.workers:
            worker.wait()
        self.workers = [self.processes.worker()]

    def worker_log(self, worker: subprocess.Popen[bytes] | None = None) -> str:
        """What a worker (the first running one by default) wrote to stdout and stderr."""
        process = worker if worker is not None else self.workers[0]
        return self.processes.logs[process.pid].read_text(errors="replace")


@contextlib.contextmanager
def deployed(
    prefix: str,
    environment: Mapping[str, str] | None = None,
    prepare: Callable[[Path], Mapping[str, str]] | None = None,
) -> Iterator[Deployment]:
    """Migrate a fresh database, create the user and token, start gunicorn and one worker with
    ``environment`` added to the suite's own, and what ``prepare`` returns given the
    deployment's folder (files the processes will read: a catalogue); stop them all and drop the
    database at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    databases = module_database(folder)
    try:
        url = next(databases)
        prepared = prepare(folder) if prepare is not None else {}
        variables = {
            **{
                k: v
                for k, v in os.environ.items()
                if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL_FILE")
            },
            "DJANGO_SETTINGS_MODULE": "editor.settings",
            "DATABASE_URL": url,
            "DEBUG": "false",
            "SECRET_KEY": "deployment-tests-only-secret-key-not-for-production",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "GATEHOUSE_SECURE_COOKIES": "false",
            "GATEHOUSE_VAR_DIR": str(folder),
            "GATEHOUSE_RUN_LEASE_SECONDS": "2",
            "GATEHOUSE_SWEEP_SECONDS": "1",
            **(environment or {}),
            **prepared,
        }
        # One process migrates and makes the user: each Django start-up costs a second or two.
        code = (
            "from django.core.management import call_command\n"
            "call_command('migrate', interactive=False, verbosity=0)\n"
            "from django.contrib.auth import get_user_model\n"
            "from django.contrib.auth.models import Group\n"
            "from editor.services.tokens import create_token\n"
            "user = get_user_model().objects.create_user('client', password='unused-9431')\n"
            "user.groups.set(Group.objects.all())\n"
            "print('TOKEN', create_token(user, 'client')[1])\n"
        )
        created = manage("shell", "--no-imports", "-c", code, env=variables)
        assert created.returncode == 0, created.stderr
        token = created.stdout.split("TOKEN ")[-1].strip()
        with Processes(variables, folder) as processes:
            worker = processes.worker()  # starts while gunicorn does
            server = processes.server(workers=1)
            yield Deployment(processes, server, token, folder, [worker])
    finally:
        databases.close()
        shutil.rmtree(folder, ignore_errors=True)
