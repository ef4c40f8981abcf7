"""A page's form as a browser without JavaScript posts it: read from the rendered HTML, its
controls' names and values (checked boxes, selected options, text areas), the button pressed.

Tests fill it in by name and post it with Django's test client, so what they check is the form
the page really draws, not a hand-written post.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

__all__ = ["PageForm", "page_form"]


class _Reader(HTMLParser):
    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.depth = 0
        self.action = ""
        self.fields: list[tuple[str, str]] = []
        self.buttons: dict[tuple[str, str], str] = {}
        self.labels: dict[str, str] = {}
        self._select: str | None = None
        self._selected: str | None = None
        self._first_option: str | None = None
        self._option: dict[str, Any] | None = None
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form" and found.get("id") == self.form_id:
            self.depth = 1
            self.action = found.get("action", "")
            return
        if not self.depth:
            return
        if tag == "form":
            self.depth += 1
        name = found.get("name")
        disabled = "disabled" in found
        if tag == "input" and name and not disabled:
            kind = found.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in found:
                    self.fields.append((name, found.get("value", "on")))
            elif kind == "submit":
                self.buttons[(name, found.get("value", ""))] = found.get("id", "")
            else:
                self.fields.append((name, found.get("value", "")))
        elif tag == "button" and name and found.get("type", "submit") == "submit":
            self.buttons[(name, found.get("value", ""))] = found.get("id", "")
        elif tag == "select" and name and not disabled:
            self._select, self._selected, self._first_option = name, None, None
        elif tag == "option" and self._select is not None:
            self._option = found
            if self._first_option is None:
                self._first_option = found.get("value", "")
            if "selected" in found:
                self._selected = found.get("value", "")
        elif tag == "textarea" and name and not disabled:
            self._textarea, self._text = name, []

    def handle_endtag(self, tag: str) -> None:
        if not self.depth:
            return
        if tag == "form":
            self.depth -= 1
        elif tag == "select" and self._select is not None:
            chosen = self._selected if self._selected is not None else self._first_option
            self.fields.append((self._select, chosen or ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            text = "".join(self._text)
            # A text area drops the line break right after its start tag.
            self.fields.append((self._textarea, text.removeprefix("\n")))
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)


class PageForm:
    """A form read from a page: ``fields`` in order (a name may repeat), and its buttons."""

    def __init__(self, action: str, fields: list[tuple[str, str]], buttons: set[Any]) -> None:
        self.action = action
        self.fields = fields
        self.buttons = buttons

    def __getitem__(self, name: str) -> str:
        return next(value for key, value in self.fields if key == name)

    def __contains__(self, name: str) -> bool:
        return any(key == name for key, _ in self.fields)

    def set(self, name: str, value: str | None) -> None:
        """Type ``value`` into the control ``name`` (``None``: uncheck a box)."""
        kept = [(key, old) for key, old in self.fields if key != name]
        if value is not None:
            kept.append((name, value))
        self.fields = kept

    def post_data(self, press: tuple[str, str] | None = None) -> dict[str, Any]:
        """What a browser posts, pressing the button ``(name, value)`` when given."""
        data: dict[str, Any] = {}
        for key, value in self.fields:
            data.setdefault(key, []).append(value)
        if press is not None:
            assert press in self.buttons, f"no button {press} in {sorted(self.buttons)}"
            data.setdefault(press[0], []).append(press[1])
        return {key: values if len(values) > 1 else values[0] for key, values in data.items()}


def page_form(page: str, form_id: str) -> PageForm:
    """The form ``form_id`` of the HTML ``page``."""
    reader = _Reader(form_id)
    reader.feed(page)
    assert reader.action, f"no form #{form_id} on the page"
    return PageForm(reader.action, reader.fields, set(reader.buttons))
