"""Credentials in a query string never reach a log line (``editor.log_redaction``)."""

from __future__ import annotations

import logging

import pytest

from editor.log_redaction import ACCESS_LOGGERS, QueryCredentialsFilter, install, redact


@pytest.mark.parametrize(
    ("line", "redacted"),
    [
        ("GET /v1/graphs?token=abc123 HTTP/1.1", "GET /v1/graphs?token=[redacted] HTTP/1.1"),
        ("/v1/runs?limit=5&access_token=t0k", "/v1/runs?limit=5&access_token=[redacted]"),
        ("/x?api_key=k&y=1", "/x?api_key=[redacted]&y=1"),
        ("/x?X-Api-Key=k;next=2", "/x?X-Api-Key=[redacted];next=2"),
        ("/accounts/login/?password=hunter2", "/accounts/login/?password=[redacted]"),
        ("/x?client_secret=s#frag", "/x?client_secret=[redacted]#frag"),
        ("/x?sessionid=s", "/x?sessionid=[redacted]"),
        ('"GET /?TOKEN=Abc HTTP/1.1" 401', '"GET /?TOKEN=[redacted] HTTP/1.1" 401'),
    ],
)
def test_credential_parameters_are_redacted(line: str, redacted: str) -> None:
    assert redact(line) == redacted


@pytest.mark.parametrize(
    "line",
    [
        "GET /v1/runs?limit=5&cursor=abc&from_seq=3 HTTP/1.1",
        "GET /graphs/token-list/ HTTP/1.1",
        "a token=plain text outside a query string",
        "no parameters at all",
    ],
)
def test_other_text_is_left_alone(line: str) -> None:
    assert redact(line) == line


def test_the_filter_redacts_a_records_arguments_and_keeps_the_record() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/v1/graphs?token=abc", "1.1", 401), None,
    )  # fmt: skip
    assert QueryCredentialsFilter().filter(record) is True
    assert record.getMessage() == '127.0.0.1:5000 - "GET /v1/graphs?token=[redacted] HTTP/1.1" 401'


def test_the_access_loggers_carry_the_filter_once() -> None:
    install()
    install()
    for name in ACCESS_LOGGERS:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(found, QueryCredentialsFilter) for found in filters) == 1
