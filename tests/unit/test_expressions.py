"""Tests of the condition language (spec 03).

Most cases live in ``cases/expressions.json``, typed by hand from the spec; the
tests below run them, then check what a table cannot: memoisation, the
sentinel, immutability, stack depth, short-circuiting and properties over
random input.
"""

from __future__ import annotations

import contextlib
import copy
import json
import pathlib
import pickle
import sys
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import editor.graph.expressions as expressions
from editor.graph.errors import ExpressionError
from editor.graph.expressions import (
    MISSING,
    Expression,
    Missing,
    Reference,
    json_equal,
    parse_expression,
    parse_reference,
)
from editor.graph.expressions import parser as parser_module
from editor.graph.expressions.lexer import tokenize
from editor.graph.expressions.parser import parse_condition
from editor.graph.expressions.syntax import Compare, Literal, Not, Path, render
from editor.graph.jsonio import canonical_json, read_json

CASES: dict[str, Any] = read_json(
    (pathlib.Path(__file__).parent / "cases" / "expressions.json").read_bytes()
)


def _text(spec: str | list[list[Any]]) -> str:
    """A case's text: a string, or [piece, count] pairs to concatenate."""
    if isinstance(spec, str):
        return spec
    return "".join(piece * count for piece, count in spec)


def _ids(cases: list[Any]) -> list[str]:
    texts = [_text(case if isinstance(case, (str, list)) else case["text"]) for case in cases]
    return [f"{index}:{text[:40]!r}" for index, text in enumerate(texts)]


def _same_json(actual: Any, expected: Any) -> bool:
    """Equal as JSON, telling 1 from 1.0, -0.0 from 0 and true from 1."""
    return canonical_json(actual) == canonical_json(expected)


def _cases(section: str) -> Any:
    return pytest.mark.parametrize("case", CASES[section], ids=_ids(CASES[section]))


# --- The case file ---------------------------------------------------------------------------


@_cases("expression_errors")
def test_a_malformed_expression_fails_with_the_exact_message(case: dict[str, Any]) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_expression(_text(case["text"]))
    assert str(caught.value) == case["error"]


@_cases("reference_errors")
def test_a_malformed_reference_fails_with_the_exact_message(case: dict[str, Any]) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_reference(_text(case["text"]))
    assert str(caught.value) == case["error"]


@_cases("parses")
def test_a_well_formed_expression_parses(case: str | list[list[Any]]) -> None:
    text = _text(case)
    expression = parse_expression(text)
    assert expression.text == text
    assert isinstance(expression.evaluate({}), bool)


@_cases("reference_segments")
def test_a_reference_parses_into_its_segments(case: dict[str, Any]) -> None:
    text = _text(case["text"])
    reference = parse_reference(text)
    assert reference.text == text
    assert reference.segments == tuple(case["segments"])
    assert all(type(segment) in (str, int) for segment in reference.segments)


@_cases("resolutions")
def test_a_reference_resolves_to_the_value_it_names_or_to_missing(case: dict[str, Any]) -> None:
    resolved = parse_reference(case["text"]).resolve(case["value"])
    if case.get("missing"):
        assert resolved is MISSING
    else:
        assert resolved is not MISSING
        assert _same_json(resolved, case["expected"])


@_cases("evaluations")
def test_an_expression_evaluates_as_the_spec_says(case: dict[str, Any]) -> None:
    result = parse_expression(_text(case["text"])).evaluate(case["value"])
    assert result is case["expected"]


@_cases("plain_json_evaluations")
def test_values_from_plain_json_loads_follow_the_reference_number_rule(
    case: dict[str, Any],
) -> None:
    result = parse_expression(case["text"]).evaluate(json.loads(case["json"]))
    assert result is case["expected"]


