"""The Docker image's build steps (docker/build.sh), run without Docker in a clean directory.

No Docker engine runs where the project is tested, so this is as close to building the image as
the suite gets: the same script, a new virtual environment, the files the image copies. Then
the image's two commands run from that environment with production settings over plain HTTP
(``DEBUG=false``, ``GATEHOUSE_SECURE_COOKIES=false``): gunicorn serves the app until the
image's health check passes, and a worker drives a run started through the API.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

PROJECT = Path(settings.BASE_DIR)
COPIED = ["manage.py", "requirements.txt", "editor", "templates", "static", "docker"]
#: The longest the app may take to answer its health check after gunicorn starts.
START_SECONDS = 60
ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "publish"}],
}


def build(step: str, workdir: Path, venv: Path) -> None:
    subprocess.run(
        ["docker/build.sh", step, str(venv)],
        cwd=workdir,
        env={**os.environ, "PYTHON": sys.executable},
        check=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    workdir = tmp_path_factory.mktemp("image") / "app"
    workdir.mkdir()
    for name in COPIED:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, workdir / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, workdir / name)
    venv = workdir.parent / "venv"
    build("dependencies", workdir, venv)
    build("static", workdir, venv)
    return workdir, venv


def test_the_runtime_requirements_install_into_a_clean_environment(
    built: tuple[Path, Path],
) -> None:
    _, venv = built

    check = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "check"],
        capture_output=True,
        text=True,
        check=False,
    )

    assert check.returncode == 0, check.stdout
    assert (venv / "bin" / "gunicorn").exists()


def test_static_files_are_collected_with_hashed_names_at_build_time(
    built: tuple[Path, Path],
) -> None:
    workdir, _ = built

    manifest = json.loads((workdir / "staticfiles" / "staticfiles.json").read_text())

    hashed = manifest["paths"]["css/app.css"]
    assert hashed != "css/app.css"
    assert (workdir / "staticfiles" / hashed).exists()
    assert (workdir / "staticfiles" / f"{hashed}.gz").exists()


def test_the_app_starts_from_the_built_environment(built: tuple[Path, Path]) -> None:
    workdir, venv = built

    result = subprocess.run(
        [str(venv / "bin" / "python"), "manage.py", "check", "--deploy", "--fail-level", "ERROR"],
        cwd=workdir,
        env={
            # Not DJANGO_ALLOW_ASYNC_UNSAFE: the browser tests set it in this process, and the
            # deployment check rightly refuses it.
            **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
            "DEBUG": "false",
            "SECRET_KEY": "x" * 60,
            "ALLOWED_HOSTS": "gatehouse.example",
            "DATABASE_URL": "sqlite:///:memory:",
        },
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr


def test_the_dockerfile_runs_the_script_as_a_non_root_user_with_a_health_check() -> None:
    dockerfile = (PROJECT / "Dockerfile").read_text()
    instructions = [line for line in dockerfile.splitlines() if not line.startswith("#")]
    text = "\n".join(instructions)

    assert re.search(r"^FROM python:3\.12-slim AS build$", text, re.MULTILINE)
    assert "RUN docker/build.sh dependencies /opt/venv" in text
    assert "RUN docker/build.sh static /opt/venv" in text
    assert "apt-get install -y --no-install-recommends graphviz" in text
    assert re.search(r"^USER gatehouse$", text, re.MULTILINE)
    assert "useradd --system" in text
    assert re.search(
        r'^HEALTHCHECK .*\n\s+CMD \["python", "/app/docker/healthcheck.py"\]', text, re.MULTILINE
    )
    assert image_command()[:4] == [
        "gunicorn",
        "editor.asgi:application",
        "--worker-class",
        "editor.server.UvicornWorker",
    ]


def image_command() -> list[str]:
    """The image's default command: the ``CMD`` of the Dockerfile (its exec form)."""
    found = re.search(r"^CMD (\[.*\])$", (PROJECT / "Dockerfile").read_text(), re.MULTILINE)
    assert found, "the Dockerfile has no CMD in exec form"
    return list(json.loads(found.group(1)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def image_environment(
    built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """What `docker run` would pass: production settings, plain HTTP, a database of its own."""
    state = tmp_path_factory.mktemp("image-var")
    port = free_port()
    environment = {
        **{
            k: v
            for k, v in os.environ.items()
            if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL", "GATEHOUSE_VAR_DIR")
        },
        "DEBUG": "false",
        "SECRET_KEY": "x" * 60,
        "ALLOWED_HOSTS": "localhost",
        "GATEHOUSE_SECURE_COOKIES": "false",
        "GATEHOUSE_VAR_DIR": str(state),
        "PORT": str(port),
        # The image binds 0.0.0.0:$PORT; here only the loopback address is used.
        "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{port} --workers 2",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    manage(built, environment, "migrate", "--no-input", "--verbosity", "0")
    return environment


def manage(
    built: tuple[Path, Path], environment: dict[str, str], *arguments: str
) -> subprocess.CompletedProcess[str]:
    workdir, venv = built
    return subprocess.run(
        [str(venv / "bin" / "python"), "manage.py", *arguments],
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )


def health_check(built: tuple[Path, Path], environment: dict[str, str]) -> int:
    workdir, venv = built
    return subprocess.run(
        [str(venv / "bin" / "python"), "docker/healthcheck.py"],
        cwd=workdir,
        env=environment,
        capture_output=True,
        check=False,
        timeout=30,
    ).returncode


@pytest.fixture(scope="module")
def web(built: tuple[Path, Path], image_environment: dict[str, str]) -> Iterator[str]:
    """The image's default command (gunicorn with uvicorn workers), serving until the health
    check passes."""
    workdir, venv = built
    program, *arguments = image_command()
    server = subprocess.Popen(
        [str(venv / "bin" / program), *arguments],
        cwd=workdir,
        env=image_environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while health_check(built, image_environment) != 0:
            assert server.poll() is None, server.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "gunicorn did not pass the health check"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{image_environment['PORT']}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def fetch(url: str, *, body: Any = None, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Host": "localhost",
            **({"Content-Type": "application/json"} if body is not None else {}),
            **({"Authorization": f"Bearer {token}"} if token else {}),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read()


def test_the_image_serves_pages_with_the_static_files_collected_at_build_time(web: str) -> None:
    status, page = fetch(f"{web}/accounts/login/")
    stylesheet = re.search(rb'href="(/static/css/app\.[0-9a-f]+\.css)"', page)

    assert status == 200
    assert stylesheet, page[:500]
    assert fetch(web + stylesheet.group(1).decode())[0] == 200


def test_the_image_runs_a_worker_that_drives_a_run_started_through_the_api(
    built: tuple[Path, Path], image_environment: dict[str, str], web: str
) -> None:
    manage(built, image_environment, "ensure_admin")
    token = manage(built, image_environment, "api_token", "create", "admin").stdout.split()[-1]
    status, graph = fetch(f"{web}/v1/graphs", body=ECHO_CHAIN, token=token)
    assert status == 201
    status, started = fetch(
        f"{web}/v1/graph-runs",
        body={"graph_hash": json.loads(graph)["graph"], "input": {"topic": "tea"}},
        token=token,
    )
    assert status == 201

    # The worker command of the image, once through the queue instead of forever.
    manage(built, image_environment, "db_worker", "--no-reload", "--batch", "--no-startup-delay")

    _, run = fetch(f"{web}/v1/runs/{json.loads(started)['run']}", token=token)
    assert json.loads(run)["status"]["state"] == "completed"
