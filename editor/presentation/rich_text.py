"""A gate's prompt as Markdown, made safe to inline in a page (``docs/inbox.md``).

Rendered by markdown-it-py (CommonMark with tables and strikethrough; raw HTML off, so a
``<script>`` in a prompt is text) and then cleaned by nh3 (the Ammonia sanitiser) against an
allow-list of plain text tags: belt and braces, so that a future option of the renderer cannot
let markup through. Single line breaks are kept (``breaks``): prompts written as plain text
read as their authors wrote them. Images are not rendered (an image would be fetched from
anywhere, and the Content-Security-Policy allows none); their alternative text stays as text.
Headings are shifted down two levels, below the card's own ``h2``. Links open where they point
and carry ``rel="noopener noreferrer nofollow"``; only ``http``, ``https`` and ``mailto`` links
are kept.

A page shows many cards of the same gate, so renderings are memoised by the prompt's text. A
prompt longer than :data:`MAX_MARKDOWN` characters, or with more than :data:`MAX_LINK_OPENERS`
``[``, is shown as plain text instead: rendering such text as Markdown can take seconds.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt

__all__ = ["markdown_html"]

#: The tags a prompt may produce; anything else is dropped (its text is kept).
_TAGS = {
    "a",
    "blockquote",
    "br",
    "code",
    "del",
    "em",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "strong",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
_SCHEMES = {"http", "https", "mailto"}
#: The longest prompt rendered as Markdown; a longer one is shown as plain text. Rendering
#: costs up to about 10 ms per thousand characters, and an inbox page shows fifty cards.
MAX_MARKDOWN = 20_000
#: The most ``[`` a prompt rendered as Markdown may hold; with more it is shown as plain text.
#: Each ``[`` may open a link, whose label the renderer looks for up to the end of the text:
#: ten thousand of them took over a second per prompt, and a page of fifty cards a minute.
MAX_LINK_OPENERS = 500


def _shifted_heading(renderer: Any, tokens: list[Any], index: int, options: Any, env: Any) -> str:
    token = tokens[index]
    level = min(6, int(token.tag[1:]) + 2)
    return f"<h{level}>" if token.nesting == 1 else f"</h{level}>\n"


def _renderer() -> MarkdownIt:
    renderer = MarkdownIt("js-default", {"breaks": True, "html": False})
    renderer.disable("image")
    renderer.add_render_rule("heading_open", _shifted_heading)
    renderer.add_render_rule("heading_close", _shifted_heading)
    return renderer


_MARKDOWN = _renderer()


def markdown_html(text: str) -> str:
    """``text`` (Markdown) as sanitised HTML, safe to inline."""
    if len(text) > MAX_MARKDOWN or text.count("[") > MAX_LINK_OPENERS:
        # Plain text costs little, and a prompt can be a megabyte: not memoised.
        return nh3.clean_text(text)
    return _rendered(text)


@lru_cache(maxsize=512)
def _rendered(text: str) -> str:
    rendered = _MARKDOWN.render(text)
    return nh3.clean(
        rendered,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    ).strip()
