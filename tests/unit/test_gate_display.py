"""What a gate's card shows: its prompt as sanitised Markdown, and the value at the gate as
readable text or a tree (``docs/inbox.md``)."""

from __future__ import annotations

from editor.presentation.rich_text import MAX_LINK_OPENERS, MAX_MARKDOWN, markdown_html
from editor.presentation.value_view import MAX_ENTRIES, value_html

HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_prompt_renders_as_markdown() -> None:
    html = markdown_html("Check the `draft` **carefully**:\n\n* facts\n* tone")

    assert "<code>draft</code>" in html
    assert "<strong>carefully</strong>" in html
    assert "<ul>\n<li>facts</li>" in html
    assert "`" not in html


def test_a_prompt_of_many_link_openers_is_shown_as_plain_text() -> None:
    """Found: ten thousand `[` took the renderer over a second, per prompt (and a page of the
    inbox shows fifty)."""
    brackets = "[" * 10_000

    assert markdown_html(brackets) == brackets
    assert markdown_html("<b>" + "[" * (MAX_LINK_OPENERS + 1)).startswith("&lt;b&gt;[[[")
    linked = "[a](https://example.org) " * MAX_LINK_OPENERS
    assert markdown_html(linked).count("<a href=") == MAX_LINK_OPENERS


def test_a_prompt_over_the_markdown_cap_is_shown_as_plain_text() -> None:
    long = "**bold**\n" * (MAX_MARKDOWN // 9 + 1)

    html = markdown_html(long)

    assert "<strong>" not in html
    assert html.startswith("**bold**")


def test_line_breaks_of_a_plain_prompt_are_kept() -> None:
    assert markdown_html("First line\nSecond line") == "<p>First line<br>\nSecond line</p>"


def test_raw_html_in_a_prompt_is_text() -> None:
    html = markdown_html(f"Look {HOSTILE} <script>alert(1)</script>")

    assert "<img" not in html and "<script" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_only_web_and_mail_links_are_kept_and_they_carry_a_safe_rel() -> None:
    html = markdown_html(
        "[a](javascript:alert(1)) [b](https://example.org/x) [c](data:text/html,x)"
    )

    assert "javascript:" not in html.replace("[a](javascript:alert(1))", "")
    assert 'href="data:' not in html
    assert '<a href="https://example.org/x" rel="noopener noreferrer nofollow">b</a>' in html


def test_images_are_not_fetched_and_headings_sit_below_the_card_title() -> None:
    html = markdown_html("# Title\n\n![a chart](https://example.org/chart.png)")

    assert "<img" not in html
    assert "<h3>Title</h3>" in html
    assert "a chart" in html


def test_a_string_value_is_text_with_its_line_breaks() -> None:
    html = value_html(f"Dear reader,\n\n{HOSTILE}")

    assert html.startswith('<div class="value-text">')
    assert "Dear reader,\n\n&lt;img" in html


def test_an_object_value_is_a_tree_that_opens_and_closes() -> None:
    html = value_html({"draft": "line 1\nline 2", "meta": {"words": 4, "tags": ["a", None]}})

    assert '<span class="jt-key">draft</span> <span class="jt-string">line 1\nline 2</span>' in html
    assert '<details open><summary><span class="jt-key">meta</span>' in html
    assert "{2 keys}" in html and "[2 items]" in html
    assert '<code class="jt-scalar">null</code>' in html


def test_keys_and_values_are_escaped() -> None:
    html = value_html({HOSTILE: HOSTILE})

    assert "<img" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") == 2


def test_a_huge_value_is_cut_and_says_so() -> None:
    html = value_html(list(range(MAX_ENTRIES + 50)))

    assert html.count("<li>") == MAX_ENTRIES
    assert "… 50 more (see the JSON)" in html


def test_scalars_and_empty_containers_are_shown_as_json() -> None:
    assert '<code class="jt-scalar">true</code>' in value_html(True)
    assert '<code class="jt-scalar">null</code>' in value_html(None)
    assert '<code class="jt-scalar">{}</code>' in value_html({})
