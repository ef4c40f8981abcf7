"""The canonical form (spec 01, *Two serializations* 2; upstream-facts §3.1).

Compact JSON, every object's keys sorted by code point, strings escaped as serde_json does,
integers as integers, floats in the reference's shortest round-trip layout (not Python's repr).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings

from editor.graph.jsonio import (
    canonical_json,
    canonical_text,
    format_float,
    hash_value,
    read_json,
    write_json,
)
from tests.unit.strategies import json_values

# --- the reference vectors ---------------------------------------------------------------------


def test_the_reference_vector_sorts_every_object_recursively_and_keeps_array_order() -> None:
    value = read_json('{"b": {"z": 1, "a": 2}, "a": [3, {"y": 4, "x": 5}]}')
    assert canonical_json(value) == b'{"a":[3,{"x":5,"y":4}],"b":{"a":2,"z":1}}'


def test_the_reference_vector_with_escapes_is_unchanged() -> None:
    text = '{"text":"line\\none \\"two\\""}'
    assert canonical_text(read_json(text)) == text
    assert canonical_json({"text": 'line\none "two"'}) == text.encode()


def test_canonical_json_is_utf8_bytes_of_canonical_text() -> None:
    value = {"é": ["😀", 1.5e-7]}
    assert canonical_json(value) == canonical_text(value).encode("utf-8")
    assert isinstance(canonical_json(value), bytes)


def test_hash_value_is_sha256_of_the_canonical_bytes() -> None:
    value = {"b": [1, 2.5, None, True], "a": "x"}
    digest = hashlib.sha256(b'{"a":"x","b":[1,2.5,null,true]}').hexdigest()
    assert hash_value(value) == "sha256:" + digest
    assert hash_value(read_json('{ "a" : "x" , "b" : [ 1 , 2.5 , null , true ] }')) == hash_value(
        value
    )


# --- strings -------------------------------------------------------------------------------------

SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


@pytest.mark.parametrize("code", range(0x20), ids=lambda code: f"U+{code:04X}")
def test_control_characters_are_escaped_short_or_as_lowercase_u00xx(code: int) -> None:
    expected = SHORT_ESCAPES.get(code, f"\\u{code:04x}")
    assert canonical_text(chr(code)) == f'"{expected}"'
    assert canonical_text({chr(code): 0}) == f'{{"{expected}":0}}'


def test_control_escapes_use_lowercase_hex() -> None:
    assert canonical_text("\x1b\x1f\x0b") == '"\\u001b\\u001f\\u000b"'


def test_quote_and_backslash_are_the_only_other_escapes() -> None:
    assert canonical_text('"') == '"\\""'
    assert canonical_text("\\") == '"\\\\"'
    assert canonical_text('a"b\\c') == '"a\\"b\\\\c"'


@pytest.mark.parametrize(
    "character",
    ["/", "\x7f", "\x80", "\x9f", "é", "\u00a0", "\u2028", "\u2029", "\ufeff", "\uffff", "😀"],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_slash_delete_and_everything_above_it_are_written_raw_in_utf8(character: str) -> None:
    assert canonical_text(character) == f'"{character}"'
    assert canonical_json(character) == b'"' + character.encode("utf-8") + b'"'


def test_emoji_is_four_raw_utf8_bytes_not_a_surrogate_escape() -> None:
    assert canonical_json("😀") == b'"\xf0\x9f\x98\x80"'
    assert canonical_json(read_json('"\\ud83d\\ude00"')) == b'"\xf0\x9f\x98\x80"'


def test_a_string_of_every_escape_class_together() -> None:
    value = '\x00\x01\x08\t\n\x0b\x0c\r\x1f "/\\\x7fé😀'
    assert canonical_text(value) == (
        '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \\"/\\\\\x7fé😀"'
    )


# --- numbers -------------------------------------------------------------------------------------

FLOAT_LAYOUTS = [
    (1.0, "1.0"),
    (0.1, "0.1"),
    (-0.0, "-0.0"),
    (0.0, "0.0"),
    (0.00001, "0.00001"),
    (-0.00001, "-0.00001"),
    (0.000015, "0.000015"),
    (0.000012345, "0.000012345"),
    (0.00009, "0.00009"),
    (0.0001, "0.0001"),
    (1e-6, "1e-6"),
    (-1e-6, "-1e-6"),
    (1.5e-7, "1.5e-7"),
    (1e-10, "1e-10"),
    (5e-324, "5e-324"),
    (123.456, "123.456"),
    (-2.5, "-2.5"),
    (100.0, "100.0"),
    (1000000000000000.0, "1000000000000000.0"),
    (9999999999999998.0, "9999999999999998.0"),
    (1e16, "1e+16"),
    (1.5e16, "1.5e+16"),
    (-1e16, "-1e+16"),
    (1e21, "1e+21"),
    (1.2345678901234567e19, "1.2345678901234567e+19"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
]


@pytest.mark.parametrize(("value", "text"), FLOAT_LAYOUTS, ids=[text for _, text in FLOAT_LAYOUTS])
def test_floats_use_the_reference_shortest_round_trip_layout(value: float, text: str) -> None:
    assert format_float(value) == text
    assert canonical_text(value) == text
    assert canonical_text([value]) == f"[{text}]"
    assert canonical_text({"k": value}) == f'{{"k":{text}}}'


@pytest.mark.parametrize(("value", "text"), FLOAT_LAYOUTS, ids=[text for _, text in FLOAT_LAYOUTS])
def test_every_float_layout_reads_back_to_the_same_float(value: float, text: str) -> None:
    back = read_json(text)
    assert type(back) is float
    assert back == value
    assert math.copysign(1.0, back) == math.copysign(1.0, value)


def test_python_repr_is_not_the_layout() -> None:
    # The cases where a plain json.dumps would be wrong.
    assert json.dumps(0.00001) == "1e-05"
    assert canonical_text(0.00001) == "0.00001"
    assert json.dumps(1e-6) == "1e-06"
    assert canonical_text(1e-6) == "1e-6"


def test_integers_are_written_as_integers_and_floats_keep_a_fraction() -> None:
    assert canonical_text([0, -1, 1, 2**63 - 1, -(2**63), 2**64 - 1]) == (
        "[0,-1,1,9223372036854775807,-9223372036854775808,18446744073709551615]"
    )
    assert canonical_text([1, 1.0, 0, 0.0, -0.0]) == "[1,1.0,0,0.0,-0.0]"


def test_booleans_and_null_are_literals_not_numbers() -> None:
    assert canonical_text([True, False, None, 1, 0]) == "[true,false,null,1,0]"


def test_non_finite_floats_are_refused_rather_than_written_as_invalid_json() -> None:
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            canonical_json(value)
        with pytest.raises(ValueError):
            canonical_json({"k": [value], "s": "e-"})


def test_decimal_text_is_read_correctly_rounded_an_accepted_deviation_from_the_reference() -> None:
    # Spec 01: the reference (serde_json without float_roundtrip) reads these as 1.0 and
    # 9007199254740994.0; we read decimal text correctly rounded, and write what we read.
    assert canonical_text(read_json("0.9999999999999999")) == "0.9999999999999999"
    assert canonical_text(read_json("9007199254740993.0")) == "9007199254740992.0"
    assert canonical_text(read_json("[0.9999999999999999]")) == "[0.9999999999999999]"


# --- key order -----------------------------------------------------------------------------------


def test_keys_are_sorted_by_code_point() -> None:
    value = {"é": 1, "z": 2, "Z": 3, "a": 4, "": 5, "aa": 6, "a\x00": 7, "_": 8, "1": 9}
    assert canonical_text(value) == (
        '{"":5,"1":9,"Z":3,"_":8,"a":4,"a\\u0000":7,"aa":6,"z":2,"é":1}'
    )


def test_keys_above_the_basic_plane_sort_after_private_use_characters() -> None:
    # Code point (= UTF-8 byte) order, not UTF-16 order: U+E000 < U+FFFF < U+1F600.
    value = {"😀": 1, "\ue000": 2, "\uffff": 3, "\ud7ff": 4}
    assert canonical_text(value) == '{"\ud7ff":4,"\ue000":2,"\uffff":3,"😀":1}'


def test_nested_objects_inside_arrays_are_sorted_too() -> None:
    value = [{"b": [{"d": 1, "c": 2}], "a": {"y": {"q": 1, "p": 2}, "x": 0}}]
    assert canonical_text(value) == '[{"a":{"x":0,"y":{"p":2,"q":1}},"b":[{"c":2,"d":1}]}]'


# --- orjson and our own writer ------------------------------------------------------------------


def test_strings_and_keys_that_look_like_exponents_are_written_unchanged() -> None:
    assert canonical_text({"e-": 1, "\x01": [0.5, 1e16]}) == '{"\\u0001":[0.5,1e+16],"e-":1}'
    assert canonical_text(["1e-05", 1e-05]) == '["1e-05",0.00001]'


def test_values_orjson_refuses_are_written_by_our_own_writer() -> None:
    assert canonical_text([2**64, 1e-6]) == "[18446744073709551616,1e-6]"


JSON_VALUES = json_values(max_text=10, max_leaves=24)


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_orjson_writes_exactly_what_our_own_writer_writes(value: Any) -> None:
    assert canonical_json(value) == write_json(value, sort_keys=True).encode("utf-8")


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_canonical_form_is_a_fixed_point(value: Any) -> None:
    once = canonical_text(value)
    assert canonical_text(read_json(once)) == once
    assert canonical_text(read_json(once.encode("utf-8"))) == once


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_canonical_text_matches_an_independent_writer(value: Any) -> None:
    assert canonical_text(value) == _reference_writer(value)


def _reference_writer(value: Any) -> str:
    """A deliberately naive writer of the spec's rules, to cross-check the fast code."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _reference_float(value)
    if isinstance(value, str):
        return _reference_string(value)
    if isinstance(value, list):
        return "[" + ",".join(_reference_writer(item) for item in value) + "]"
    keys = sorted(value, key=lambda key: key.encode("utf-8"))
    return (
        "{"
        + ",".join(_reference_string(key) + ":" + _reference_writer(value[key]) for key in keys)
        + "}"
    )


def _reference_string(text: str) -> str:
    out = ['"']
    for character in text:
        code = ord(character)
        if character in '"\\':
            out.append("\\" + character)
        elif code in SHORT_ESCAPES:
            out.append(SHORT_ESCAPES[code])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        else:
            out.append(character)
    out.append('"')
    return "".join(out)


def _reference_float(value: float) -> str:
    """Shortest round-trip digits, laid out plain in [1e-5, 1e16) and exponent form outside."""
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value))
    # value = 0.d1d2d3... * 10**exponent
    if 1e-5 <= abs(value) < 1e16:
        if exponent <= 0:
            return f"{sign}0.{'0' * -exponent}{digits}"
        if exponent >= len(digits):
            return f"{sign}{digits}{'0' * (exponent - len(digits))}.0"
        return f"{sign}{digits[:exponent]}.{digits[exponent:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    scientific = exponent - 1
    return f"{sign}{mantissa}e{'+' if scientific > 0 else '-'}{abs(scientific)}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-trip digits of ``value`` (as repr finds them) and their exponent.

    Only the digits come from repr; the layout above is written from the spec's rule.
    """
    mantissa, _, exponent = f"{value!r}".partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    return digits.rstrip("0") or "0", point + int(exponent or 0)
