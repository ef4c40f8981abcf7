"""The mark of the tests that need the reference's examples: absent, they are skipped with the
places looked in; with ``GATEHOUSE_TEST_EXPECT_EXAMPLES=1`` they fail instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import reference_examples
from tests.reference_examples import LOOKED_IN, needs_examples


def test_a_test_whose_examples_are_absent_is_skipped_naming_where_they_were_looked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(reference_examples, "EXPECT_EXAMPLES", False)
    # The examples folder is there (wherever this checkout sits); a file of it is not.
    monkeypatch.setattr(reference_examples, "EXAMPLES", tmp_path)

    mark = needs_examples(tmp_path / "payroll" / "server.py").mark

    assert mark.name == "skip"
    assert f"no {tmp_path / 'payroll' / 'server.py'}" in mark.kwargs["reason"]
    assert str(LOOKED_IN[0]) in mark.kwargs["reason"]


def test_a_test_whose_examples_are_absent_fails_when_they_are_expected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(reference_examples, "EXPECT_EXAMPLES", True)

    mark = needs_examples(tmp_path / "nowhere").mark

    assert mark.name == "reference_examples_missing"
    assert mark.args[0].startswith("GATEHOUSE_TEST_EXPECT_EXAMPLES=1, but the reference's")


def test_present_examples_neither_skip_nor_fail(tmp_path: Path) -> None:
    if not reference_examples.EXAMPLES.is_dir():
        pytest.skip("the reference's examples are absent here")

    mark = needs_examples(tmp_path).mark

    assert mark.name == "skipif" and mark.args == (False,)
