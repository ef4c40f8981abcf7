"""A burst of canvas views against a real server: ``/healthz`` never waits on ``dot``.

The image's own command (the Dockerfile's ``CMD``) serves a fresh SQLite database with one
worker process, a ``dot`` slot of one, and a fake ``dot`` (``test_rendering_limits.py``) that
holds its layout until the test lets it go. Four people open the editor of the same draft at
once; while the first one's layout is still held, the health check must answer. Before the
slot cap and the threaded workers, the readers held the server's workers and the health check
queued behind ``dot``.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.inbox import gated
from tests.integration.test_rendering_limits import BOUND, FAKE_DOT, FakeDot

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
HOST = "127.0.0.1"


def image_command() -> list[str]:
    """The Dockerfile's CMD, run from this virtual environment."""
    text = (ROOT / "Dockerfile").read_text()
    match = re.search(r"^CMD (\[.*\])$", text, re.MULTILINE)
    assert match, "the Dockerfile has no CMD"
    command = json.loads(match.group(1))
    assert command[0] == "gunicorn"
    return [PYTHON, "-m", "gunicorn", *command[1:]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def fake_dot(tmp_path: Path) -> Iterator[FakeDot]:
    binaries = tmp_path / "bin"
    binaries.mkdir()
    # The editor lays a draft out with dot, then draws it at those places with neato -n2.
    for program in ("dot", "neato"):
        (binaries / program).write_text(FAKE_DOT)
        (binaries / program).chmod(0o755)
    state = tmp_path / "dot-state"
    state.mkdir()
    fake = FakeDot(state)
    yield fake
    fake.release()


@pytest.fixture
def server(tmp_path: Path, fake_dot: FakeDot) -> Iterator[str]:
    port = free_port()
    environment = {
        **{
            key: value
            for key, value in os.environ.items()
            if key not in ("DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "GUNICORN_CMD_ARGS")
        },
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "FAKE_DOT_STATE": str(fake_dot.state),
        # Development mode only so the pages need no collectstatic manifest.
        "DEBUG": "true",
        "SECRET_KEY": "x" * 60,
        "ALLOWED_HOSTS": HOST,
        "GATEHOUSE_SECURE_COOKIES": "false",
        "GATEHOUSE_VAR_DIR": str(tmp_path / "var"),
        "GATEHOUSE_GRAPHVIZ_MAX_PROCESSES": "1",
        "GATEHOUSE_GRAPHVIZ_WAIT": "0",
        "GATEHOUSE_GRAPHVIZ_TIMEOUT": "600",  # only the test ends a layout
        "GUNICORN_CMD_ARGS": f"--bind {HOST}:{port} --workers 1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(gated()))
    for arguments in (
        ["migrate", "--no-input", "--verbosity", "0"],
        ["ensure_admin"],
        ["graph", "import", str(draft), "--document", "flow"],
    ):
        subprocess.run(
            [PYTHON, "manage.py", *arguments],
            cwd=ROOT,
            env=environment,
            check=True,
            capture_output=True,
            timeout=120,
        )
    process = subprocess.Popen(
        image_command(),
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://{HOST}:{port}"
    try:
        deadline = time.monotonic() + BOUND
        while not _answers(url + "/healthz"):
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "gunicorn did not start: " + shlex.join(
                image_command()
            )
            time.sleep(0.05)
        yield url
    finally:
        fake_dot.release()
        process.terminate()
        process.wait(timeout=BOUND)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def signed_in(url: str, var: Path) -> urllib.request.OpenerDirector:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    with opener.open(url + "/accounts/login/", timeout=BOUND) as response:
        form = response.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    assert token
    fields = {
        "csrfmiddlewaretoken": token.group(1),
        "username": "admin",
        "password": (var / "admin-password").read_text().strip(),
    }
    body = urllib.parse.urlencode(fields).encode()
    with opener.open(url + "/accounts/login/", data=body, timeout=BOUND) as response:
        assert response.status == 200 and "/accounts/login/" not in response.url
    return opener


class Reader(threading.Thread):
    def __init__(self, opener: urllib.request.OpenerDirector, url: str) -> None:
        super().__init__(daemon=True)
        self.opener, self.url = opener, url
        self.page = ""

    def run(self) -> None:
        with self.opener.open(self.url, timeout=BOUND) as response:
            self.page = response.read().decode()


def test_the_health_check_answers_while_readers_wait_on_dot(
    server: str, fake_dot: FakeDot, tmp_path: Path
) -> None:
    opener = signed_in(server, tmp_path / "var")
    readers = [Reader(opener, server + "/graphs/flow/") for _ in range(4)]
    for reader in readers:
        reader.start()
    fake_dot.wait_until_started(1)

    with urllib.request.urlopen(server + "/healthz", timeout=BOUND) as response:
        assert response.status == 200
    assert fake_dot.started == 1  # one layout at a time, still held: nobody else ran dot
    assert sum(reader.is_alive() for reader in readers) >= 1  # the first reader still waits

    fake_dot.release()
    for reader in readers:
        reader.join(BOUND)
        assert not reader.is_alive()
    pages = [reader.page for reader in readers]
    assert sum(">drawn</text>" in page for page in pages) >= 1
    assert all(
        ">drawn</text>" in page or "The server is drawing other graphs right now" in page
        for page in pages
    )