@_cases("tokens")
def test_the_lexer_reports_each_token_with_its_character_position(case: dict[str, Any]) -> None:
    tokens = tokenize(case["text"])
    assert [[token.kind.value, token.position] for token in tokens] == [
        expected[:2] for expected in case["tokens"]
    ]
    for token, expected in zip(tokens, case["tokens"], strict=True):
        if len(expected) == 3:
            assert _same_json(token.value, expected[2])
        else:
            assert token.value is None


@_cases("renders")
def test_the_parser_groups_as_the_precedence_rules_say(case: dict[str, Any]) -> None:
    assert render(parse_expression(case["text"]).root) == case["render"]


@_cases("renders")
def test_a_rendered_expression_parses_back_to_an_equal_tree(case: dict[str, Any]) -> None:
    root = parse_expression(case["text"]).root
    assert parse_condition(render(root)) == root


# --- Errors ----------------------------------------------------------------------------------


def test_a_lone_ampersand_suggests_double_ampersand() -> None:
    with pytest.raises(ExpressionError, match=r"^found a lone `&`; did you mean `&&`\? at"):
        parse_expression("a & b")


def test_a_lexical_error_wins_over_an_earlier_syntax_error() -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_expression("a b &")
    assert (caught.value.what, caught.value.position) == ("a lone `&`; did you mean `&&`?", 4)


def test_the_length_limit_and_a_literal_reference_carry_no_position() -> None:
    for parse, text in [(parse_expression, "a" * 513), (parse_reference, "a" * 600)]:
        with pytest.raises(ExpressionError) as caught:
            parse(text)
        assert caught.value.position is None
    with pytest.raises(ExpressionError) as caught:
        parse_reference('"x"')
    assert caught.value.position is None
    assert str(caught.value) == "a reference must be a path into the routed value, not a literal"


def test_exactly_512_characters_parse_and_513_do_not() -> None:
    assert parse_expression("a" * 512).evaluate({"a" * 512: True}) is True
    assert parse_reference("a" * 512).segments == ("a" * 512,)
    with pytest.raises(ExpressionError, match=r"^expression is 513 characters long"):
        parse_expression("a" * 513)
    with pytest.raises(ExpressionError, match=r"^reference is 513 characters long"):
        parse_reference("a" * 513)


def test_parsing_something_that_is_not_text_is_a_type_error() -> None:
    for parse in (parse_expression, parse_reference):
        with pytest.raises(TypeError):
            parse(None)  # type: ignore[operator]
        with pytest.raises(TypeError):
            parse(b"a")  # type: ignore[operator]


# --- Memoisation -----------------------------------------------------------------------------


def test_a_successful_parse_is_memoised() -> None:
    assert parse_expression("memo_a && memo_b") is parse_expression("memo_a && memo_b")
    assert parse_reference("memo.a.0") is parse_reference("memo.a.0")


def test_a_failed_parse_is_memoised_and_raised_afresh_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def counting_tokenize(text: str) -> Any:
        calls.append(text)
        return tokenize(text)

    monkeypatch.setattr(parser_module, "tokenize", counting_tokenize)
    errors = []
    for _ in range(3):
        with pytest.raises(ExpressionError) as caught:
            parse_expression("memo_x = 1")
        errors.append(caught.value)
        with pytest.raises(ExpressionError) as caught:
            parse_reference("memo_y.")
        errors.append(caught.value)
    assert calls == ["memo_x = 1", "memo_y."]
    assert len({id(error) for error in errors}) == 6
    assert {str(error) for error in errors[0::2]} == {
        "found a lone `=`; did you mean `==`? at character 7"
    }
    assert {str(error) for error in errors[1::2]} == {
        "found a missing path segment after `.` at character 7"
    }


# --- Objects ---------------------------------------------------------------------------------


def test_missing_is_one_falsy_sentinel_that_survives_copying_and_pickling() -> None:
    assert repr(MISSING) == "MISSING"
    assert not MISSING
    assert MISSING is not None
    assert Missing() is MISSING
    assert copy.copy(MISSING) is MISSING
    assert copy.deepcopy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING


