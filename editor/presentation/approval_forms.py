"""The form of a gate's card, generated from its ``approval_schema`` (spec 06, *Approval inbox*).

:func:`approval_form` turns the schema recorded in a ``Suspended`` event into fields, pre-filled
from the value that arrived at the gate (*from the run*) or from each field's ``default``
(*proposed*); :func:`read_approval` turns the posted form back into the resume input. The rules
are spec 06's (and the reference inbox's, upstream facts §7):

* a schema with object ``properties`` becomes fields: ``boolean`` → checkbox, non-empty ``enum``
  → select, ``number``/``integer`` → number input, ``string`` with ``maxLength ≥ 200`` →
  textarea, other strings → text, ``array``/``object`` → a small JSON text area; a ``type`` list
  uses its first non-null type; a property with no type at all is a JSON text area too;
* the first required boolean is the *decision*: two buttons instead of a checkbox; the order
  of the fields, the decision's labels, the schema's own ``comment`` and the constraints the
  browser checks are :mod:`editor.presentation.approval_rules`';
* blank optional fields are left out of the input; an unchecked required checkbox is ``false``,
  an unchecked optional one is left out; a decision posted without either button is refused;
* any other schema is one JSON text area, and so is a schema of more than
  :data:`MAX_FIELDS` properties (a card of thousands of fields is megabytes of page, and a
  browser could not post it: Django refuses more than 1,000 fields).

Each field is a :class:`~editor.presentation.fields.FieldView` and a post is read back into a
:class:`~editor.presentation.fields.FormRead`, the types the editor's node form shares. Reading
only converts (a number field must hold a number, a JSON field JSON, through the readers of
:mod:`editor.presentation.typed`): the full schema is checked by
:func:`editor.services.runs.resume` with jsonschema, and :func:`field_errors` puts its
violations (``$.approved``, or ``$`` naming a missing required property) back beside their
fields. Plain Python: no Django here, so the rules are tested in microseconds.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from editor.graph.jsonio import NUL, pretty_json
from editor.presentation.approval_rules import (
    comment_key,
    constraints_of,
    decision_labels,
    ordered_keys,
)
from editor.presentation.fields import FieldView, FormRead
from editor.presentation.typed import (
    NUL_MESSAGE,
    decimal_number,
    read_typed_json,
    whole_number,
)

__all__ = [
    "COMMENT",
    "FALLBACK",
    "MAX_FIELDS",
    "ApprovalForm",
    "approval_form",
    "decision_key",
    "field_errors",
    "field_name",
    "read_approval",
]

#: The posted names: one per property (``field-<key>``), the fallback's text, the comment.
FIELD_PREFIX = "field-"
FALLBACK = "approval-json"
COMMENT = "comment"

#: Strings at least this long (``maxLength``) get a text area (the reference's threshold).
LONG_TEXT = 200
#: The most properties shown as fields; a schema with more gets the JSON text area.
MAX_FIELDS = 200

_REQUIRED = re.compile(r"^'(?P<key>(?:[^'\\]|\\.)*)' is a required property$")


def field_name(key: str) -> str:
    return FIELD_PREFIX + key


@dataclass(frozen=True, slots=True)
class ApprovalForm:
    """The fields (``None``: the schema falls back to :attr:`json_text`), the comment, and
    errors that belong to no field."""

    fields: tuple[FieldView, ...] | None
    json_text: str = ""
    json_source: str = ""
    json_errors: tuple[str, ...] = ()
    comment: str = ""
    errors: tuple[str, ...] = ()
    #: The schema's own comment property, shown instead of the built-in comment.
    comment_key: str | None = None

    @property
    def is_fallback(self) -> bool:
        return self.fields is None

    @property
    def decision(self) -> FieldView | None:
        """The field the form's two buttons set, if it has one."""
        return next((item for item in self.fields or () if item.kind == "decision"), None)

    @property
    def shown_fields(self) -> tuple[FieldView, ...]:
        """The fields shown as controls (the decision is the form's buttons)."""
        return tuple(item for item in self.fields or () if item.kind != "decision")

    @property
    def focus_general(self) -> bool:
        """Whether the focus goes to the form's general errors (no field has one)."""
        return (
            bool(self.errors)
            and not self.json_errors
            and not any(item.errors for item in self.fields or ())
        )


