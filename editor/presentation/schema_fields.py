"""A JSON Schema as a list of fields, and back: what the editor's schema builder shows and writes.

A gate's ``approval_schema``, a node's ``input_schema`` and ``output_schema`` (and a fold's
``accumulator_schema``) are mostly an object of named fields. :func:`read_schema` turns such a
schema into a :class:`FieldList` — each field's name, title, type, whether it is required, its
default, its choices (``enum``), its bounds (``minimum``/``maximum`` for numbers,
``minLength``/``maxLength`` for text), its ``pattern``, its description and its order (the
``x-order`` hint the inbox reads) — and :func:`write_schema` writes one back. A schema the list
cannot show exactly is :class:`Unrepresentable`, with the reason in words: the builder keeps it,
edited as JSON.

**The round trip is exact.** Every schema :func:`read_schema` accepts comes back from
:func:`write_schema` with the same canonical JSON, and so does the text a form shows for it
(:func:`rows_of`, read back by :func:`read_rows`): the node form posts every field as the person
types anywhere in it, so a schema must not change because its form was posted. Anything that
would not come back the same (a key the list has no place for, an empty title, a default of
another type, a float the text would round) makes the schema unrepresentable instead.

**Order.** The inbox shows required fields first, then each group by the ``x-order`` hints, then
by the position in ``required``, then by name (:func:`~.approval_rules.ordered_keys`). A field
list is in that order; :func:`write_schema` writes the ``required`` list and the hints so that
the inbox shows the list's order (required first): as they were when that still holds, else
without hints when the ``required`` list and the names give the order, else with the hints the
fields had, else with every field numbered.

Plain Python, no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from editor.graph.jsonio import canonical_json, pretty_json
from editor.presentation.approval_rules import is_number, ordered_keys
from editor.presentation.typed import decimal_number, read_typed_json, whole_number

__all__ = [
    "MAX_FIELDS",
    "NO_DEFAULT",
    "PARTS",
    "TYPES",
    "TYPE_WORDS",
    "FieldList",
    "Row",
    "RowProblem",
    "SchemaField",
    "Unrepresentable",
    "add_row",
    "applies",
    "move_row",
    "read_rows",
    "read_schema",
    "remove_row",
    "rows_of",
    "write_schema",
]

#: The types a field may have, in the order the builder offers them, and their words.
TYPES: Final = ("string", "number", "integer", "boolean", "array", "object")
TYPE_WORDS: Final = {
    "string": "Text",
    "number": "Number",
    "integer": "Whole number",
    "boolean": "Yes or no",
    "array": "List (JSON)",
    "object": "Object (JSON)",
}
#: The parts of a field as a form posts them (one text each; ``required`` is a check box).
PARTS: Final = (
    "name",
    "title",
    "type",
    "required",
    "default",
    "enum",
    "minimum",
    "maximum",
    "min_length",
    "max_length",
    "pattern",
    "description",
    "order",
)
#: The most fields a list holds (a gate's card shows at most as many: approval_forms).
MAX_FIELDS: Final = 200

#: The parts only some types have; every type has a name, title, required, default,
#: description and order.
_ONLY_FOR: Final = {
    "enum": {"string", "number", "integer"},
    "minimum": {"number", "integer"},
    "maximum": {"number", "integer"},
    "min_length": {"string"},
    "max_length": {"string"},
    "pattern": {"string"},
}
#: A property's keys in JSON Schema, by part.
_KEYWORD: Final = {
    "title": "title",
    "description": "description",
    "default": "default",
    "enum": "enum",
    "minimum": "minimum",
    "maximum": "maximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "pattern": "pattern",
    "order": "x-order",
}
_PART_OF: Final = {keyword: part for part, keyword in _KEYWORD.items()}
_TOP_KEYS: Final = frozenset({"type", "properties", "required"})


def applies(kind: str, part: str) -> bool:
    """Whether a field of type ``kind`` has ``part`` (its choices, bounds, length, pattern)."""
    return kind in _ONLY_FOR.get(part, TYPES)


class _NoDefault:
    """A field without a default (``None`` is a default: JSON's ``null``)."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One property of an object schema, as the builder shows it."""

    name: str
    type: str = "string"
    required: bool = False
    title: str | None = None
    description: str | None = None
    default: Any = NO_DEFAULT
    enum: tuple[Any, ...] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    #: The ``x-order`` hint, when the schema has one.
    order: int | float | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True, slots=True)
