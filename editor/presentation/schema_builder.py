"""The schema builder of the node form: a gate's ``approval_schema``, a node's ``input_schema``
and ``output_schema`` and a fold's ``accumulator_schema`` edited as a list of fields
(:mod:`.schema_fields`), or as JSON when the list cannot show the schema (or the person asks).

Each builder posts, beside the fields of each row (``<key>-<i>-<part>``):

* ``<key>-mode``: how the schema is written — ``fields``, ``json``, or ``unset`` (an optional
  schema left out); ``<key>`` itself is the JSON text, posted only in ``json`` mode;
* ``<key>-count`` (how many rows were shown) and ``<key>-required`` (the schema's ``required``
  list as it was, kept while it still gives the order shown);
* ``<key>-add``, ``<key>-remove``, ``<key>-up`` and ``<key>-down``: the buttons, the last three
  with the row's index as their value;
* ``<key>-shape``: what the builder showed (its mode, each row's type and whether it is
  required). An answer draws the node form again when what it shows next has another shape, or
  a button was pressed; typing a name or a title changes nothing drawn, so nothing is redrawn
  under the cursor.

Rows that cannot be read (a default that is not a number, two fields of one name) are held back
like any field: the text kept is ``fields:`` and the rows as JSON, so the builder shows them as
typed until they are fixed. Plain Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from editor.graph.jsonio import pretty_json
from editor.presentation.schema_fields import (
    MAX_FIELDS,
    PARTS,
    TYPE_WORDS,
    TYPES,
    FieldList,
    Row,
    Unrepresentable,
    add_row,
    applies,
    move_row,
    read_rows,
    read_schema,
    remove_row,
    rows_of,
    write_schema,
)
from editor.presentation.typed import whole_number

__all__ = [
    "HELD_PREFIX",
    "SCHEMA_KEYS",
    "BuilderRead",
    "BuilderRow",
    "SchemaBuilder",
    "builder_of",
    "read_builder",
]

#: The node form's fields that are JSON Schemas, edited with a builder.
SCHEMA_KEYS: Final = frozenset(
    {"input_schema", "output_schema", "approval_schema", "accumulator_schema"}
)
#: What a held builder's text starts with (JSON text never does).
HELD_PREFIX: Final = "fields:"
#: The modes, in the order the builder offers them.
MODES: Final[tuple[tuple[str, str], ...]] = (
    ("fields", "a list of fields"),
    ("json", "JSON"),
    ("unset", "not set"),
)


@dataclass(frozen=True, slots=True)
class BuilderRow:
    """One row of the builder as the template draws it: its texts, which parts its type has,
    and where it may move."""

    index: int
    texts: Row
    first: bool
    last: bool
    #: Move up is offered unless the row is first, or the first optional one (required
    #: fields come first in the approver's form whatever the order).
    can_up: bool
    can_down: bool
    #: The part of this row whose control takes the focus (``name``, ``up``, ``down``).
    focus: str = ""

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def has(self) -> dict[str, bool]:
        kind = self.texts.get("type", "string")
        return {part: applies(kind, part) for part in PARTS}


@dataclass(frozen=True, slots=True)
class SchemaBuilder:
    """What the builder of one schema field shows: its mode, its rows or JSON text, and why
    the fields cannot show the schema (``reason``, after "it"), when they cannot."""

    key: str
    mode: str
    optional: bool
    rows: tuple[BuilderRow, ...] = ()
    json_text: str = ""
    reason: str = ""
    required_order: str = "[]"
    #: The control that takes the focus when the builder is drawn after a button (its id).
    focus: str = ""

    @property
    def modes(self) -> tuple[tuple[str, str], ...]:
        return tuple(mode for mode in MODES if self.optional or mode[0] != "unset")

    @property
    def types(self) -> tuple[tuple[str, str], ...]:
        return tuple((kind, TYPE_WORDS[kind]) for kind in TYPES)

    @property
    def shape(self) -> str:
        return _shape(self.mode, [row.texts for row in self.rows])

    @property
    def full(self) -> bool:
        return len(self.rows) >= MAX_FIELDS

    @property
    def focus_mode(self) -> bool:
        return self.focus == f"f-{self.key}-mode"

    @property
    def focus_add(self) -> bool:
        return self.focus == f"f-{self.key}-add"

    @property
    def focus_json(self) -> bool:
        return self.focus == f"f-{self.key}"


def _shape(mode: str, rows: list[Row]) -> str:
    if mode != "fields":
        return mode
    return "fields:" + ";".join(
        f"{row.get('type', '')},{bool(row.get('required'))}" for row in rows
    )


def _rows_view(rows: list[Row], key: str = "", focus: str = "") -> tuple[BuilderRow, ...]:
    made = []
    for index, row in enumerate(rows):
        above = rows[index - 1] if index else None
        below = rows[index + 1] if index + 1 < len(rows) else None
        required = bool(row.get("required"))
        can_up = above is not None and (bool(above.get("required")) == required)
        can_down = below is not None and (bool(below.get("required")) == required)
        focused = (
            focus.removeprefix(f"f-{key}-{index}-") if focus.startswith(f"f-{key}-{index}-") else ""
        )
        # A row moved as far as it goes keeps the focus on its other move button, or its name.
        if (focused == "up" and not can_up) or (focused == "down" and not can_down):
            focused = "down" if focused == "up" and can_down else "up" if can_up else "name"
        made.append(
            BuilderRow(
                index=index,
                texts={part: str(row.get(part, "")) for part in PARTS},
                first=above is None,
                last=below is None,
                can_up=can_up,
                can_down=can_down,
                focus=focused,
            )
        )
    return tuple(made)


def _held_rows(text: str) -> tuple[list[Row], str] | None:
    """The rows (and required list) of a held builder's text."""
    if not text.startswith(HELD_PREFIX):
        return None
    try:
        held = json.loads(text[len(HELD_PREFIX) :])
    except ValueError:
        return None
    rows = held.get("rows") if isinstance(held, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return None
    return [{str(k): str(v) for k, v in row.items()} for row in rows], str(
        held.get("required", "[]")
    )


def builder_of(
    key: str,
    stored: Any,
    *,
    optional: bool,
    typed: Mapping[str, str] | None = None,
) -> SchemaBuilder:
    """The builder of the field ``key`` whose stored schema is ``stored`` (``None``: unset);
    ``typed`` holds what the person typed and was not saved (``typed[key]``) and the mode they
    asked for (``typed[key + "-mode"]``), and the control to focus (``key + "-focus"``)."""
    typed = typed or {}
    asked = typed.get(f"{key}-mode", "")
    focus = typed.get(f"{key}-focus", "")
    held = typed.get(key)
    if held is not None:
        rows = _held_rows(held)
        if rows is not None:
            return SchemaBuilder(
                key,
                "fields",
                optional,
                _rows_view(rows[0], key, focus),
                required_order=rows[1],
                focus=focus,
            )
        return SchemaBuilder(key, "json", optional, json_text=held, focus=focus)
    if stored is None and optional and asked in ("", "unset"):
        return SchemaBuilder(key, "unset", optional, focus=focus)
    fields = read_schema(stored)
    text = "" if stored is None else pretty_json(stored)
    if isinstance(fields, Unrepresentable):
        reason = "" if stored is None else fields.reason
        return SchemaBuilder(key, "json", optional, json_text=text, reason=reason, focus=focus)
    if asked == "json":
        return SchemaBuilder(key, "json", optional, json_text=text, focus=focus)
    return SchemaBuilder(
        key,
        "fields",
        optional,
        _rows_view(rows_of(fields), key, focus),
        required_order=json.dumps(list(fields.required_order)),
        focus=focus,
    )


# --- Reading a post -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuilderRead:
    """What a builder's post means: the schema to save (``value``; ``None`` unsets it), or why
    it cannot be saved (``problem``, with the text to hold back in ``held``); ``shown``: what
    the form shows next (the mode asked for, the control to focus); ``redraw``: the builder
    must be drawn again (a button, another mode, a type or required changed)."""

    value: Any = None
    problem: str = ""
    held: str = ""
    shown: Mapping[str, str] | None = None
    redraw: bool = False


def _posted_rows(key: str, data: Mapping[str, str]) -> list[Row] | None:
    count = whole_number(str(data.get(f"{key}-count", "")).strip(), maximum=MAX_FIELDS)
    if count is None:
        return None
    return [
        {part: str(data.get(f"{key}-{index}-{part}", "")) for part in PARTS}
        for index in range(count)
    ]


def _index(data: Mapping[str, str], name: str) -> int | None:
    raw = data.get(name)
    return None if raw is None else whole_number(str(raw).strip(), maximum=MAX_FIELDS)


def _required_order(data: Mapping[str, str], key: str) -> list[str]:
    try:
        found = json.loads(str(data.get(f"{key}-required", "[]")))
    except ValueError:
        return []
    return [str(name) for name in found] if isinstance(found, list) else []


def _held(rows: list[Row], required: list[str]) -> str:
    return HELD_PREFIX + json.dumps({"rows": rows, "required": json.dumps(required)})


def read_builder(
    key: str,
    data: Mapping[str, str],
    *,
    optional: bool,
    read_json: Any,
) -> BuilderRead | None:
    """A builder's post (``None`` when the post has no builder for ``key``: a form or a client
    that posts the JSON text alone). ``read_json(text)`` reads JSON text as the node form does:
    ``(value, problem)``."""
    mode = data.get(f"{key}-mode")
    if mode is None:
        return None
    was = str(data.get(f"{key}-shape", ""))
    rows = _posted_rows(key, data)
    required = _required_order(data, key)
    focus = ""
    pressed = False
    if rows is None and data.get(f"{key}-add") is not None:
        # Add field on an unset schema (or a JSON one): a list of one field.
        mode, rows, pressed = "fields", [], True
    if rows is not None:
        edited = _edited(key, data, rows)
        if edited is not None:
            rows, focus = edited
            pressed = True
    if mode == "unset":
        if not optional:
            return BuilderRead(problem="is required: choose fields or JSON", held="")
        return BuilderRead(None, redraw=was != "unset")
    if rows is not None and (mode == "fields" or key not in data):
        fields, problems = read_rows(rows, required)
        if problems:
            said = "; ".join(problem.phrase() for problem in problems)
            return BuilderRead(
                problem=f"has fields that need fixing — {said}",
                held=_held(rows, required),
                shown={f"{key}-focus": focus} if focus else {},
                redraw=pressed or was != _shape("fields", rows),
            )
        value = write_schema(fields)
    elif key not in data:
        # No rows and no text: the builder showed "not set", and a mode was chosen.
        value = {"type": "object"}
    else:
        text = str(data.get(key, ""))
        if not text.strip():
            if optional:
                value = None
            else:
                return BuilderRead(
                    problem='is required: a JSON Schema, {"type": "object"} for a plain form',
                    held=text,
                    redraw=was != "json",
                )
        else:
            value, problem = read_json(text)
            if problem:
                return BuilderRead(problem=problem, held=text, redraw=was != "json")
    shown_mode, next_rows = _next(mode, value)
    shown = {f"{key}-mode": "json"} if shown_mode == "json" and mode == "json" else {}
    if shown_mode == "json" and was != "json" and not focus:
        focus = f"f-{key}"  # JSON asked for: its text takes the focus
    if focus:
        shown[f"{key}-focus"] = focus
    redraw = pressed or mode != shown_mode or was != _shape(shown_mode, next_rows)
    return BuilderRead(value, shown=shown, redraw=redraw)


def _next(mode: str, value: Any) -> tuple[str, list[Row]]:
    """The mode the builder shows after saving ``value``, and its rows."""
    if value is None:
        return "unset", []
    fields = read_schema(value)
    if isinstance(fields, Unrepresentable) or mode == "json":
        return "json", []
    assert isinstance(fields, FieldList)
    return "fields", rows_of(fields)


def _edited(key: str, data: Mapping[str, str], rows: list[Row]) -> tuple[list[Row], str] | None:
    """The rows after the button pressed, and the id of the control to focus next."""
    if data.get(f"{key}-add") is not None:
        rows = add_row(rows)
        return rows, f"f-{key}-{len(rows) - 1}-name"
    removed = _index(data, f"{key}-remove")
    if removed is not None:
        rows = remove_row(rows, removed)
        if not rows:
            return rows, f"f-{key}-add"
        return rows, f"f-{key}-{max(0, removed - 1)}-name"
    for name, by in (("up", -1), ("down", 1)):
        index = _index(data, f"{key}-{name}")
        if index is not None:
            moved = move_row(rows, index, by)
            target = index + by if moved != rows else index
            return moved, f"f-{key}-{target}-{name}"
    return None
