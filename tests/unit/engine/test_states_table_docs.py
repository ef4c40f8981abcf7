"""The run-state table in docs/engine.md is generated from the code's table."""

from __future__ import annotations

from pathlib import Path

from editor.engine.states import markdown_table

DOCS = Path(__file__).resolve().parents[3] / "docs" / "engine.md"


def test_the_documented_state_table_is_the_one_the_code_checks() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented = text.split("<!-- states-table:start -->")[1].split("<!-- states-table:end -->")[0]
    assert documented.strip() == markdown_table(), (
        "docs/engine.md's state table drifted: regenerate it with python -m editor.engine.states"
    )
