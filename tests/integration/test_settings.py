"""Settings come from the environment only, through strict helpers."""

import os
import runpy
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.utils import ConnectionHandler

from editor.settings import (
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_secret,
)

SETTINGS_FILE = Path(settings.BASE_DIR) / "editor" / "settings.py"
PRODUCTION = {"DEBUG": "false", "SECRET_KEY": "s" * 50, "ALLOWED_HOSTS": "example.com"}


def read_settings(monkeypatch: pytest.MonkeyPatch, **environment: str) -> dict[str, Any]:
    """Evaluate settings.py afresh under ``environment`` (the running settings stay as they are)."""
    for name in [
        *PRODUCTION,
        "DATABASE_URL",
        "SECRET_KEY_FILE",
        "GATEHOUSE_SECURE_COOKIES",
        "GATEHOUSE_MAX_BODY_BYTES",
        "GATEHOUSE_VAR_DIR",
    ]:
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


@pytest.mark.parametrize("value", ["yes", "True", "1", "on", ""])
def test_a_boolean_other_than_true_or_false_stops_start_up_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("DEBUG", value)

    with pytest.raises(ImproperlyConfigured, match='DEBUG must be "true" or "false"'):
        env_bool("DEBUG", False)


def test_a_boolean_reads_true_and_false_and_defaults_when_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FLAG_ON", "true")
    monkeypatch.setenv("FLAG_OFF", "false")
    monkeypatch.delenv("FLAG_UNSET", raising=False)

    assert env_bool("FLAG_ON", False) is True
    assert env_bool("FLAG_OFF", True) is False
    assert env_bool("FLAG_UNSET", True) is True


@pytest.mark.parametrize("value", ["8MiB", "-1", "1.5", "", "0x10"])
def test_a_number_that_is_not_a_whole_number_stops_start_up(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("GATEHOUSE_MAX_NODES", value)

    with pytest.raises(ImproperlyConfigured, match="GATEHOUSE_MAX_NODES must be a whole number"):
        env_int("GATEHOUSE_MAX_NODES", 10)


def test_a_number_below_its_minimum_stops_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEHOUSE_MAX_NODES", "0")

    with pytest.raises(ImproperlyConfigured, match="GATEHOUSE_MAX_NODES must be at least 1"):
        env_int("GATEHOUSE_MAX_NODES", 10)


def test_a_list_is_split_on_commas_without_blanks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_HOSTS", " a.example, b.example ,,")

    assert env_list("ALLOWED_HOSTS") == ["a.example", "b.example"]


def test_a_secret_can_come_from_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n", encoding="utf-8")
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.setenv("SECRET_KEY_FILE", str(secret))

    assert env_secret("SECRET_KEY") == "from-a-file"


def test_a_secret_given_twice_stops_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SECRET_KEY", "inline")
    monkeypatch.setenv("SECRET_KEY_FILE", str(tmp_path / "secret"))

    with pytest.raises(ImproperlyConfigured, match="set SECRET_KEY or SECRET_KEY_FILE, not both"):
        env_secret("SECRET_KEY")


def test_an_unreadable_secret_file_stops_start_up_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.setenv("SECRET_KEY_FILE", str(tmp_path / "missing"))

    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY_FILE: cannot read"):
        env_secret("SECRET_KEY")


def test_settings_stop_start_up_on_a_bad_debug_value(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="DEBUG"):
        read_settings(monkeypatch, **{**PRODUCTION, "DEBUG": "yes"})


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS"])
def test_without_debug_the_secret_key_and_allowed_hosts_are_required(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    environment = {name: value for name, value in PRODUCTION.items() if name != missing}

    with pytest.raises(ImproperlyConfigured, match=f"{missing} is required when DEBUG is off"):
        read_settings(monkeypatch, **environment)


def test_debug_is_off_and_cookies_are_secure_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch, SECRET_KEY="s" * 50, ALLOWED_HOSTS="example.com")

    assert values["DEBUG"] is False
    assert values["SESSION_COOKIE_SECURE"] is True
    assert values["CSRF_COOKIE_SECURE"] is True


def test_a_local_development_server_needs_no_secret_key(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch, DEBUG="true")

    assert values["SECRET_KEY"]
    assert values["SESSION_COOKIE_SECURE"] is False


def test_the_limits_have_documented_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch, **PRODUCTION)

    assert values["GATEHOUSE_MAX_BODY_BYTES"] == 8_388_608
    assert values["DATA_UPLOAD_MAX_MEMORY_SIZE"] == 8_388_608
    assert values["GATEHOUSE_MAX_NODES"] == 10_000
    assert values["GATEHOUSE_MAX_EDGES"] == 50_000


