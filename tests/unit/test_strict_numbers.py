"""``strict_int``: the one reader of whole numbers from forms and query strings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editor.services.errors import InvalidRequest
from editor.services.numbers import INT64_MAX, InvalidNumber, strict_int


@pytest.mark.parametrize(
    ("text", "value"), [("0", 0), ("7", 7), ("007", 7), (str(INT64_MAX), INT64_MAX)]
)
def test_it_reads_ascii_digits(text: str, value: int) -> None:
    assert strict_int(text, "seen") == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "²",  # str.isdigit() says yes, int() raises
        "١٢",  # Arabic-Indic digits: int() would read 12
        "１",  # a full-width digit
        " 1",
        "1 ",
        "+1",
        "1_000",
        "1.0",
        "1e3",
        "-1",
        "0x10",
        "\x00",
        "1\x00",
        str(INT64_MAX + 1),
        "9" * 5000,  # past Python's own int-from-text limit
        "0" * 1_000_000 + "1",
    ],
)
def test_it_refuses_anything_else_naming_the_field_and_the_range(text: str) -> None:
    with pytest.raises(InvalidNumber) as caught:
        strict_int(text, "seen")

    assert str(caught.value) == "`seen` must be a whole number from 0 to 9223372036854775807"
    assert caught.value.field == "seen"
    assert isinstance(caught.value, InvalidRequest)


@pytest.mark.parametrize("value", [None, 3, ["1"], b"1"])
def test_it_refuses_what_is_not_text(value: object) -> None:
    with pytest.raises(InvalidNumber):
        strict_int(value, "limit")


def test_bounds_are_explicit_and_inclusive() -> None:
    assert strict_int("1", "limit", minimum=1, maximum=5) == 1
    assert strict_int("5", "limit", minimum=1, maximum=5) == 5
    for text in ("0", "6"):
        with pytest.raises(InvalidNumber, match="from 1 to 5"):
            strict_int(text, "limit", minimum=1, maximum=5)


def test_a_minus_sign_is_read_only_when_negative_numbers_are_allowed() -> None:
    assert strict_int("-3", "offset", minimum=-5, maximum=5) == -3
    for text in ("-", "--3", "-²", "- 3"):
        with pytest.raises(InvalidNumber):
            strict_int(text, "offset", minimum=-5, maximum=5)


@given(st.text(max_size=30))
def test_no_text_makes_it_raise_anything_but_invalid_number(text: str) -> None:
    try:
        value = strict_int(text, "field", minimum=-(2**63), maximum=INT64_MAX)
    except InvalidNumber:
        return
    assert isinstance(value, int)
    assert text.lstrip("-").isascii() and text.lstrip("-").isdigit()
