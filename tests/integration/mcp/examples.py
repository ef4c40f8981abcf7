"""The reference's example agent files with their servers in a catalogue: the catalogue names
each server exactly as the example agent files do, and where the examples' graphs name agents."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.reference_examples import EXAMPLES, REFERENCE

AGENT_FILES = sorted(EXAMPLES.glob("*/agents/*.toml"))


def example_catalogue(
    folder: Path, extra: str = "", payroll: str = "", *, pay_delay_ms: int = 0
) -> tuple[Path, str]:
    """A catalogue naming the examples' two servers as their agent files do (``disputes``,
    ``payroll``), their ledgers in ``folder`` (``<server>-ledger.txt``,
    ``<server>-notices.json``); and the marker their processes carry in their environment.
    ``payroll`` adds lines to the payroll server's entry, ``pay_delay_ms`` slows each of its
    payments (the reference's ``SALVOR_PAYROLL_PAY_DELAY_MS``)."""
    marker = uuid.uuid4().hex
    text = ""
    for name, script, variables in (
        ("disputes", "examples/graph-service/server.py", "SALVOR_DISPUTES"),
        ("payroll", "examples/payroll/server.py", "SALVOR_PAYROLL"),
    ):
        delay = f', {variables}_PAY_DELAY_MS = "{pay_delay_ms}"' if name == "payroll" else ""
        text += (
            f'[servers.{name}]\ncommand = "python3"\nargs = ["{script}"]\ncwd = "{REFERENCE}"\n'
            f'env = {{ GATEHOUSE_TEST_MARK = "{marker}", '
            f'{variables}_LEDGER = "{folder / (name + "-ledger.txt")}", '
            f'{variables}_NOTICES = "{folder / (name + "-notices.json")}"{delay} }}\n'
            + (payroll if name == "payroll" else "")
            + "\n"
        )
    path = folder / "mcp-servers.toml"
    path.write_text(text + extra, encoding="utf-8")
    return path, marker


def hashes_named_by_graphs(folder: Path) -> set[str]:
    """Every ``agent_hash`` the graph documents of an example's folder name."""
    found: set[str] = set()
    stack: list[Any] = [json.loads(path.read_text()) for path in folder.glob("*.json")]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get("agent_hash"), str):
                found.add(value["agent_hash"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


__all__ = ["AGENT_FILES", "REFERENCE", "example_catalogue", "hashes_named_by_graphs"]