def test_syntax_tree_nodes_are_immutable() -> None:
    expression = parse_expression("!(score > 0.8)")
    node = expression.root
    assert isinstance(node, Not)
    with pytest.raises(FrozenInstanceError):
        node.operand = node  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        expression.text = "other"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        parse_reference("a.b").segments = ()  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        node.extra = 1  # type: ignore[attr-defined]
    assert isinstance(parse_reference("a.0").segments, tuple)


def test_expressions_that_differ_only_in_spacing_are_equal() -> None:
    first, second = parse_expression("a&&b.0==1"), parse_expression(" a && b . 0 == 1 ")
    assert first == second
    assert hash(first) == hash(second)
    assert first.text != second.text
    assert parse_expression("x == 1") != parse_expression("x == 1.0")
    assert parse_expression("x == 1") != parse_expression("x == true")
    assert parse_expression("x == 0") != parse_expression("x == -0")
    assert parse_reference("a . b") == parse_reference("a.b")
    assert parse_reference("a.0") != parse_reference("a.b")


def test_the_tree_has_the_shape_the_text_spells() -> None:
    root = parse_expression('!items.0.score >= "x"').root
    assert isinstance(root, Not)
    assert root.operand == Compare(Path(("items", 0, "score")), ">=", Literal("x"))
    assert repr(parse_expression("a")) == "Expression('a')"
    assert repr(parse_reference("a.0")) == "Reference('a.0')"
    assert repr(root) == 'Not(!(items.0.score >= "x"))'


def test_the_package_exports_its_public_api() -> None:
    for name in expressions.__all__:
        assert hasattr(expressions, name), name
    assert expressions.ExpressionError is ExpressionError
    assert isinstance(parse_expression("a"), Expression)
    assert isinstance(parse_reference("a"), Reference)
    assert expressions.MAX_LENGTH == 512


# --- Evaluation details ----------------------------------------------------------------------