def _properties(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    kind = schema.get("type")
    if kind is not None and kind != "object" and not (isinstance(kind, list) and "object" in kind):
        return None
    return properties


def _type_of(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((item for item in kind if item != "null" and isinstance(item, str)), None)
    return kind if isinstance(kind, str) else None


def _kind_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "json"
    kind = _type_of(schema)
    if kind == "boolean":
        return "checkbox"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "select"
    if kind in {"number", "integer"}:
        return "number"
    if kind == "string":
        max_length = schema.get("maxLength")
        long_text = (
            isinstance(max_length, int)
            and not isinstance(max_length, bool)
            and max_length >= LONG_TEXT
        )
        return "textarea" if long_text else "text"
    return "json"


def _display(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _text_of(kind: str, value: Any) -> str:
    if kind == "json":
        return pretty_json(value)
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return _display(value)
        return str(value)
    return _display(value)


def _layout(schema: Any, decision: bool = True) -> list[tuple[str, Any, bool, str]] | None:
    """``(key, property schema, required, kind)`` for each field, in the order shown; the
    first required boolean is the decision (with ``decision``; else a checkbox like the
    others). ``None`` for a schema that falls back to JSON."""
    properties = _properties(schema)
    if properties is None or len(properties) > MAX_FIELDS:
        return None
    required_list = schema.get("required") if isinstance(schema, dict) else None
    required_list = required_list if isinstance(required_list, list) else []
    required = set(required_list)
    layout = []
    decided = not decision
    for key in ordered_keys(properties, required_list):
        sub = properties[key]
        kind = _kind_of(sub)
        if kind == "checkbox" and key in required and not decided:
            kind, decided = "decision", True
        layout.append((key, sub, key in required, kind))
    return layout


def decision_key(schema: Any) -> str | None:
    """The key of the schema's approve/reject boolean: the first required boolean in the
    order fields are shown, as the card draws it (two buttons), also for a schema whose form
    falls back to JSON for its size. ``None`` when the schema has none: then every answer
    approves (``docs/inbox.md``, *Quorum*)."""
    properties = _properties(schema)
    if properties is None:
        return None
    required_list = schema.get("required") if isinstance(schema, dict) else None
    required_list = required_list if isinstance(required_list, list) else []
    required = set(required_list)
    for key in ordered_keys(properties, required_list):
        if key in required and _kind_of(properties[key]) == "checkbox":
            return key
    return None


def _field(key: str, schema: Any, required: bool, kind: str) -> FieldView:
    """The field of property ``key`` before a value fills it."""
    spec = schema if isinstance(schema, dict) else {}
    title = spec.get("title")
    description = spec.get("description")
    integer = _type_of(spec) == "integer"
    label = title if isinstance(title, str) and title.strip() else key
    made = FieldView(
        key=key,
        kind=kind,
        label=label,
        required=required,
        posted_as=field_name(key),
        help=description if isinstance(description, str) else "",
        step="1" if integer else "any",
        constraints=constraints_of(kind, spec, required=required, integer=integer),
    )
    if kind == "decision":
        yes, no = decision_labels(title if isinstance(title, str) else None)
        return replace(made, yes_label=yes, no_label=no)
    if kind == "select":
        made = replace(
            made,
            choices=tuple((str(index), _display(item)) for index, item in enumerate(spec["enum"])),
        )
    return made


def _filled(made: FieldView, schema: Any, value: Any, has_value: bool) -> FieldView:
    """Field ``made`` filled from the value at the gate, or else from its schema's default."""
    spec = schema if isinstance(schema, dict) else {}
    kind = made.kind
    if kind == "decision":
        return made
    source = ""
    if has_value:
        source = "run"
    elif "default" in spec:
        source, value = "proposed", spec["default"]
    if not source:
        return made
    if kind == "checkbox":
        return replace(made, checked=value is True, source=source)
    if kind == "select":
        for index, item in enumerate(spec["enum"]):
            if item == value and type(item) is type(value):
                return replace(made, selected=str(index), source=source)
        return made
    return replace(made, initial=_text_of(kind, value), source=source)


#: A form's shape: ``(key, property schema, empty field)`` for each field, in the order shown.
_Shape = tuple[tuple[str, Any, FieldView], ...]


def _built_shape(schema: Any, decision: bool) -> _Shape | None:
    layout = _layout(schema, decision)
    if layout is None:
        return None
    return tuple(
        (key, sub, _field(key, sub, required, kind)) for key, sub, required, kind in layout
    )


@functools.lru_cache(maxsize=64)
def _shape_of(text: str, decision: bool) -> _Shape | None:
    return _built_shape(json.loads(text), decision)


def _shape(schema: Any, decision: bool) -> _Shape | None:
    """The fields of ``schema`` before a value fills them, built once per schema (a page of
    cards mostly shows a few gates: each card of a gate has its schema)."""
    try:
        text = json.dumps(schema, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: no key to keep it under
        return _built_shape(schema, decision)
    return _shape_of(text, decision)


def approval_form(schema: Any, value: Any, *, decision: bool = True) -> ApprovalForm:
    """The form of a gate whose ``approval_schema`` is ``schema``, pre-filled from ``value``
    (what arrived at the gate). Without ``decision``, the form of any value the schema
    describes (a test run's sample input): no decision buttons, a checkbox for every
    boolean."""
    shape = _shape(schema, decision)
    if shape is None:
        spec = schema if isinstance(schema, dict) else {}
        if "default" in spec:
            return ApprovalForm(
                None, json_text=pretty_json(spec["default"]), json_source="proposed"
            )
        return ApprovalForm(None)
    arrived = value if isinstance(value, dict) else {}
    fields = tuple(_filled(made, sub, arrived.get(key), key in arrived) for key, sub, made in shape)
    return ApprovalForm(fields, comment_key=comment_key(schema["properties"]))


def _json_value(text: str, key: str, read: FormRead) -> Any:
    """JSON typed by a person, read strictly (no NaN, no repeated keys, nothing unstorable)."""
    value, problem = read_typed_json(text, storable=True)
    if problem is not None:
        read.refuse(key, problem.sentence(), text)
    return value


def read_approval(
    schema: Any, post: Mapping[str, str], *, decision: bool = True
) -> tuple[Any, FormRead]:
    """The resume input a posted card form means, and what could not be read from it.

    ``post`` maps the posted names to their text; ``decision`` as for :func:`approval_form`.
    For a form of fields the input is the read's ``fields`` (what could be read, even beside a
    refused field); the JSON fallback's input is its whole value, or ``None`` when it was
    refused."""
    read = FormRead()
    layout = _layout(schema, decision)
    if layout is None:
        text = str(post.get(FALLBACK, "")).strip()
        if not text:
            read.refuse(FALLBACK, "Enter the approval as JSON.", text)
            return None, read
        value = _json_value(text, FALLBACK, read)
        return (None if read else value), read
    result = read.fields
    for key, sub, required, kind in layout:
        name = field_name(key)
        if kind == "decision":
            posted = str(post.get(name, ""))
            answer = {"true": True, "false": False}.get(posted)
            if answer is None:
                yes, no = decision_labels(sub.get("title") if isinstance(sub, dict) else None)
                read.refuse(key, f"Choose {yes} or {no}.", posted)
            else:
                result[key] = answer
            continue
        if kind == "checkbox":
            if post.get(name):
                result[key] = True
            elif required:
                result[key] = False
            continue
        text = str(post.get(name, ""))
        if kind not in {"text", "textarea"}:
            text = text.strip()
        if text == "":
            if required and kind in {"text", "textarea"}:
                result[key] = ""
            continue
        if kind == "select":
            enum = sub["enum"]
            index = whole_number(text, maximum=len(enum) - 1)
            if index is None:
                read.refuse(key, "Choose one of the options.", text)
            else:
                result[key] = enum[index]
        elif kind == "number":
            number = decimal_number(text, integer=_type_of(sub) == "integer")
            if number is None:
                read.refuse(key, "Enter a number.", text)
            else:
                result[key] = number
        elif kind == "json":
            value = _json_value(text, key, read)
            if key not in read.errors:
                result[key] = value
        elif NUL in text:
            read.refuse(key, NUL_MESSAGE, text)
        else:
            result[key] = text
    return result, read


def field_errors(
    schema: Any, violations: list[dict[str, Any]]
) -> tuple[dict[str, list[str]], list[str]]:
    """jsonschema's violations (``{"path", "message"}``) placed beside their fields:
    ``$.key…`` belongs to ``key``, a missing required property to its field; the rest is
    general. For a fallback form every violation is shown beside the JSON text area."""
    properties = _properties(schema)
    by_field: dict[str, list[str]] = {}
    general: list[str] = []
    for violation in violations:
        path = str(violation.get("path", "$"))
        message = str(violation.get("message", ""))
        if properties is None:
            by_field.setdefault(FALLBACK, []).append(
                f"{path}: {message}" if path != "$" else message
            )
            continue
        key: str | None = None
        if path.startswith("$."):
            rest = path[2:]
            key = next(
                (
                    name
                    for name in sorted(properties, key=len, reverse=True)
                    if rest == name or rest.startswith((f"{name}.", f"{name}["))
                ),
                None,
            )
        elif path == "$":
            match = _REQUIRED.match(message)
            if match and match["key"] in properties:
                key = match["key"]
                message = "This field is required."
        if key is None:
            general.append(f"{path}: {message}" if path != "$" else message)
        else:
            by_field.setdefault(str(key), []).append(message)
    return by_field, general


def with_post(form: ApprovalForm, schema: Any, post: Mapping[str, str]) -> ApprovalForm:
    """The form again with what was posted in it (after an error): nothing typed is lost."""
    comment = str(post.get(COMMENT, ""))
    if form.fields is None:
        return replace(form, json_text=str(post.get(FALLBACK, "")), json_source="", comment=comment)
    fields = []
    for item in form.fields:
        name = item.name
        if item.kind == "decision":
            fields.append(item)
        elif item.kind == "checkbox":
            fields.append(replace(item, checked=bool(post.get(name)), source=""))
        elif item.kind == "select":
            fields.append(replace(item, selected=str(post.get(name, "")), source=""))
        else:
            fields.append(replace(item, initial=str(post.get(name, "")), source=""))
    return replace(form, fields=tuple(fields), comment=comment)


def with_errors(
    form: ApprovalForm, errors: dict[str, list[str]], general: list[str]
) -> ApprovalForm:
    """The form with errors beside its fields (keys of ``errors``) and above them."""
    if form.fields is None:
        return replace(form, json_errors=tuple(errors.get(FALLBACK, [])), errors=tuple(general))
    fields = [replace(item, errors=tuple(errors.get(item.key, []))) for item in form.fields]
    # The focus goes to the first field with an error in the order the card shows them: the
    # controls, then the decision's buttons at the end of the form.
    shown = sorted(range(len(fields)), key=lambda index: fields[index].kind == "decision")
    first = next((index for index in shown if fields[index].errors), None)
    if first is not None:
        fields[first] = replace(fields[first], focus=True)
    return replace(form, fields=tuple(fields), errors=tuple(general))
