"""The small built-ins: echo, template, pick, merge, score_text."""

from __future__ import annotations

from typing import Any

import pytest

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext
from editor.graph import parse_expression
from editor.tools import build_registry

CONTEXT = ToolContext("run", "node", "key", 5.0)
REGISTRY = build_registry()


def call(name: str, value: Any) -> Any:
    return REGISTRY.get(name).func(value, CONTEXT)


@pytest.mark.parametrize("value", [None, 1, "x", [1, {"a": 2}], {"nested": {"b": [True]}}])
def test_echo_returns_its_input_unchanged(value: Any) -> None:
    assert call("echo", value) == value


def test_template_renders_dotted_paths_from_values() -> None:
    rendered = call(
        "template",
        {
            "template": "Dear {user.name}, item {items.0} costs {price}.",
            "values": {"user": {"name": "Ada"}, "items": ["tea"], "price": 3.5},
        },
    )
    assert rendered == "Dear Ada, item tea costs 3.5."


def test_template_writes_non_text_values_as_compact_json() -> None:
    assert (
        call("template", {"template": "{a}", "values": {"a": {"b": [1, "é"]}}}) == '{"b":[1,"é"]}'
    )


def test_template_doubled_braces_are_literal_braces() -> None:
    assert call("template", {"template": "{{x}} = {x}}}", "values": {"x": 1}}) == "{x} = 1}"


def test_template_names_a_missing_path() -> None:
    with pytest.raises(ToolError, match=r"the template names `user\.email`, which is missing"):
        call("template", {"template": "{user.email}", "values": {"user": {}}})


def test_template_refuses_an_unclosed_or_lone_brace() -> None:
    with pytest.raises(ToolError, match="never closed"):
        call("template", {"template": "a {b", "values": {}})
    with pytest.raises(ToolError, match="lone `}`"):
        call("template", {"template": "a } b", "values": {}})


def test_template_refuses_an_input_without_a_template() -> None:
    with pytest.raises(ToolError, match=r"input_schema at \$: 'template' is a required property"):
        call("template", {"values": {}})


def test_pick_returns_the_selected_paths_keyed_by_their_text() -> None:
    picked = call("pick", {"from": {"a": {"b": 1}, "c": [5, 6]}, "paths": ["a.b", "c.1", "c"]})
    assert picked == {"a.b": 1, "c.1": 6, "c": [5, 6]}


def test_pick_gives_null_for_a_path_that_names_nothing() -> None:
    assert call("pick", {"from": {"a": 1}, "paths": ["a", "b.c"]}) == {"a": 1, "b.c": None}


def test_pick_refuses_a_path_that_is_not_a_reference() -> None:
    with pytest.raises(ToolError, match=r"the path `a\.\.b` is not a valid path"):
        call("pick", {"from": {}, "paths": ["a..b"]})


def test_merge_is_a_shallow_merge_from_left_to_right() -> None:
    merged = call("merge", [{"a": 1, "n": {"x": 1}}, {"b": 2}, {"a": 3, "n": {"y": 2}}])
    assert merged == {"a": 3, "b": 2, "n": {"y": 2}}
    assert call("merge", []) == {}


def test_merge_refuses_an_item_that_is_not_an_object() -> None:
    with pytest.raises(ToolError, match=r"at \$\[1\]"):
        call("merge", [{"a": 1}, [2]])


def test_score_text_is_deterministic_and_between_zero_and_one() -> None:
    text = "the panel found three problems with the method and one with the data"
    first = call("score_text", text)
    assert first == call("score_text", {"text": text})
    assert first["text"] == text
    assert 0 < first["score"] < 1
    assert call("score_text", "")["score"] == 0


def test_score_text_rewards_length_and_distinct_words() -> None:
    short = call("score_text", "a b c")["score"]
    longer = call("score_text", " ".join(f"w{i}" for i in range(20)))["score"]
    full = call("score_text", " ".join(f"w{i}" for i in range(40)))["score"]
    repetitive = call("score_text", " ".join("same" for _ in range(40)))["score"]
    assert short < longer < full == 1.0
    assert repetitive < full
    assert call("score_text", " ".join(f"w{i}" for i in range(9)))["score"] == 0.225


def test_a_refine_loop_can_stop_on_the_score() -> None:
    stop_when = parse_expression("score >= 0.85")
    assert stop_when.evaluate(call("score_text", " ".join(f"w{i}" for i in range(40))))
    assert not stop_when.evaluate(call("score_text", "too short"))
