"""Fuzzing the pages: every form and query parameter of every page, as every role, with
hostile values; no answer is a 5xx or shows a traceback (``page_fuzzing.py`` says what is sent).

Beside the API's Schemathesis run (``test_api_schemathesis.py``). In ``make test`` each page
gets a few repeatable examples; ``make fuzz`` runs many more (``GATEHOUSE_FUZZ_PAGE_EXAMPLES``),
randomly seeded, keeps Hypothesis' example database under ``var/fuzz/`` and writes a case that
broke the promise into ``cases/page_fuzz/``, which ``test_page_fuzz_corpus.py`` replays.

Requests run in autocommit, as in production (``transaction=True``): a database error one
request provokes cannot leak into the next one through a shared test transaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from tests.integration.page_fuzzing import (
    EXAMPLES,
    FUZZING,
    HOSTILE,
    MEGABYTE,
    NUMBERISH,
    PAGES,
    ROLES,
    Page,
    World,
    check,
    encode_value,
    send,
    write_case,
)

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def _settings() -> settings:
    if FUZZING:
        extra: dict[str, Any] = {
            "database": DirectoryBasedExampleDatabase(str(ROOT / "var" / "fuzz" / "pages"))
        }
    else:
        extra = {"derandomize": True, "database": None}
    return settings(
        max_examples=EXAMPLES,
        deadline=None,  # a request's speed is make bench's business
        suppress_health_check=list(HealthCheck),
        **extra,
    )


@pytest.fixture
def world() -> World:
    return World()


def values_for(page: Page, param: str) -> st.SearchStrategy[str | bytes]:
    return st.one_of(
        st.sampled_from(NUMBERISH),
        st.sampled_from(HOSTILE),
        st.sampled_from(page.plausible_for(param) or ("",)),
        st.text(max_size=12),
        st.integers().map(str),
    )


def parameters(page: Page) -> st.SearchStrategy[list[tuple[str, Any]]]:
    """Some of the page's parameters, each once or several times (a list where a scalar goes),
    now and then one it does not read."""

    def pairs(param: str) -> st.SearchStrategy[list[tuple[str, Any]]]:
        values = values_for(page, param)
        return st.one_of(
            st.just([]),
            values.map(lambda value: [(param, value)]),
            st.lists(values, min_size=2, max_size=3).map(lambda vs: [(param, v) for v in vs]),
        )

    stray = st.lists(st.tuples(st.sampled_from(("x", "\x00", "²", "a" * 300)), st.text()))
    return st.tuples(*(pairs(param) for param in page.params), stray).map(
        lambda groups: [pair for group in groups for pair in group]
    )


@pytest.mark.parametrize("route", PAGES, ids=lambda route: route.name)
@_settings()
@given(data=st.data())
def test_no_page_answers_a_server_error(world: World, route: Page, data: st.DataObject) -> None:
    page = route
    pairs = data.draw(parameters(page), label="parameters")
    case = {
        "method": page.method,
        "path": page.path,
        "role": data.draw(st.sampled_from(ROLES), label="role"),
        "htmx": data.draw(st.booleans(), label="htmx"),
        "query": [[name, encode_value(value)] for name, value in pairs]
        if page.method == "GET"
        else [],
        "form": [[name, encode_value(value)] for name, value in pairs]
        if page.method == "POST"
        else [],
    }
    response = send(world, case)
    try:
        check(response, case)
    except AssertionError as error:
        if FUZZING:
            write_case(case, f"failed: {error}"[:300])
        raise


#: The sweep's values: each kind of hostile value once.
SWEEP: tuple[str | bytes, ...] = (
    "²",
    "①",
    "9" * 30,
    "-1",
    "a\x00b",
    '{"approved": true, "note": "\\u0000"}',
    '[["each", 1]]',
    '{"a": 1, "a": 2}',
    "NaN",
    b"\xff\xfe",
    "x" * MEGABYTE,
)


def _plausible_pairs(page: Page, skip: str) -> list[tuple[str, str]]:
    return [
        (param, page.plausible_for(param)[0])
        for param in page.params
        if param != skip and page.plausible_for(param)
    ]


@pytest.mark.parametrize("route", [page for page in PAGES if page.params], ids=lambda r: r.name)
def test_each_parameter_survives_each_hostile_value(world: World, route: Page) -> None:
    """Deterministic, beside the random examples: every parameter of the page gets each kind
    of hostile value (and a list of two), the other parameters plausible ones, as the user who
    may do everything, so each value reaches as deep as a request can take it."""
    for index, param in enumerate(route.params):
        for value in (*SWEEP, ["²", "1"]):
            chosen = value if isinstance(value, list) else [value]
            pairs = [*_plausible_pairs(route, param), *((param, v) for v in chosen)]
            encoded = [[name, encode_value(v)] for name, v in pairs]
            case = {
                "method": route.method,
                "path": route.path,
                "role": "admin",
                "htmx": index % 2 == 0,
                "query": encoded if route.method == "GET" else [],
                "form": encoded if route.method == "POST" else [],
            }
            check(send(world, case), case)
