"""``manage.py load_demo``: the demo agents and one frozen, runnable graph per template, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from editor.engine import resolve_names
from editor.graph import parse_document
from editor.models import AgentDefinition, Document, Version
from editor.services.documents import read_draft
from editor.services.installation import installation
from editor.tasks import drive_run
from tests.integration.commands import run_command
from tests.integration.runs.starting import start_stored

pytestmark = pytest.mark.django_db

SLUGS = ["demo-approval-gate", "demo-critic-panel-parallel", "demo-critic-panel-rounds"]


def test_it_loads_one_frozen_runnable_graph_per_template(ensured_admin: tuple[str, str]) -> None:
    status, output, _ = run_command("load_demo")

    assert status == 0
    assert "Loaded the demo graphs" in output
    assert sorted(Document.objects.values_list("slug", flat=True)) == SLUGS
    for slug in SLUGS:
        version = Version.objects.get(document__slug=slug)
        assert version.number == 1
        graph = parse_document(bytes(version.graph.canonical))
        assert resolve_names(graph, installation()) == []
        assert read_draft(slug).validation["valid"]
    assert sorted(AgentDefinition.objects.values_list("name", flat=True)) == [
        "demo-critic",
        "demo-synthesizer",
        "demo-writer",
    ]


def test_loading_again_changes_nothing(ensured_admin: tuple[str, str]) -> None:
    run_command("load_demo")
    versions = Version.objects.count()

    status, output, _ = run_command("load_demo")

    assert status == 0
    assert output == ""
    assert Version.objects.count() == versions
    assert Document.objects.count() == len(SLUGS)


def test_without_its_user_it_loads_nothing_and_exits_1(admin_password_file: Path) -> None:
    status, _, error = run_command("load_demo", "--user", "nobody")

    assert status == 1
    assert "no user named 'nobody'" in error
    assert not Document.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("slug", "run_input", "state"),
    [
        ("demo-approval-gate", {"subject": "runs"}, "suspended"),
        (
            "demo-critic-panel-parallel",
            {"subject": "runs", "critics": ["a security reviewer", "a copy editor"]},
            "completed",
        ),
        (
            "demo-critic-panel-rounds",
            {"subject": "runs", "critics": ["a security reviewer", "a copy editor"]},
            "completed",
        ),
    ],
)
def test_each_demo_graph_runs(
    ensured_admin: tuple[str, str], slug: str, run_input: dict[str, Any], state: str
) -> None:
    run_command("load_demo")
    graph = Version.objects.get(document__slug=slug).graph_id
    run_id = start_stored(graph, run_input)

    assert drive_run.call(run_id) == state
