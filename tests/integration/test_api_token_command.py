"""`manage.py api_token create USER [--name NAME]`."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from editor.models import ApiToken
from editor.services.tokens import user_for_token
from tests.integration.commands import manage, run_command

pytestmark = pytest.mark.django_db


def api_token(*args: str) -> tuple[int, str, str]:
    """Run ``manage.py api_token`` in-process: exit status, standard output, standard error."""
    return run_command("api_token", *args)


@pytest.fixture
def ada(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ada", password="ada-passphrase-1")


def test_it_prints_the_new_token_alone_on_the_last_line_and_exits_0(ada: Any) -> None:
    status, stdout, _ = api_token("create", "ada")

    last_line = stdout.splitlines()[-1]
    assert status == 0
    assert re.fullmatch(r"gh_[A-Za-z0-9_-]{43}", last_line)
    assert "will not be shown again" in stdout


def test_the_printed_token_signs_in_as_the_user(ada: Any) -> None:
    _, stdout, _ = api_token("create", "ada")

    assert user_for_token(stdout.splitlines()[-1]) == ada


def test_it_stores_the_digest_under_the_given_name(ada: Any) -> None:
    _, stdout, _ = api_token("create", "ada", "--name", "deploy bot")

    raw = stdout.splitlines()[-1]
    token = ApiToken.objects.get(user=ada)
    assert token.name == "deploy bot"
    assert token.digest != raw
    assert raw.startswith(token.prefix)


def test_without_a_name_the_token_gets_a_plain_one(ada: Any) -> None:
    api_token("create", "ada")

    assert ApiToken.objects.get(user=ada).name == "API token"


def test_an_unknown_user_is_refused_with_exit_1_and_no_token(ada: Any) -> None:
    status, stdout, stderr = api_token("create", "nobody")

    assert status == 1
    assert stdout == ""
    assert "no user named 'nobody'" in stderr
    assert not ApiToken.objects.exists()


def test_a_name_too_long_to_keep_is_refused(ada: Any) -> None:
    status, stdout, stderr = api_token("create", "ada", "--name", "x" * 101)

    assert status == 2
    assert stdout == ""
    assert "at most 100" in stderr
    assert not ApiToken.objects.exists()


def test_it_warns_that_an_inactive_users_token_will_not_work(ada: Any) -> None:
    ada.is_active = False
    ada.save()

    status, stdout, stderr = api_token("create", "ada")

    assert status == 0
    assert "inactive" in stderr
    assert user_for_token(stdout.splitlines()[-1]) is None


def test_run_as_a_program_it_uses_stdout_stderr_and_exit_codes(tmp_path: Path) -> None:
    """The real `manage.py` process, on a database of its own."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}"}

    def manage_here(*args: str) -> subprocess.CompletedProcess[str]:
        return manage(*args, env={**env, "DJANGO_SUPERUSER_PASSWORD": "cli-passphrase-1"})

    assert manage_here("migrate", "--no-input", "--verbosity", "0").returncode == 0
    created = manage_here("createsuperuser", "--no-input", "--username", "ops", "--email", "")
    assert created.returncode == 0, created.stderr

    unknown = manage_here("api_token", "create", "nobody")
    made = manage_here("api_token", "create", "ops", "--name", "cli")

    assert unknown.returncode == 1
    assert unknown.stdout == ""
    assert "no user named 'nobody'" in unknown.stderr
    assert made.returncode == 0, made.stderr
    assert re.fullmatch(r"gh_[A-Za-z0-9_-]{43}", made.stdout.splitlines()[-1])
