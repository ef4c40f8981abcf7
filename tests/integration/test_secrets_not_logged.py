"""No credential ever reaches a log line, at any level.

A client that sends a real API token or a real password under a scheme Gatehouse does not take
(``Token``, ``Basic``, ``Digest``, no scheme at all, …) is refused with ``401``; django-ninja
used to log the whole ``Authorization`` header at ERROR when ``DEBUG`` was on. Every logger is
opened to ``DEBUG`` here and every record is captured, whatever its handlers, then searched.
"""

from __future__ import annotations

import base64
import logging
import traceback
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from editor.services.tokens import create_token
from tests.integration.api.callers import bearer_caller, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-staple-41"


class Captured:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, record: logging.LogRecord) -> None:
        parts = [record.name, record.levelname, record.getMessage(), repr(record.args)]
        if record.exc_info:
            parts.append("".join(traceback.format_exception(*record.exc_info)))
        if record.stack_info:
            parts.append(record.stack_info)
        # What a structured formatter would write too: the extras (Django adds the request).
        parts += [repr(value) for key, value in vars(record).items() if key not in _PLAIN]
        self.lines.append(" ".join(parts))

    def text(self) -> str:
        return "\n".join(self.lines)


_PLAIN = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None)))


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Captured]:
    """Every record of every logger, at every level, whatever its handlers or propagation."""
    captured = Captured()
    original = logging.Logger.handle

    def handle(self: logging.Logger, record: logging.LogRecord) -> None:
        captured.add(record)
        original(self, record)

    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]  # fmt: skip
    levels = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    monkeypatch.setattr(logging.Logger, "handle", handle)
    logging.disable(logging.NOTSET)
    yield captured
    for logger, level in levels:
        logger.setLevel(level)


@pytest.fixture
def holder() -> tuple[User, str]:
    user = make_user("tokenholder", "authors")
    user.set_password(PASSWORD)
    user.save()
    return user, create_token(user, "real")[1]


def wrong_schemes(username: str, token: str) -> list[str]:
    basic = base64.b64encode(f"{username}:{PASSWORD}".encode()).decode()
    return [
        f"Token {token}",
        f"token {token}",
        f"Basic {basic}",
        f"Basic {username}:{PASSWORD}",
        f'Digest username="{username}", response="{PASSWORD}"',
        f"Negotiate {token}",
        f"ApiKey {token}",
        f"Bearer{token}",
        f"Bearer: {token}",
        token,
        PASSWORD,
        f"{username}:{PASSWORD}",
    ]


def secrets_of(username: str, token: str) -> list[str]:
    return [token, PASSWORD, base64.b64encode(f"{username}:{PASSWORD}".encode()).decode()]


@pytest.mark.parametrize("debug", [True, False], ids=["DEBUG on", "DEBUG off"])
def test_a_credential_under_a_wrong_scheme_is_refused_and_never_logged(
    logs: Captured, holder: tuple[User, str], settings: Settings, debug: bool
) -> None:
    settings.DEBUG = debug
    user, token = holder
    client = Client(raise_request_exception=False)
    answers = []
    for header in wrong_schemes(user.username, token):
        for method, path in [
            ("get", "/v1/graphs"),
            ("post", "/v1/graphs"),
            ("get", "/v1/openapi.json"),
            ("get", "/v1/runs/not-a-run"),
            ("get", "/"),
        ]:
            response = getattr(client, method)(path, headers={"Authorization": header})
            answers.append((header, path, response.status_code))

    assert all(
        status in (302, 401) for _header, path, status in answers if path != "/v1/runs/not-a-run"
    ), answers
    assert logs.lines  # the requests were logged (401s at WARNING), just not their credentials
    for secret in secrets_of(user.username, token):
        leaks = [line[:300] for line in logs.lines if secret in line]
        assert not leaks, leaks[:3]


def test_a_failed_sign_in_never_logs_the_password(logs: Captured, holder: tuple[User, str]) -> None:
    user, _token = holder
    client = Client(raise_request_exception=False)

    client.post("/accounts/login/", {"username": user.username, "password": PASSWORD + "x"})
    client.post("/accounts/login/", {"username": user.username, "password": PASSWORD})

    assert logs.lines
    assert PASSWORD not in logs.text()


def test_the_right_scheme_still_signs_in(holder: tuple[User, str]) -> None:
    _user, token = holder

    response = Client().get("/v1/graphs", headers={"Authorization": f"Bearer {token}"})

    assert response.status_code == 200


MODEL_KEY = "sk-ant-logged-nowhere-7c41e9"


@pytest.mark.django_db(transaction=True)
def test_a_models_key_never_reaches_a_log_line(
    logs: Captured, holder: tuple[User, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's run of a `claude-…` agent, through a refused answer, a retried 500 and a
    401: the key is sent, and written nowhere."""
    from django.core.management import call_command
    from django.test import override_settings

    from editor.services import installation
    from tests.fake_anthropic import FakeAnthropic

    user, _token = holder
    operator = make_user("keyoperator", "operators")
    agent = (
        'model = "claude-opus-4-8"\nsystem_prompt = "Answer."\n'
        '[llm]\nbase_url_env = "KEY_TEST_URL"\napi_key_env = "KEY_TEST_KEY"\nmax_retries = 1\n'
    )
    with (
        FakeAnthropic(
            [{"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}]
        ) as model,
        override_settings(GATEHOUSE_LLM_ENV_ALLOW=["KEY_TEST_URL", "KEY_TEST_KEY"]),
    ):
        monkeypatch.setenv("KEY_TEST_URL", model.base_url)
        monkeypatch.setenv("KEY_TEST_KEY", MODEL_KEY)
        installation.providers.cache_clear()
        author_api = bearer_caller(user)
        digest = author_api.post(
            "/v1/agents", agent.encode(), content_type="application/toml"
        ).json()["agent"]
        node = {"kind": "agent", "payload": {"id": "a", "agent_hash": digest}}
        graph = {"schema_version": 1, "edges": [], "nodes": [node]}
        graph_hash = author_api.post("/v1/graphs", graph).json()["graph"]
        operator_api = bearer_caller(operator)
        model.fail(500)
        model.fail(401)
        failed = operator_api.post("/v1/graph-runs", {"graph_hash": graph_hash}).json()["run"]
        call_command("db_worker", batch=True, no_startup_delay=True, reload=False)
        model.fail(500)
        completed = operator_api.post("/v1/graph-runs", {"graph_hash": graph_hash}).json()["run"]
        call_command("db_worker", batch=True, no_startup_delay=True, reload=False)
    installation.providers.cache_clear()

    states = [operator_api.get(f"/v1/runs/{run}").json()["status"] for run in (failed, completed)]
    assert states[0]["state"] == "failed" and "HTTP 401" in states[0]["error"]
    assert states[1] == {"state": "completed", "output": "ok"}
    assert all(request.headers["x-api-key"] == MODEL_KEY for request in model.requests)
    assert len(model.requests) == 4
    assert logs.lines
    assert MODEL_KEY not in logs.text()