class _RecordingDict(dict):
    """A dict that records which keys the evaluator looks up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.looked_up: list[Any] = []

    def __contains__(self, key: object) -> bool:
        self.looked_up.append(key)
        return super().__contains__(key)


@pytest.mark.parametrize(
    ("text", "value", "looked_up"),
    [
        ("a || b", {"a": True, "b": True}, ["a"]),
        ("a || b", {"a": False, "b": True}, ["a", "b"]),
        ("a && b", {"a": False, "b": True}, ["a"]),
        ("a && b", {"a": True, "b": True}, ["a", "b"]),
        ("(a || b) && c", {"a": True, "c": False}, ["a", "c"]),
        ("!a || b || c", {"a": False}, ["a"]),
        ("a && b || c", {"a": False, "c": True}, ["a", "c"]),
    ],
)
def test_and_and_or_short_circuit(text: str, value: dict[str, Any], looked_up: list[str]) -> None:
    recording = _RecordingDict(value)
    parse_expression(text).evaluate(recording)
    assert recording.looked_up == looked_up


def test_an_integer_too_large_for_a_double_does_not_make_evaluation_raise() -> None:
    huge = json.loads("1" + "0" * 400)
    assert parse_expression("x > 1").evaluate({"x": huge}) is True
    assert parse_expression("x < 1").evaluate({"x": -huge}) is True
    assert parse_expression("x == y").evaluate({"x": [huge], "y": [huge]}) is True


def test_values_that_are_not_json_never_make_evaluation_raise() -> None:
    strange = [object(), {1, 2}, b"bytes", 1j, float("nan"), Ellipsis]
    for value in strange:
        for text in ["x == y", "x != y", "x < y", "x >= 1", "x", "x.0 == 1", "x.a"]:
            result = parse_expression(text).evaluate({"x": value, "y": value})
            assert result is True or result is False
    assert parse_expression("x == x").evaluate({"x": float("nan")}) is False
    assert parse_expression("x != x").evaluate({"x": float("nan")}) is True


def test_deeply_nested_values_compare_without_recursion() -> None:
    def nest(depth: int) -> list[Any]:
        value: list[Any] = [1]
        for _ in range(depth):
            value = [value]
        return value

    equal = parse_expression("x == y")
    assert equal.evaluate({"x": nest(20_000), "y": nest(20_000)}) is True
    assert equal.evaluate({"x": nest(20_000), "y": nest(19_999)}) is False
    assert json_equal(nest(20_000), nest(20_000)) is True


def _stack_depth() -> int:
    frame = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


def _run_deeper(levels: int, work: Callable[[], None]) -> None:
    if levels <= 0:
        work()
    else:
        _run_deeper(levels - 1, work)


def test_deep_nesting_parses_and_evaluates_close_to_the_recursion_limit() -> None:
    headroom = 30  # frames left between the caller and the recursion limit
    parens = "(" * 255 + "a" + ")" * 255
    bangs = "!" * 511 + "a"
    negated_groups = "!(" * 170 + "a" + ")" * 170
    chains = "a||(b&&(" * 40 + "c" + "))" * 40

    def work() -> None:
        assert _stack_depth() >= sys.getrecursionlimit() - headroom - 2
        for text in (parens, bangs, negated_groups, chains):
            root = parse_condition(text)
            rendered = render(root)
            assert len(rendered) > 512 or parse_condition(rendered) == root
            assert hash(root) == hash(parse_condition(text))
            assert repr(root)
        assert parse_expression(parens).evaluate({"a": True}) is True
        assert parse_expression(bangs).evaluate({"a": False}) is True
        assert parse_expression(negated_groups).evaluate({"a": True}) is True
        assert parse_expression(chains).evaluate({"b": True, "c": True}) is True
        with pytest.raises(ExpressionError, match=r"missing closing `\)` at character 301$"):
            parse_condition("(" * 300 + "a")
        with pytest.raises(ExpressionError, match=r"required at character 512$"):
            parse_condition("!" * 512)
        assert parse_reference("a" + " .0" * 170).resolve({"a": [[1]]}) is MISSING

    levels = sys.getrecursionlimit() - _stack_depth() - headroom
    assert levels > 0
    _run_deeper(levels, work)


# --- Properties ------------------------------------------------------------------------------

_PIECES = [
    "a", "b", "x", "items", "_", "0", "1", "-1", "0.5", "01", "18446744073709551616", ".",
    "(", ")", "!", "!=", "==", "=", "<", "<=", ">", ">=", "&&", "&", "||", "|", '"', '"s"',
    "\\", "\\n", "true", "false", "null", " ", "\u3000", "\u0085", "\u001c", "\u200b", "é",
    "-", "e5", "'", "\U0001f600",
]  # fmt: skip
_SOUP = st.lists(st.sampled_from(_PIECES), max_size=300).map(lambda pieces: "".join(pieces)[:600])
_CHARACTERS = st.text(alphabet='ab01.()!=<>&|"\\ -_\t\u3000\u0085\u001c', max_size=600)
_ANY_TEXT = st.text(max_size=600)
_KEYS = st.sampled_from(["a", "b", "x", "y", "items", "score", "flag", "0", ""])
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=5),
    max_leaves=20,
)
_PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _parses_or_fails_cleanly(text: str) -> Expression | None:
    try:
        return parse_expression(text)
    except ExpressionError:
        return None


@_PROPERTY_SETTINGS
@given(text=_ANY_TEXT | _CHARACTERS | _SOUP)
def test_any_text_either_parses_or_fails_with_an_expression_error(text: str) -> None:
    expression = _parses_or_fails_cleanly(text)
    if expression is not None:
        assert expression.text == text
    with contextlib.suppress(ExpressionError):
        parse_reference(text)


# Well-formed expressions of every shape, mixing precedence levels without parentheses.
_OPERANDS = st.sampled_from([
    "a", "b", "x", "y", "flag", "items.0", "items.1.score", "a.b.c", "y.0 .0", "score",
    "1", "-1", "0.5", "1.0", "-0", "18446744073709551616", '"s"', '""', "true", "null",
])  # fmt: skip
_COMPARISONS = _OPERANDS | st.builds(
    lambda left, operator, right: f"{left} {operator} {right}",
    _OPERANDS,
    st.sampled_from(["==", "!=", "<", "<=", ">", ">="]),
    _OPERANDS,
)
_GRAMMATICAL = st.recursive(
    _COMPARISONS,
    lambda children: (
        children.map(lambda text: f"!{text}")
        | children.map(lambda text: f"({text})")
        | st.builds(lambda a, b: f"{a} && {b}", children, children)
        | st.builds(lambda a, b: f"{a}||{b}", children, children)
    ),
    max_leaves=25,
)


@_PROPERTY_SETTINGS
@given(text=_GRAMMATICAL | _SOUP, values=st.lists(_JSON, min_size=1, max_size=5))
def test_a_parsed_expression_evaluates_to_a_boolean_on_any_json_value(
    text: str, values: list[Any]
) -> None:
    expression = _parses_or_fails_cleanly(text)
    if expression is None:
        return
    for value in values:
        result = expression.evaluate(value)
        assert result is True or result is False


# A generator of well-formed conditions paired with an oracle: leaves are evaluated by the
# library on their own, and the oracle combines them with Python's boolean operators.
_LEAVES = [
    "a", "b", "flag", "true", "null", "x == 1", "x != null", "score > 0.8", "items.0 <= 2",
    "a == b", "items.1.score >= -1", '"s" < x', "x == y", "!a", "y.0 .0 == x",
]  # fmt: skip
type _Case = tuple[str, Callable[[Any], bool]]


def _leaf(text: str) -> _Case:
    return text, parse_expression(text).evaluate


def _negated(case: _Case) -> _Case:
    text, oracle = case
    return f"!({text})", lambda value: not oracle(value)


def _grouped(case: _Case) -> _Case:
    text, oracle = case
    return f"(({text}))", oracle


def _all_of(cases: list[_Case]) -> _Case:
    text = " && ".join(f"({text})" for text, _ in cases)
    return text, lambda value: all(oracle(value) for _, oracle in cases)


def _any_of(cases: list[_Case]) -> _Case:
    text = " || ".join(f"({text})" for text, _ in cases)
    return text, lambda value: any(oracle(value) for _, oracle in cases)


_CONDITIONS = st.recursive(
    st.sampled_from(_LEAVES).map(_leaf),
    lambda children: (
        children.map(_negated)
        | children.map(_grouped)
        | st.lists(children, min_size=2, max_size=4).map(_all_of)
        | st.lists(children, min_size=2, max_size=4).map(_any_of)
    ),
    max_leaves=30,
)


@_PROPERTY_SETTINGS
@given(case=_CONDITIONS, values=st.lists(_JSON, min_size=1, max_size=5))
def test_evaluation_combines_conditions_as_the_boolean_operators_say(
    case: _Case, values: list[Any]
) -> None:
    text, oracle = case
    assume(len(text) <= 512)
    expression = parse_expression(text)
    for value in [*values, {"a": True, "b": True, "flag": True, "x": 1, "y": [[1]]}]:
        assert expression.evaluate(value) is oracle(value)


@_PROPERTY_SETTINGS
@given(text=_GRAMMATICAL | _CONDITIONS.map(lambda case: case[0]) | _SOUP)
def test_a_parsed_expression_renders_to_text_that_parses_back_to_it(text: str) -> None:
    expression = _parses_or_fails_cleanly(text)
    assume(expression is not None)
    rendered = render(expression.root)  # type: ignore[union-attr]
    assume(len(rendered) <= 512)
    assert parse_condition(rendered) == expression.root  # type: ignore[union-attr]


@_PROPERTY_SETTINGS
@given(text=_GRAMMATICAL)
def test_every_grammatical_text_within_the_limit_parses(text: str) -> None:
    assume(len(text) <= 512)
    assert parse_expression(text).text == text
