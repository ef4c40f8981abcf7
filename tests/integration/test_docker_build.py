"""The Docker image's build steps (docker/build.sh), run without Docker in a clean directory.

No Docker engine runs where the project is tested, so this is as close to building the image as
the suite gets: the same script, a new virtual environment, the files the image copies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

PROJECT = Path(settings.BASE_DIR)
COPIED = ["manage.py", "requirements.txt", "editor", "templates", "static", "docker"]


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
