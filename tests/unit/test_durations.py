"""A delay's seconds as a person reads and writes them (the canvas, the node form)."""

from __future__ import annotations

import pytest

from editor.graph.durations import format_duration, parse_duration
from editor.graph.model import U64_MAX


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0 s"), (1, "1 s"), (60, "1 min"), (3600, "1 h"), (5400, "1 h 30 min"),
     (86400, "1 d"), (90061, "1 d 1 h 1 min 1 s")],
)  # fmt: skip
def test_a_wait_is_shown_in_the_largest_units_leaving_out_zeros(seconds: int, shown: str) -> None:
    assert format_duration(seconds) == shown
    assert parse_duration(shown) == seconds  # what is shown reads back


def test_the_largest_seconds_a_document_holds_is_read_and_one_more_is_not() -> None:
    assert parse_duration(str(U64_MAX)) == U64_MAX
    assert parse_duration(str(U64_MAX + 1)) is None
    assert parse_duration(format_duration(U64_MAX)) == U64_MAX