def test_the_body_limit_also_caps_django_uploads(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch, **PRODUCTION, GATEHOUSE_MAX_BODY_BYTES="1024")

    assert values["DATA_UPLOAD_MAX_MEMORY_SIZE"] == 1024


def test_the_default_database_is_sqlite_under_var(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch, **PRODUCTION)

    database = values["DATABASES"]["default"]
    assert database["ENGINE"] == "editor.sqlite"  # Django's, keeping the file private
    assert database["NAME"] == str(Path(settings.BASE_DIR) / "var" / "gatehouse.sqlite3")
    assert database["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert database["OPTIONS"]["timeout"] == 20


@pytest.mark.django_db
def test_the_tests_run_on_an_in_memory_database_in_every_process() -> None:
    """Said outright (``TEST["NAME"]``), so that the suite's parallel processes each keep
    theirs in memory rather than in files named after the real one."""
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("the in-memory test database is SQLite's")
    assert connection.settings_dict["TEST"]["NAME"] == ":memory:"
    assert connection.is_in_memory_db()


def test_a_sqlite_database_runs_in_wal_mode(tmp_path: Path, django_db_blocker: Any) -> None:
    path = tmp_path / "db.sqlite3"
    connections = ConnectionHandler(
        {"default": database_from_url(f"sqlite:///{path}", base_dir=tmp_path)}
    )

    with django_db_blocker.unblock():
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("CREATE TABLE t (x)")
        finally:
            connections.close_all()

    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("sqlite:///var/other.sqlite3", "/project/var/other.sqlite3"),
        ("sqlite:////srv/data/db.sqlite3", "/srv/data/db.sqlite3"),
        ("sqlite:///:memory:", ":memory:"),
    ],
)
def test_a_sqlite_url_names_a_file_relative_to_the_project_or_absolute(url: str, name: str) -> None:
    assert database_from_url(url, base_dir=Path("/project"))["NAME"] == name


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_a_postgres_url_becomes_psycopg_settings(scheme: str) -> None:
    database = database_from_url(
        f"{scheme}://gate%40house:p%2Fss@db.internal:5433/gatehouse?sslmode=require",
        base_dir=Path("/project"),
    )

    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert database["NAME"] == "gatehouse"
    assert database["USER"] == "gate@house"
    assert database["PASSWORD"] == "p/ss"
    assert database["HOST"] == "db.internal"
    assert database["PORT"] == "5433"
    assert database["OPTIONS"] == {"sslmode": "require"}


@pytest.mark.parametrize(
    "url", ["mysql://u:p@h/db", "postgres://h:5432/", "postgres://h:port/db", "sqlite://", "nope"]
)
def test_a_database_url_it_cannot_use_stops_start_up_naming_the_variable(url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        database_from_url(url, base_dir=Path("/project"))


def test_manage_py_stops_on_a_bad_variable_with_one_line_naming_it() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DEBUG": "yes"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 1
    assert result.stderr == 'Configuration error: DEBUG must be "true" or "false", not \'yes\'\n'


def test_the_llm_allow_list_reads_variable_names(monkeypatch: pytest.MonkeyPatch) -> None:
    read = read_settings(
        monkeypatch, **PRODUCTION, GATEHOUSE_LLM_ENV_ALLOW="SALVOR_DEMO_BASE_URL, TEAM_KEY"
    )

    assert read["GATEHOUSE_LLM_ENV_ALLOW"] == ["SALVOR_DEMO_BASE_URL", "TEAM_KEY"]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("SECRET_KEY", "`SECRET_KEY` is one of Gatehouse's own settings"),
        ("DATABASE_URL_FILE", "`DATABASE_URL_FILE` is one of Gatehouse's own settings"),
        ("GATEHOUSE_OPENAI_API_KEY", "`GATEHOUSE_OPENAI_API_KEY` is one of Gatehouse's own"),
        ("MY-URL", "`MY-URL` is not an environment variable name"),
    ],
)
def test_an_llm_allow_list_naming_a_secret_of_gatehouse_stops_start_up(
    monkeypatch: pytest.MonkeyPatch, value: str, words: str
) -> None:
    with pytest.raises(ImproperlyConfigured, match=f"GATEHOUSE_LLM_ENV_ALLOW: {words}"):
        read_settings(monkeypatch, **PRODUCTION, GATEHOUSE_LLM_ENV_ALLOW=f"OK_URL,{value}")
