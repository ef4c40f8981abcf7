"""The strict JSON reader, ``read_json`` (spec 01, *Strict parsing*; stack-notes §12).

Python's :mod:`json` accepts text the reference's parser (serde_json) refuses; every such case
must be refused here, with a :class:`JsonError` (never another exception). Numbers are read as
the reference reads them. The bulk of the cases live in ``cases/json_reader.json``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.graph.errors import JsonError, MalformedDocument
from editor.graph.jsonio import ReferenceJsonDecoder, canonical_text, read_json
from editor.graph.parsing import parse_document
from tests.unit.strategies import json_values

CASES = json.loads((Path(__file__).parent / "cases" / "json_reader.json").read_text("utf-8"))
REFUSED_TEXT = CASES["refused_text"]
REFUSED_BYTES = CASES["refused_bytes"]
NUMBERS = CASES["numbers"]
TYPES = {"int": int, "float": float, "list": list, "dict": dict}


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [case["id"] for case in cases]


def _refuse(data: bytes | str) -> JsonError:
    with pytest.raises(JsonError) as caught:
        read_json(data)
    assert str(caught.value), "the error must say what is wrong"
    return caught.value


def _nest(shape: str, levels: int) -> str:
    """JSON text nested exactly ``levels`` deep (the outer value is level 1)."""
    if shape == "array":
        return "[" * levels + "]" * levels
    if shape == "object":
        return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)
    # mixed: alternate objects and arrays, innermost holds a scalar
    opening = "".join('{"k":' if level % 2 == 0 else "[" for level in range(levels))
    closing = "".join("}" if level % 2 == 0 else "]" for level in reversed(range(levels)))
    return opening + "0" + closing


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


# --- what Python accepts and the reference refuses -----------------------------------------


@pytest.mark.parametrize("case", REFUSED_TEXT, ids=_ids(REFUSED_TEXT))
def test_text_the_reference_refuses_is_refused_as_a_str(case: dict[str, Any]) -> None:
    error = _refuse(case["text"])
    if "message" in case:
        assert case["message"] in str(error)


@pytest.mark.parametrize("case", REFUSED_TEXT, ids=_ids(REFUSED_TEXT))
def test_text_the_reference_refuses_is_refused_as_utf8_bytes(case: dict[str, Any]) -> None:
    error = _refuse(case["text"].encode("utf-8"))
    if "message" in case:
        assert case["message"] in str(error)


@pytest.mark.parametrize("case", REFUSED_BYTES, ids=_ids(REFUSED_BYTES))
def test_bytes_the_reference_refuses_are_refused(case: dict[str, Any]) -> None:
    _refuse(bytes.fromhex(case["hex"]))


@pytest.mark.parametrize(
    "case", REFUSED_TEXT + REFUSED_BYTES, ids=_ids(REFUSED_TEXT + REFUSED_BYTES)
)
def test_the_case_table_states_truly_whether_python_json_accepts_the_input(
    case: dict[str, Any],
) -> None:
    data: str | bytes = case["text"] if "text" in case else bytes.fromhex(case["hex"])
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        accepted = False
    else:
        accepted = True
    assert accepted is case["python_accepts"]


@pytest.mark.parametrize(
    "case", REFUSED_TEXT + REFUSED_BYTES, ids=_ids(REFUSED_TEXT + REFUSED_BYTES)
)
def test_parse_document_turns_every_refusal_into_one_malformed_document(
    case: dict[str, Any],
) -> None:
    data: str | bytes = case["text"] if "text" in case else bytes.fromhex(case["hex"])
    with pytest.raises(MalformedDocument) as caught:
        parse_document(data)
    assert caught.value.code == "malformed_document"


def test_a_str_holding_a_raw_lone_surrogate_is_refused() -> None:
    _refuse('"\ud800"')
    _refuse('{"k\udc00":1}')


def test_a_raw_lone_surrogate_is_refused_even_next_to_a_valid_escaped_pair() -> None:
    _refuse('["\\ud83d\\ude00","\ud800"]')


def test_a_valid_surrogate_pair_escape_is_read_as_one_character() -> None:
    assert read_json('"\\ud83d\\ude00"') == "\U0001f600"
    assert read_json('"\\uD83D\\uDE00"') == "\U0001f600"
    assert read_json(b'{"\\ud83d\\ude00":"x\\ud800\\udc00y"}') == {"\U0001f600": "x\U00010000y"}
    assert read_json('"\\udbff\\udfff"') == "\U0010ffff"


def test_an_escaped_backslash_before_u_d800_is_plain_text_not_a_surrogate() -> None:
    assert read_json('"\\\\ud800"') == "\\ud800"
    assert read_json(b'["\\\\uDC00"]') == ["\\uDC00"]


def test_raw_utf8_characters_are_read() -> None:
    assert read_json('"é😀"'.encode()) == "é😀"
    assert read_json('"é😀"') == "é😀"
    assert read_json('"\u2028\u007f/"'.encode()) == "\u2028\u007f/"


def test_the_four_json_whitespace_characters_are_allowed_everywhere_between_tokens() -> None:
    text = ' \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2 \t\n\r] \t\n\r} \t\n\r'
    assert read_json(text) == {"a": [1, 2]}
    assert read_json(text.encode()) == {"a": [1, 2]}


def test_a_byte_order_mark_inside_a_string_is_an_ordinary_character() -> None:
    assert read_json('"\ufeff"') == "\ufeff"
    assert read_json('"\ufeff"'.encode()) == "\ufeff"


def test_something_that_is_not_json_text_is_refused_cleanly() -> None:
    for value in (5, None, 1.5, ["[]"], {"a": 1}):
        with pytest.raises(JsonError):
            read_json(value)  # type: ignore[arg-type]


def test_bytearray_and_memoryview_are_read_like_bytes() -> None:
    assert read_json(bytearray(b'{"a":[1]}')) == {"a": [1]}
    assert read_json(memoryview(b'{"a":[1]}')) == {"a": [1]}
    _refuse(bytearray(b"\xef\xbb\xbf{}"))


# --- duplicate keys --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 10, 60, 126])
def test_a_duplicate_key_is_refused_at_any_depth(depth: int) -> None:
    inner = '{"same":1,"same":2}'
    text = '{"k":' * (depth - 1) + inner + "}" * (depth - 1)
    assert "`same`" in str(_refuse(text))


def test_a_duplicate_key_inside_a_free_json_value_of_a_document_is_refused() -> None:
    document = (
        '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g",'
        '"approval_schema":{"type":"object","properties":{"a":{},"a":{}}}}}]}'
    )
    with pytest.raises(MalformedDocument, match="`a`"):
        parse_document(document)


def test_keys_that_differ_only_in_case_or_normalisation_are_not_duplicates() -> None:
    assert read_json('{"a":1,"A":2}') == {"a": 1, "A": 2}
    assert read_json('{"\u00e9":1,"e\u0301":2}') == {"\u00e9": 1, "e\u0301": 2}


def test_the_same_key_in_sibling_objects_is_not_a_duplicate() -> None:
    assert read_json('[{"a":1},{"a":2}]') == [{"a": 1}, {"a": 2}]
    assert read_json('{"a":{"a":{"a":1}}}') == {"a": {"a": {"a": 1}}}


# --- nesting depth ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["array", "object", "mixed"])
def test_127_levels_of_nesting_parse(shape: str) -> None:
    value = read_json(_nest(shape, 127))
    assert _depth(value) == 127


@pytest.mark.parametrize("shape", ["array", "object", "mixed"])
def test_128_levels_of_nesting_do_not_parse(shape: str) -> None:
    _refuse(_nest(shape, 128))
    _refuse(_nest(shape, 128).encode())


@pytest.mark.parametrize("shape", ["array", "object", "mixed"])
@pytest.mark.parametrize("closed", [True, False], ids=["closed", "unclosed"])
def test_100000_levels_give_a_clean_error_not_a_recursion_error(shape: str, closed: bool) -> None:
    text = _nest(shape, 100_000)
    if not closed:
        text = text[: len(text) // 2]
    _refuse(text)


def test_a_deep_document_is_one_malformed_document_error() -> None:
    schema = "[" * 130 + "]" * 130
    document = (
        '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g",'
        f'"approval_schema":{schema}}}}}]}}'
    )
    with pytest.raises(MalformedDocument):
        parse_document(document)


def test_the_document_object_itself_counts_as_level_one() -> None:
    # document(1) > nodes(2) > node(3) > payload(4) > approval_schema(5) ...
    def document(schema_levels: int) -> str:
        schema = "[" * schema_levels + "]" * schema_levels
        return (
            '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g",'
            f'"approval_schema":{schema}}}}}]}}'
        )

    parse_document(document(123))  # 4 + 123 = 127 levels
    with pytest.raises(MalformedDocument):
        parse_document(document(124))  # 128 levels


def test_brackets_inside_strings_do_not_count_toward_depth() -> None:
    noise = "[[[[{{{{" * 40 + '\\"]]]}}}' * 10 + "\\\\"
    text = "[" * 126 + f'"{noise}"' + "]" * 126
    value = read_json(text)
    assert _depth(value) == 126
    key_noise = '{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[":1}'
    assert _depth(read_json("[" * 126 + key_noise + "]" * 126)) == 127


def test_depth_is_the_deepest_branch_not_the_number_of_containers() -> None:
    wide = "[" + ",".join([_nest("array", 126)] * 200) + "]"
    assert _depth(read_json(wide)) == 127
    _refuse("[" + ",".join([_nest("array", 126)] * 5 + [_nest("array", 127)]) + "]")


NOISE = st.text(alphabet='[]{}"\\/u:, ', max_size=12)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(min_value=120, max_value=135),
    st.lists(st.sampled_from(["array", "object"]), min_size=135, max_size=135),
    st.lists(NOISE, min_size=1, max_size=6),
    st.booleans(),
)
def test_depth_counts_only_real_brackets_whatever_the_strings_hold(
    levels: int, shapes: list[str], noise: list[str], as_bytes: bool
) -> None:
    value: Any = noise
    for shape in shapes[: levels - 1]:
        value = [value, noise[0]] if shape == "array" else {"k" + noise[-1]: value, "[": noise}
    data = json.dumps(value, ensure_ascii=False)
    depth = _depth(value)
    assert depth == levels
    if depth <= 127:
        assert _same(read_json(data.encode() if as_bytes else data), value)
    else:
        _refuse(data.encode() if as_bytes else data)


# --- numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", NUMBERS, ids=[case["text"][:40] for case in NUMBERS])
def test_numbers_are_read_as_the_reference_reads_them(case: dict[str, Any]) -> None:
    for data in (case["text"], case["text"].encode()):
        value = read_json(data)
        assert type(value) is TYPES[case["type"]]
        assert canonical_text(value) == case["canonical"]


def test_minus_zero_is_a_float_that_keeps_its_sign() -> None:
    for text in ("-0", "-0.0", "-0e5", "-0E-2"):
        value = read_json(text)
        assert type(value) is float
        assert value == 0.0
        assert math.copysign(1.0, value) == -1.0
    inside = read_json('{"a":[-0, 0]}')
    assert math.copysign(1.0, inside["a"][0]) == -1.0
    assert type(inside["a"][1]) is int


def test_integers_at_the_64_bit_edges_stay_exact_integers() -> None:
    for number in (2**63 - 1, -(2**63), 2**64 - 1, 2**53 + 1, 10**19):
        value = read_json(str(number))
        assert type(value) is int
        assert value == number


def test_integers_one_past_the_64_bit_ranges_become_floats() -> None:
    for number in (-(2**63) - 1, 2**64, 10**20, 10**300):
        value = read_json(str(number))
        assert type(value) is float
        assert value == float(number)


def test_a_number_that_overflows_a_double_is_refused_but_1e308_is_fine() -> None:
    _refuse("1e400")
    _refuse('{"x":[1.5e309]}')
    _refuse("1" + "0" * 309)
    _refuse("1" + "0" * 5000)  # longer than Python's int-from-text limit: still a JsonError
    assert read_json("1e308") == 1e308
    assert read_json("-1.7976931348623157e308") == -1.7976931348623157e308


# --- generated inputs -------------------------------------------------------------------------


JSON_VALUES = json_values(max_text=12, max_leaves=20)


def _same(left: Any, right: Any) -> bool:
    """Equality that also tells ``0`` from ``0.0`` from ``-0.0``."""
    return canonical_text(left) == canonical_text(right) and type(left) is type(right)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_a_value_written_by_json_dumps_reads_back_unchanged(value: Any) -> None:
    for data in (json.dumps(value), json.dumps(value, ensure_ascii=False).encode()):
        assert _same(read_json(data), value)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_canonical_text_reads_back_to_the_same_value(value: Any) -> None:
    assert _same(read_json(canonical_text(value)), value)


JSONISH = st.text(
    alphabet='[]{}",:0123456789-+.eE \t\n\rtrufalsNIiy\\\ud800\ufeff\x0c', max_size=40
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSONISH, st.text(max_size=30), st.binary(max_size=30)))
def test_read_json_only_ever_returns_a_value_or_raises_json_error(data: str | bytes) -> None:
    try:
        value = read_json(data)
    except JsonError:
        return
    assert _same(read_json(canonical_text(value)), value)


def test_stored_json_is_read_back_under_the_reference_integer_rule() -> None:
    """PostgreSQL's jsonb spells the double 2.0**70 as its 22 digits; read back, it is the
    double again, and integers within 64 bits stay integers."""
    stored = '{"big": 1180591620717411303424, "small": 18446744073709551615, "neg": -3}'
    value = json.loads(stored, cls=ReferenceJsonDecoder)

    assert value == {"big": 2.0**70, "small": 2**64 - 1, "neg": -3}
    assert isinstance(value["big"], float) and isinstance(value["small"], int)


def test_a_syntax_error_carries_its_line_and_column_as_data() -> None:
    refused = _refuse('{\n  "a": 1\n  "b": 2\n}')

    assert refused.at is not None
    assert (refused.at.line, refused.at.column) == (3, 3)
    assert refused.at.what == "Expecting ',' delimiter"


def test_a_refusal_that_is_not_about_syntax_carries_no_place() -> None:
    assert _refuse('{"a": 1, "a": 2}').at is None


def test_a_document_that_is_not_json_says_where_as_data() -> None:
    with pytest.raises(MalformedDocument) as caught:
        parse_document('{"schema_version": 1,\n "nodes": [}')

    assert caught.value.at is not None
    assert (caught.value.at.line, caught.value.at.column) == (2, 12)