class FieldList:
    """An object schema's fields in the order the inbox shows them, and its ``required`` list
    as it was written (kept by :func:`write_schema` while it still gives that order)."""

    fields: tuple[SchemaField, ...] = ()
    required_order: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Unrepresentable:
    """A schema the field list cannot show exactly, and why, in words that follow "it"."""

    reason: str


# --- Schema → fields ------------------------------------------------------------------------


def _single_line(text: Any) -> bool:
    return isinstance(text, str) and text != "" and "\n" not in text and "\r" not in text


def _names(keys: Sequence[str]) -> str:
    shown = [f"`{key}`" for key in sorted(keys)]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _property(name: str, spec: Any, required: bool) -> SchemaField | Unrepresentable:
    where = f"the field `{name}`"
    if not isinstance(spec, dict):
        return Unrepresentable(f"describes {where} with something other than an object")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        return Unrepresentable(f"gives {where} no single type the fields offer")
    unknown = [
        key
        for key in spec
        if key != "type" and (key not in _PART_OF or not applies(kind, _PART_OF[key]))
    ]
    if unknown:
        return Unrepresentable(f"uses {_names(unknown)} in {where}, which the fields cannot show")
    parts: dict[str, Any] = {"name": name, "type": kind, "required": required}
    for key in ("title", "pattern"):
        if key in spec:
            if not _single_line(spec[key]):
                return Unrepresentable(f"has a `{key}` in {where} that is empty or not one line")
            parts[key] = spec[key]
    if "description" in spec:
        text = spec["description"]
        # A text area drops a first line break, and posts every break as CR LF.
        if not isinstance(text, str) or text == "" or "\r" in text or text.startswith("\n"):
            return Unrepresentable(f"has a `description` in {where} that is empty or not text")
        parts["description"] = text
    if "default" in spec:
        if not _fits(kind, spec["default"]):
            return Unrepresentable(f"has a default in {where} that is not of its type")
        parts["default"] = spec["default"]
    if "enum" in spec:
        values = spec["enum"]
        if not isinstance(values, list) or not values or not all(_choice(kind, v) for v in values):
            return Unrepresentable(f"has choices (`enum`) in {where} the fields cannot show")
        parts["enum"] = tuple(values)
    for part in ("minimum", "maximum", "order"):
        keyword = _KEYWORD[part]
        if keyword in spec:
            if not is_number(spec[keyword]):
                return Unrepresentable(f"has a `{keyword}` in {where} that is not a number")
            parts[part] = spec[keyword]
    for part in ("min_length", "max_length"):
        keyword = _KEYWORD[part]
        if keyword in spec:
            value = spec[keyword]
            if type(value) is not int or value < 0:
                return Unrepresentable(f"has a `{keyword}` in {where} that is not a count")
            parts[part] = value
    return SchemaField(**parts)


def _fits(kind: str, value: Any) -> bool:
    """Whether ``value`` is a default the builder shows for a field of type ``kind``."""
    if kind == "string":
        return _single_line(value)
    if kind == "number":
        return is_number(value)
    if kind == "integer":
        return type(value) is int
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, list if kind == "array" else dict)


def _choice(kind: str, value: Any) -> bool:
    if kind == "string":
        return _single_line(value) and value == value.strip()
    return _fits(kind, value)


