"""The pages' fuzz corpus replayed: requests that once got (or could get) a server error, kept
in ``cases/page_fuzz/`` (picked by hand, found by the sweep, or written by ``make fuzz``), still
get an answer below 500 without a traceback, against fresh objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.page_fuzzing import ROLES, World, check, corpus_files, read_case, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_page_corpus_has_cases_for_known_roles() -> None:
    cases = [read_case(path) for path in corpus_files()]
    assert cases
    assert all(case["role"] in ROLES and case["method"] in ("GET", "POST") for case in cases)


@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.stem)
def test_a_corpus_request_gets_no_server_error(path: Path) -> None:
    world = World()
    case = read_case(path)

    check(send(world, case), case)
