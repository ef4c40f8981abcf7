"""The presentation the pages share (``editor/templatetags``): a content hash is shown by its
first twelve hex digits everywhere, and links to ``/g/<hex>/`` name it without its prefix."""

from __future__ import annotations

from django.template import engines

from editor.graph import hex_digits, short_hash
from editor.services.links import card_id

DIGEST = "sha256:" + "0123456789abcdef" * 4


def render(text: str, **context: object) -> str:
    return engines["django"].from_string("{% load gatehouse %}" + text).render(context)


def test_a_hash_is_shown_by_its_first_twelve_hex_digits_with_or_without_its_prefix() -> None:
    assert short_hash(DIGEST) == "0123456789ab"
    assert short_hash(DIGEST.removeprefix("sha256:")) == "0123456789ab"


def test_a_hash_in_an_address_has_no_prefix() -> None:
    assert hex_digits(DIGEST) == DIGEST[7:]
    assert hex_digits(DIGEST[7:]) == DIGEST[7:]


def test_the_filters_say_the_same_as_the_helpers() -> None:
    page = render("{{ h|short_hash }} {% url 'graph' h|hex_digits %}", h=DIGEST)

    assert page == f"0123456789ab /g/{DIGEST[7:]}/"


def test_a_card_is_named_by_its_run_and_the_position_of_its_item() -> None:
    assert card_id("r1", 7) == "card-r1-7"
    assert card_id("r1") == "card-r1"


def test_a_run_is_shown_by_the_start_of_its_id() -> None:
    run = "0f8b2c1e-5d4a-4e33-9a7b-2c6f1e0d9b8a"

    assert render("{{ r|short_run }} {% url 'run' r %}", r=run) == f"0f8b2c1e /runs/{run}/"