def read_schema(schema: Any) -> FieldList | Unrepresentable:
    """The fields of ``schema``, or why the field list cannot show it exactly."""
    if not isinstance(schema, dict):
        return Unrepresentable("is not an object schema")
    extra = [key for key in schema if key not in _TOP_KEYS]
    if extra:
        return Unrepresentable(f"uses {_names(extra)}, which the fields cannot show")
    if schema.get("type") != "object":
        return Unrepresentable('does not say `"type": "object"`')
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or ("properties" in schema and not properties):
        return Unrepresentable("has a `properties` that lists no field")
    if len(properties) > MAX_FIELDS:
        return Unrepresentable(f"has more than {MAX_FIELDS} fields")
    required = schema.get("required", [])
    if (
        not isinstance(required, list)
        or ("required" in schema and not required)
        or not all(isinstance(key, str) and key in properties for key in required)
        or len(set(required)) != len(required)
    ):
        return Unrepresentable("has a `required` list that is not a list of its fields, once each")
    for name in properties:
        if not name or name != name.strip() or "\n" in name or "\r" in name:
            return Unrepresentable(f"has a field named {name!r}, which a name box cannot hold")
    fields = []
    for name in ordered_keys(properties, required):
        made = _property(name, properties[name], name in required)
        if isinstance(made, Unrepresentable):
            return made
        fields.append(made)
    found = FieldList(tuple(fields), tuple(required))
    # The guard of the round trip: the fields' text, read back and written, is this schema.
    again, problems = read_rows(rows_of(found), found.required_order)
    if problems:
        return Unrepresentable(f"has what the fields would refuse: {problems[0].sentence()}")
    if canonical_json(write_schema(again)) != canonical_json(schema):
        return Unrepresentable("holds values the fields cannot show exactly")
    return found


# --- Fields → schema ------------------------------------------------------------------------


