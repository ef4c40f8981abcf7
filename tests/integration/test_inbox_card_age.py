"""A waiting card's age ("Waiting for 2 days, 3 hours") is the words of Django's ``timesince``,
written with the card's own English units (``editor.templatetags.inbox_card``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils.timesince import timesince
from hypothesis import given
from hypothesis import strategies as st

from editor.templatetags.inbox_card import _AGE_UNITS

NOW = datetime(2026, 12, 2, 11, 30, 15, tzinfo=UTC)


@given(st.integers(min_value=-3600, max_value=3 * 366 * 24 * 3600))
def test_the_age_reads_as_django_s_timesince(seconds: int) -> None:
    since = NOW - timedelta(seconds=seconds)

    assert timesince(since, NOW, time_strings=_AGE_UNITS) == timesince(since, NOW)  # type: ignore[arg-type]


def test_one_of_a_unit_is_singular_and_more_are_plural() -> None:
    assert timesince(NOW - timedelta(days=1, hours=1), NOW, time_strings=_AGE_UNITS) == (  # type: ignore[arg-type]
        "1\xa0day, 1\xa0hour"
    )
    assert timesince(NOW - timedelta(days=400), NOW, time_strings=_AGE_UNITS) == (  # type: ignore[arg-type]
        "1\xa0year, 1\xa0month"
    )
    assert timesince(NOW - timedelta(seconds=20), NOW, time_strings=_AGE_UNITS) == "0\xa0minutes"  # type: ignore[arg-type]
