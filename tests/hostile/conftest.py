"""The installation the hostile corpus attacks, shared by every attack of a session.

One database (SQLite in a fresh ``var/``, or a database of its own on ``DATABASE_URL``'s
PostgreSQL server), migrated as on a first start; one web server (the Dockerfile's ``CMD``);
one ``db_worker`` (an attack that needs other worker settings gets a worker of its own, then
the next attack the shared one again); two users; a loopback HTTP server that counts every
request and a file holding a secret, which no attack may reach.

The settings are the production defaults with small limits, so that each attack trips its
limit in seconds (README.md, *The installation*).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.processes import (
    ROOT,
    Database,
    Watch,
    counting_dot,
    manage,
    running,
)
from tests.hostile.steps import Corpus, Users
from tests.load.load_image import image_environment
from tests.outside_world import serving_counter, write_secret_file

if not Path("/proc/self/status").exists() or not sys.platform.startswith("linux"):
    collect_ignore_glob = ["test_*.py"]  # it measures the processes through /proc

PASSWORD = "hostile-corpus-password-5120"

#: The limits every process of the corpus runs with (README.md, *The installation*).
LIMITS = {
    "GATEHOUSE_RUN_WALL_TIME": "20",
    "GATEHOUSE_RUN_WATCHDOG_GRACE": "2",
    "GATEHOUSE_RUN_LEASE_SECONDS": "3",
    "GATEHOUSE_SWEEP_SECONDS": "1",
    "GATEHOUSE_RUN_MAX_ATTEMPTS": "2",
    "GATEHOUSE_RUN_RETRY_BACKOFF": "1",
    "GATEHOUSE_RUN_MAP_CONCURRENCY": "8",
    "GATEHOUSE_RUN_MAX_MAP_ITEMS": "300",
    "GATEHOUSE_AGENT_MAX_STEPS": "5",
    "GATEHOUSE_TOOL_TIMEOUT": "5",
    "GATEHOUSE_GRAPHVIZ_TIMEOUT": "1",
    "GATEHOUSE_GRAPHVIZ_WAIT": "1",
    "GATEHOUSE_GRAPHVIZ_MAX_PROCESSES": "2",
    "GATEHOUSE_WEB_THREADS": "4",
    # A request's headers within 2 s of its connection (or of the answer before); 2 s of
    # silence between kept-alive requests (editor.server).
    "GATEHOUSE_HEADER_TIMEOUT": "2",
    "GATEHOUSE_KEEP_ALIVE_TIMEOUT": "2",
    # Streams check their credentials every second (37-…).
    "GATEHOUSE_STREAM_RECHECK_SECONDS": "1",
    # The http_request tool is on, for one host that is not the outside world's.
    "GATEHOUSE_HTTP_ALLOW": "allowed.invalid",
    # mallory sends every attack from one address, many in a minute: the write rates are
    # far above that, and the rate attacks (55, 56) give their own attackers small limits.
    "GATEHOUSE_RATE_WRITES_PER_MINUTE": "100000",
    "GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE": "100000",
}


def environment(database: Database) -> dict[str, str]:
    inherited = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL", "DATABASE_URL_FILE")
        and not key.startswith("GATEHOUSE_")
    }
    return {
        **inherited,
        **({"DATABASE_URL": database.url} if database.url else {}),
        "DJANGO_SETTINGS_MODULE": "tests.hostile.settings",
        "PYTHONPATH": str(ROOT),
        "GATEHOUSE_VAR_DIR": str(database.var),
        "DEBUG": "false",
        "SECRET_KEY": "hostile-corpus-only-secret-key-not-for-production",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GATEHOUSE_SECURE_COOKIES": "false",
        # Every record of every process, so that a credential would be seen if it were logged.
        "GATEHOUSE_LOG_LEVEL": "DEBUG",
        "GATEHOUSE_TOOL_MODULES": "tests.hostile.tools",
        # The image's allocator settings (its runtime ENV), as production runs.
        **image_environment(),
        **LIMITS,
    }


def create_users(env: dict[str, str]) -> Users:
    code = (
        "from django.contrib.auth import get_user_model\n"
        "from django.contrib.auth.models import Group\n"
        "from editor.services.tokens import create_token\n"
        "User = get_user_model()\n"
        f"mallory = User.objects.create_user('mallory', password={PASSWORD!r})\n"
        "mallory.groups.set(Group.objects.all())\n"
        f"nobody = User.objects.create_user('nobody', password={PASSWORD!r})\n"
        "print('TOKENS', create_token(mallory, 'corpus')[1], create_token(nobody, 'corpus')[1])\n"
    )
    done = manage("shell", "--no-imports", "-c", code, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    mallory, nobody = done.stdout.split("TOKENS ")[-1].split()
    return Users(PASSWORD, mallory, nobody)


@pytest.fixture(scope="session")
def watch() -> Iterator[Watch]:
    sampler = Watch()
    sampler.start()
    yield sampler
    sampler.stop()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory, watch: Watch) -> Iterator[Corpus]:
    folder = tmp_path_factory.mktemp("hostile")
    database = Database(folder)
    database.create()
    try:
        env = environment(database)
        migrated = manage("migrate", "--no-input", "--verbosity", "0", env=env)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        users = create_users(env)
        dot_folder, dot_calls = counting_dot(folder)
        server_env = {**env, "PATH": f"{dot_folder}{os.pathsep}{env.get('PATH', '')}"}
        with serving_counter() as outside, running(env, server_env, folder) as (server, workers):
            watch.watch("worker", workers.pid)
            watch.watch("server", server.serving_pid)
            corpus = Corpus(
                server=server,
                workers=workers,
                database=database,
                env=env,
                users=users,
                outside=outside,
                secret_file=write_secret_file(folder),
                folder=folder,
                dot_calls=dot_calls,
            )
            with corpus.stops:
                yield corpus
    finally:
        database.drop()
