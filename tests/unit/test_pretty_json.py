"""JSON for people (``editor.graph.jsonio.pretty_json``): the text of
``json.dumps(value, indent=2, ensure_ascii=False)``, written without leaving reference cycles
for the garbage collector (the standard library's indented encoder leaves one per call)."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.graph.jsonio import pretty_json
from tests.unit.strategies import json_values


@settings(max_examples=400)
@given(json_values(max_text=12, max_leaves=40, int64=False))
def test_it_writes_what_the_standard_library_writes(value: Any) -> None:
    assert pretty_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


@given(st.text())
def test_every_string_is_escaped_as_the_standard_library_escapes_it(text: str) -> None:
    assert pretty_json({text: [text]}) == json.dumps({text: [text]}, indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        [[], {}],
        {"é": '\u2028 \x00 "quoted" \\ \n'},
        [1e16, -0.0, 1.5e-7, 10**40, True, False, None],
        (1, (2, 3)),  # tuples are lists
        [float("nan"), float("inf"), float("-inf")],
        {1: "a", None: "b", 2.5: "c", False: "d"},  # keys json.dumps converts
    ],
    ids=repr,
)
def test_the_edges_of_json_are_written_the_same(value: Any) -> None:
    assert pretty_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_what_json_cannot_write_is_refused_as_json_dumps_refuses_it() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        pretty_json({"when": object()})


def test_writing_a_value_leaves_no_garbage_cycle() -> None:
    value = {"draft": "text", "items": [{"n": 1.5, "ok": True}, None], "empty": {}}
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            pretty_json(value)
        assert gc.collect() == 0
        for _ in range(50):
            json.dumps(value, indent=2, ensure_ascii=False)
        assert gc.collect() > 0  # what the standard library's indented encoder leaves
    finally:
        gc.enable()
