"""`manage.py graph validate FILE` and `manage.py graph hash FILE`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_django import Settings

from tests.integration.commands import manage, run_command

VALID = b'{"schema_version":1,"nodes":[{"kind":"tool","payload":{"id":"a","tool":"echo"}}]}'
INVALID_BUT_PARSES = b'{"schema_version":2,"nodes":[]}'
NOT_JSON = b"this is not JSON"

WriteDocument = Callable[..., str]


def graph(*args: str) -> tuple[int, str, str]:
    """Run ``manage.py graph`` in-process: its exit status, standard output and standard error."""
    return run_command("graph", *args)


@pytest.fixture
def document(tmp_path: Path) -> WriteDocument:
    """Write a document into a temporary file and give its path."""

    def write(content: bytes, name: str = "graph.json") -> str:
        path = tmp_path / name
        path.write_bytes(content)
        return str(path)

    return write


def test_validate_prints_the_verdict_as_indented_json_and_exits_0_when_valid(
    document: WriteDocument,
) -> None:
    status, stdout, _ = graph("validate", document(VALID))

    body = json.loads(stdout)
    assert status == 0
    assert body["valid"] is True
    assert body["graph"].startswith("sha256:")
    assert "summary" in body
    assert stdout.startswith('{\n  "valid": true')


def test_validate_exits_1_and_lists_the_errors_when_invalid(document: WriteDocument) -> None:
    status, stdout, _ = graph("validate", document(INVALID_BUT_PARSES))

    body = json.loads(stdout)
    assert status == 1
    assert body["valid"] is False
    assert body["errors"]
    assert all({"code", "message"} <= error.keys() for error in body["errors"])


def test_validate_reports_a_document_that_does_not_parse_as_invalid(
    document: WriteDocument,
) -> None:
    status, stdout, _ = graph("validate", document(NOT_JSON))

    body = json.loads(stdout)
    assert status == 1
    assert body == {"valid": False, "errors": [body["errors"][0]]}
    assert body["errors"][0]["code"] == "malformed_document"


def test_validate_exits_2_when_the_file_cannot_be_read(tmp_path: Path) -> None:
    status, stdout, stderr = graph("validate", str(tmp_path / "missing.json"))

    assert status == 2
    assert stdout == ""
    assert "cannot read" in stderr and "missing.json" in stderr


def test_validate_keeps_non_ascii_text_readable(document: WriteDocument) -> None:
    status, stdout, _ = graph(
        "validate",
        document(
            '{"schema_version":1,"nodes":[{"kind":"tool","payload":'
            '{"id":"a","tool":"echo","name":"Résumé"}}]}'.encode()
        ),
    )

    assert status == 0
    assert "\\u" not in stdout


def test_validate_applies_the_configured_node_limit(
    document: WriteDocument, settings: Settings
) -> None:
    settings.GATEHOUSE_MAX_NODES = 1
    two_nodes = (
        b'{"schema_version":1,"nodes":['
        b'{"kind":"tool","payload":{"id":"a","tool":"echo"}},'
        b'{"kind":"tool","payload":{"id":"b","tool":"echo"}}]}'
    )

    status, stdout, _ = graph("validate", document(two_nodes))

    assert status == 1
    assert json.loads(stdout)["errors"][0]["code"] == "document_too_large"


def test_hash_prints_only_the_hash_and_exits_0(document: WriteDocument) -> None:
    path = document(VALID)
    _, validated, _ = graph("validate", path)

    status, stdout, stderr = graph("hash", path)

    assert status == 0
    assert stdout == json.loads(validated)["graph"] + "\n"
    assert stderr == ""


def test_hash_of_a_document_that_parses_but_is_invalid_warns_and_exits_0(
    document: WriteDocument,
) -> None:
    status, stdout, stderr = graph("hash", document(INVALID_BUT_PARSES))

    assert status == 0
    assert stdout.startswith("sha256:")
    assert len(stdout.strip()) == len("sha256:") + 64
    assert "warning" in stderr and "not valid" in stderr


def test_hash_exits_1_when_the_document_does_not_parse(document: WriteDocument) -> None:
    status, stdout, stderr = graph("hash", document(NOT_JSON))

    assert status == 1
    assert stdout == ""
    assert stderr


def test_hash_exits_2_when_the_file_cannot_be_read(tmp_path: Path) -> None:
    status, stdout, stderr = graph("hash", str(tmp_path / "missing.json"))

    assert status == 2
    assert stdout == ""
    assert "cannot read" in stderr


def test_from_the_command_line_the_exit_codes_are_0_1_and_2(
    document: WriteDocument, tmp_path: Path
) -> None:
    assert manage("graph", "validate", document(VALID), timeout=60).returncode == 0
    assert (
        manage("graph", "validate", document(INVALID_BUT_PARSES, "bad.json"), timeout=60).returncode
        == 1
    )
    unreadable = manage("graph", "hash", str(tmp_path / "missing.json"), timeout=60)
    assert unreadable.returncode == 2
    assert "cannot read" in unreadable.stderr


@pytest.mark.parametrize(
    "args", [["graph"], ["graph", "frobnicate", "x.json"], ["graph", "validate"]]
)
def test_misuse_from_the_command_line_exits_2_with_usage(args: list[str]) -> None:
    result = manage(*args, timeout=60)

    assert result.returncode == 2
    assert "usage:" in result.stderr
