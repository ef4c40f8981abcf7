"""`manage.py graph export HASH [-o FILE]` and `manage.py graph import FILE --document SLUG`."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from editor.graph import canonical_graph, parse_document
from editor.models import Document, Draft
from editor.services.documents.graphs import save_graph
from tests.integration.commands import manage, run_command

pytestmark = pytest.mark.django_db

GRAPH = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "fetch", "tool": "echo", "name": "Fetch – ünïcode"}},
        {"kind": "tool", "payload": {"id": "store", "tool": "echo"}},
    ],
    "edges": [{"from": "fetch", "to": "store"}],
}


def graph(*args: str) -> tuple[int, str, str]:
    """Run ``manage.py graph`` in-process: its exit status, standard output and standard error."""
    return run_command("graph", *args)


@pytest.fixture
def stored() -> tuple[str, bytes]:
    """A stored graph: its hash and canonical bytes."""
    parsed = parse_document(json.dumps(GRAPH))
    return save_graph(parsed).graph, canonical_graph(parsed)


def test_export_prints_the_canonical_bytes_without_a_trailing_newline(
    stored: tuple[str, bytes],
) -> None:
    digest, canonical = stored

    status, stdout, stderr = graph("export", digest)

    assert (status, stderr) == (0, "")
    assert stdout.encode("utf-8") == canonical
    assert "sha256:" + hashlib.sha256(stdout.encode("utf-8")).hexdigest() == digest


def test_export_to_the_terminal_writes_the_bytes_exactly(
    stored: tuple[str, bytes], capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    digest, canonical = stored

    call_command("graph", "export", digest)

    assert capfdbinary.readouterr().out == canonical


def test_export_writes_a_file_when_asked(stored: tuple[str, bytes], tmp_path: Path) -> None:
    digest, canonical = stored
    target = tmp_path / "out.json"

    status, stdout, _ = graph("export", digest, "-o", str(target))

    assert (status, stdout) == (0, "")
    assert target.read_bytes() == canonical


@pytest.mark.parametrize("digest", ["sha256:" + "0" * 64, "sha256:nope", "fetch"])
def test_export_exits_1_for_an_unknown_hash(digest: str) -> None:
    status, stdout, stderr = graph("export", digest)

    assert status == 1
    assert stdout == ""
    assert digest in stderr


def test_export_exits_1_when_the_file_cannot_be_written(
    stored: tuple[str, bytes], tmp_path: Path
) -> None:
    status, _, stderr = graph("export", stored[0], "-o", str(tmp_path / "no" / "such" / "dir"))

    assert status == 1
    assert "cannot write" in stderr


def test_import_creates_the_document_and_prints_its_slug(tmp_path: Path) -> None:
    source = tmp_path / "flow.json"
    source.write_text(json.dumps(GRAPH), encoding="utf-8")

    status, stdout, _ = graph("import", str(source), "--document", "flow")

    assert (status, stdout.strip()) == (0, "flow")
    draft = Draft.objects.get(document__slug="flow")
    assert (draft.text, draft.revision) == (json.dumps(GRAPH), 1)
    assert Document.objects.get().title == "flow"


def test_import_replaces_the_draft_of_an_existing_document(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text("first", encoding="utf-8")
    second.write_text("{ not even json", encoding="utf-8")
    graph("import", str(first), "--document", "flow")

    status, stdout, _ = graph("import", str(second), "--document", "flow")

    assert (status, stdout.strip()) == (0, "flow")
    draft = Draft.objects.get(document__slug="flow")
    assert (draft.text, draft.revision) == ("{ not even json", 2)
    assert Document.objects.count() == 1


def test_import_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"from stdin")))

    status, stdout, _ = graph("import", "-", "--document", "piped")

    assert (status, stdout.strip()) == (0, "piped")
    assert Draft.objects.get().text == "from stdin"


@pytest.mark.parametrize(
    ("content", "slug", "complaint"),
    [
        (b"{}", "Not A Slug", "--document"),
        (b"{}", "x" * 65, "--document"),
        (b"\xff\xfe not utf-8", "flow", "not UTF-8"),
        (b"nul \x00 inside", "flow", "NUL"),
    ],
)
def test_import_exits_1_and_changes_nothing_when_it_cannot(
    tmp_path: Path, content: bytes, slug: str, complaint: str
) -> None:
    source = tmp_path / "in.json"
    source.write_bytes(content)

    status, stdout, stderr = graph("import", str(source), "--document", slug)

    assert status == 1
    assert stdout == ""
    assert complaint in stderr
    assert not Document.objects.exists()


def test_import_exits_1_for_a_file_it_cannot_read(tmp_path: Path) -> None:
    status, _, stderr = graph("import", str(tmp_path / "missing.json"), "--document", "flow")

    assert status == 1
    assert "cannot read" in stderr


def test_import_and_export_work_as_commands_on_a_real_database(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}"}

    def manage_here(*args: str) -> subprocess.CompletedProcess[bytes]:
        return manage(*args, env=env, text=False)

    source = tmp_path / "flow.json"
    source.write_text(json.dumps(GRAPH), encoding="utf-8")
    assert manage_here("migrate", "--no-input", "--verbosity", "0").returncode == 0

    imported = manage_here("graph", "import", str(source), "--document", "flow")
    freeze = manage_here(
        "shell",
        "-c",
        "from editor.graph import parse_document; "
        "from editor.services.documents.graphs import save_graph; "
        "from editor.models import Draft; "
        "print(save_graph(parse_document(Draft.objects.get().text)).graph)",
    )
    digest = freeze.stdout.decode().split()[-1]
    exported = manage_here("graph", "export", digest)
    unknown = manage_here("graph", "export", "sha256:" + "0" * 64)

    assert (imported.returncode, imported.stdout) == (0, b"flow\n")
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == canonical_graph(parse_document(json.dumps(GRAPH)))
    assert "sha256:" + hashlib.sha256(exported.stdout).hexdigest() == digest
    assert unknown.returncode == 1
    assert unknown.stdout == b""