def _property_of(item: SchemaField, order: int | float | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": item.type}
    for part in ("title", "description", "enum", "minimum", "maximum"):
        value = getattr(item, part)
        if value is not None:
            spec[_KEYWORD[part]] = list(value) if part == "enum" else value
    for part in ("min_length", "max_length", "pattern"):
        value = getattr(item, part)
        if value is not None:
            spec[_KEYWORD[part]] = value
    if item.has_default:
        spec["default"] = item.default
    if order is not None:
        spec["x-order"] = order
    return spec


#: How :func:`write_schema` writes the order hints: as they are, none, or every field numbered.
_KEEP, _NONE, _NUMBERED = "keep", "none", "numbered"


def _built(fields: Sequence[SchemaField], required: Sequence[str], hints: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if fields:
        schema["properties"] = {
            item.name: _property_of(
                item, {_KEEP: item.order, _NONE: None, _NUMBERED: position}[hints]
            )
            for position, item in enumerate(fields, start=1)
        }
    if required:
        schema["required"] = list(required)
    return schema


def write_schema(fields: FieldList) -> dict[str, Any]:
    """The JSON Schema of ``fields``, whose form shows them in the list's order (required
    fields first: the inbox puts them first whatever the hints say)."""
    listed = fields.fields
    wanted = [item.name for item in listed if item.required]
    wanted += [item.name for item in listed if not item.required]
    required = [item.name for item in listed if item.required]
    # As it was first (so that a schema read and written again is the same), then with as
    # little as gives the order: no hints, the hints it had, every field numbered.
    tries: list[tuple[Sequence[str], str]] = []
    if sorted(fields.required_order) == sorted(required):
        tries += [(fields.required_order, _KEEP), (fields.required_order, _NONE)]
    tries += [(required, _NONE), (required, _KEEP), (required, _NUMBERED)]
    for required_list, hints in tries:
        schema = _built(listed, required_list, hints)
        if ordered_keys(schema.get("properties", {}), list(required_list)) == wanted:
            return schema
    return _built(listed, required, _NUMBERED)


# --- Fields as a form's text ----------------------------------------------------------------

#: One field as a form shows and posts it: a text per part (``required``: ``"on"`` or ``""``).
Row = dict[str, str]


def _number_text(value: Any) -> str:
    return str(value) if type(value) is int else repr(float(value))


def _value_text(kind: str, value: Any) -> str:
    if kind == "string":
        return str(value)
    if kind in ("number", "integer"):
        return _number_text(value)
    if kind == "boolean":
        return "true" if value else "false"
    return pretty_json(value)


def rows_of(fields: FieldList) -> list[Row]:
    """The text a form shows for each field, in the list's order."""
    rows = []
    for item in fields.fields:
        row = dict.fromkeys(PARTS, "")
        row.update(name=item.name, type=item.type, required="on" if item.required else "")
        row["title"] = item.title or ""
        row["description"] = item.description or ""
        row["pattern"] = item.pattern or ""
        if item.has_default:
            row["default"] = _value_text(item.type, item.default)
        if item.enum is not None:
            row["enum"] = "\n".join(_value_text(item.type, value) for value in item.enum)
        for part in ("minimum", "maximum", "order"):
            value = getattr(item, part)
            if value is not None:
                row[part] = _number_text(value)
        for part in ("min_length", "max_length"):
            value = getattr(item, part)
            if value is not None:
                row[part] = str(value)
        rows.append(row)
    return rows


@dataclass(frozen=True, slots=True)
class RowProblem:
    """What is wrong with one part of one row (``index`` from 0), said for a person."""

    index: int
    part: str
    message: str
    name: str = ""

    def phrase(self) -> str:
        """The problem in a phrase: ``field 2 (`amount`): the default needs a number``."""
        who = f"field {self.index + 1}" + (f" (`{self.name}`)" if self.name else "")
        return f"{who}: {self.message}"

    def sentence(self) -> str:
        phrase = self.phrase()
        return f"{phrase[0].upper()}{phrase[1:]}."


@dataclass
class _RowRead:
    problems: list[RowProblem] = field(default_factory=list)

    def refuse(self, index: int, part: str, message: str, name: str) -> None:
        self.problems.append(RowProblem(index, part, message, name))


def _lines(text: str) -> str:
    """A text area's text as typed: browsers post its line breaks as CR LF."""
    return text.replace("\r\n", "\n")


def _read_value(kind: str, text: str) -> tuple[Any, str]:
    """A default or a choice typed for a field of type ``kind``, or why it cannot be."""
    if kind == "string":
        return text, ""
    if kind in ("number", "integer"):
        number = decimal_number(text.strip(), integer=kind == "integer")
        if number is None or (kind == "integer" and type(number) is not int):
            return None, "needs a whole number" if kind == "integer" else "needs a number"
        return number, ""
    if kind == "boolean":
        if text not in ("true", "false"):
            return None, "needs yes or no"
        return text == "true", ""
    value, problem = read_typed_json(text, storable=True)
    if problem is not None:
        return None, f"is not JSON: {problem.error}"
    if not isinstance(value, list if kind == "array" else dict):
        return None, "needs a JSON list, like [1, 2]" if kind == "array" else (
            'needs a JSON object, like {"a": 1}'
        )
    return value, ""


def _read_row(index: int, row: Mapping[str, str], read: _RowRead) -> SchemaField:
    name = str(row.get("name", "")).strip()
    kind = str(row.get("type", "string"))
    if kind not in TYPES:
        read.refuse(index, "type", "needs one of the types offered", name)
        kind = "string"
    made = SchemaField(name, kind, bool(row.get("required")))
    title = str(row.get("title", ""))
    # A text area drops a first line break when it is drawn: a description never starts
    # with one, so that what is saved is what the form shows next time.
    description = _lines(str(row.get("description", ""))).lstrip("\n")
    made = replace(made, title=title or None, description=description or None)
    default = str(row.get("default", ""))
    if kind in ("array", "object"):
        default = _lines(default).strip()
    if default != "":
        value, why = _read_value(kind, default)
        if why:
            read.refuse(index, "default", f"the default {why}", name)
        else:
            made = replace(made, default=value)
    if applies(kind, "enum"):
        choices = [line.strip() for line in _lines(str(row.get("enum", ""))).split("\n")]
        values = []
        for choice in (line for line in choices if line):
            value, why = _read_value(kind, choice)
            if why:
                read.refuse(index, "enum", f"the choice “{choice}” {why}", name)
            values.append(value)
        made = replace(made, enum=tuple(values) if values else None)
    for part, words in (("minimum", "smallest"), ("maximum", "largest")):
        text = str(row.get(part, "")).strip()
        if applies(kind, part) and text:
            number = decimal_number(text, integer=False)
            if number is None:
                read.refuse(index, part, f"the {words} value needs a number", name)
            if part == "minimum":
                made = replace(made, minimum=number)
            else:
                made = replace(made, maximum=number)
    for part, words in (("min_length", "shortest"), ("max_length", "longest")):
        text = str(row.get(part, "")).strip()
        if applies(kind, part) and text:
            count = whole_number(text)
            if count is None:
                read.refuse(index, part, f"the {words} length needs a whole number", name)
            if part == "min_length":
                made = replace(made, min_length=count)
            else:
                made = replace(made, max_length=count)
    pattern = str(row.get("pattern", ""))
    if applies(kind, "pattern") and pattern:
        made = replace(made, pattern=pattern)
    order = str(row.get("order", "")).strip()
    if order:
        made = replace(made, order=decimal_number(order, integer=False))
    if made.minimum is not None and made.maximum is not None and made.minimum > made.maximum:
        read.refuse(index, "minimum", "the smallest value is above the largest", name)
    if (
        made.min_length is not None
        and made.max_length is not None
        and made.min_length > made.max_length
    ):
        read.refuse(index, "min_length", "the shortest length is above the longest", name)
    return made


def read_rows(
    rows: Sequence[Mapping[str, str]], required_order: Sequence[str] = ()
) -> tuple[FieldList, list[RowProblem]]:
    """The fields a form's rows mean (in their order), and what is wrong with them (a row
    with a problem is read as far as it can be; the caller saves nothing then)."""
    read = _RowRead()
    if len(rows) > MAX_FIELDS:
        read.refuse(MAX_FIELDS, "name", f"a schema here holds at most {MAX_FIELDS} fields", "")
    fields = [_read_row(index, row, read) for index, row in enumerate(rows[:MAX_FIELDS])]
    first: dict[str, int] = {}
    for index, item in enumerate(fields):
        if not item.name:
            read.refuse(index, "name", "needs a name", "")
        elif item.name in first:
            number = first[item.name] + 1
            read.refuse(index, "name", f"the name is used by field {number} too", item.name)
        else:
            first[item.name] = index
    problems = sorted(read.problems, key=lambda problem: problem.index)
    return FieldList(tuple(fields), tuple(required_order)), problems


# --- Editing the rows -------------------------------------------------------------------------


def add_row(rows: Sequence[Row]) -> list[Row]:
    """``rows`` and a new text field after them, named ``field<n>`` (a name not taken)."""
    taken = {str(row.get("name", "")).strip() for row in rows}
    number = len(rows) + 1
    while f"field{number}" in taken:
        number += 1
    new = dict.fromkeys(PARTS, "")
    new.update(name=f"field{number}", type="string")
    return [*rows, new]


def remove_row(rows: Sequence[Row], index: int) -> list[Row]:
    return [row for position, row in enumerate(rows) if position != index]


def move_row(rows: Sequence[Row], index: int, by: int) -> list[Row]:
    """``rows`` with the row at ``index`` moved ``by`` places (-1: up, 1: down), when it can
    move there."""
    moved = list(rows)
    target = index + by
    if 0 <= index < len(moved) and 0 <= target < len(moved):
        moved[index], moved[target] = moved[target], moved[index]
    return moved
