"""The fuzz corpus replayed: every input the fuzzers found interesting (or that was picked by
hand) still meets its target's promise, with the outcome recorded beside it.

An outcome that changes on purpose (a new error code for a case, say) is updated in the case
file; a case recorded as a failure (no outcome) passes once the failure is fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.fuzzing import TARGETS, check, corpus_files, read_case


def test_the_corpus_is_there_and_each_case_names_a_known_target() -> None:
    cases = [read_case(path) for path in corpus_files()]
    assert {case["target"] for case in cases} == TARGETS
    assert all("input" in case and "note" in case for case in cases)


@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.stem)
def test_a_corpus_case_meets_its_promise_with_its_recorded_outcome(path: Path) -> None:
    case = read_case(path)
    outcome = check(case["target"], case["input"], case.get("value"))
    if case["outcome"]:
        assert outcome == case["outcome"]
